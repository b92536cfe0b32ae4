"""Contact fields: which may be written, and the validator of each (contract B.1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatcrm.core import values as v

PLATFORMS = (1, 2, 3, 4, 5, 6, 7)  # Webchat, WhatsApp, Messenger, Instagram, Telegram, Portal, API
PLATFORM_WHATSAPP = 2
PLATFORM_API = 7

# Update Contact: the original list, then ours; `solvedByAgentId` only together with isSolved.
UPDATABLE: tuple[str, ...] = (
    "name",
    "lastname",
    "email",
    "stageId",
    "segmentationId",
    "assignedAgentId",
    "isBotEnabled",
    "isRead",
    "isSolved",
    "solvedByAgentId",
    "tags",
    "orderInCards",
    "avatarColor",
    "variables",
    "files",
    "internalWhatsappNumber",
    "lastMessage",
)

# Fields whose columns follow from the request alone: an update of only these is a single
# UPDATE … RETURNING (see service._update_directly).
DIRECT = frozenset(
    {
        "name",
        "lastname",
        "email",
        "isBotEnabled",
        "isRead",
        "avatarColor",
        "internalWhatsappNumber",
        "lastMessage",
        "orderInCards",
        "files",
    }
)

READ_ONLY = frozenset(
    {
        "id",
        "creationDate",
        "assignedAgentName",
        "lastMessageDate",
        "platformSenderId",
        "platformSenderName",
        "platformSenderPhone",
        "isManuallyAdded",
        "orderInCardsLastUpdated",
        "solvedDate",
        "workspaceId",
        "platformId",
    }
)

Validator = Callable[[str, Any], Any]


def _optional_phone(field: str, value: object) -> str | None:
    return None if value is None else (v.phone(field, value) or None)


VALIDATORS: dict[str, Validator] = {
    "name": lambda f, x: v.required_text(f, x),
    "lastname": lambda f, x: v.text(f, x),
    "email": lambda f, x: v.email(f, x),
    "stageId": lambda f, x: v.reference(f, x, nullable=False),
    "segmentationId": lambda f, x: v.reference(f, x),
    "assignedAgentId": lambda f, x: v.reference(f, x),
    "solvedByAgentId": lambda f, x: v.reference(f, x),
    "isBotEnabled": v.boolean,
    "isRead": v.boolean,
    "isSolved": v.boolean,
    "tags": v.tag_ids,
    "orderInCards": lambda f, x: v.integer(f, x),
    "avatarColor": lambda f, x: v.text(f, x, nullable=True),
    "variables": v.variables,
    "files": v.files,
    "internalWhatsappNumber": lambda f, x: v.phone(f, x),
    "phone": lambda f, x: v.phone(f, x),  # create-only alias of internalWhatsappNumber
    "lastMessage": lambda f, x: v.text(f, x, max_len=v.TEXT_MAX, nullable=True),
    # create-only
    "platformId": lambda f, x: v.choice(f, x, PLATFORMS),
    "platformSenderId": lambda f, x: v.text(f, x, nullable=True),
    "platformSenderName": lambda f, x: v.text(f, x),
    "platformSenderPhone": lambda f, x: _optional_phone(f, x),
}

CREATE_FIELDS = frozenset(
    {
        "name",
        "lastname",
        "email",
        "platformId",
        "internalWhatsappNumber",
        "phone",
        "stageId",
        "segmentationId",
        "assignedAgentId",
        "tags",
        "variables",
        # accepted on create too, with the same rules as on update
        "isBotEnabled",
        "isRead",
        "avatarColor",
        "files",
        "lastMessage",
        "platformSenderId",
        "platformSenderName",
        "platformSenderPhone",
    }
)


def validate(
    names: list[str] | tuple[str, ...], body: dict[str, Any]
) -> tuple[dict[str, Any], list[v.FieldError]]:
    return v.validate_fields(VALIDATORS, names, body)
