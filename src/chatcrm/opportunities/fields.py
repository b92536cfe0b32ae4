"""Opportunity fields: which may be written, and the validator of each (contract B.2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatcrm.core import values as v

WIN_LOSS = (0, 1, 2)  # ours: 0 open, 1 won, 2 lost
OPEN, WON, LOST = WIN_LOSS
STATUS_OPEN, STATUS_CLOSED = 1, 2  # opportStatus (ours)
ACTIVE, DELETED = 1, 2  # statusId (ours)
CREATED_BY_API = 1  # creationTypeId (ours): 1 API, 2 import, 3 console
ACTIVITY_CATEGORIES = ("Calls", "Meeting", "Whatsapp", "Email")

UPDATABLE: tuple[str, ...] = (
    "name",
    "description",
    "amount",
    "stageId",
    "assignedAgentId",
    "expirationDate",
    "contactId",
    "segmentationId",
    "winLossStatus",
    "finalAmount",
    "orderInCards",
    "files",
)

# Fields whose columns follow from the request alone: an update of only these is a single
# UPDATE … RETURNING (see service._update_directly).
DIRECT = frozenset(
    {
        "name",
        "description",
        "amount",
        "finalAmount",
        "expirationDate",
        "files",
        "orderInCards",
        "winLossStatus",
    }
)

READ_ONLY = frozenset(
    {
        "id",
        "opportCode",
        "opportStatus",
        "winLossDate",
        "creationDate",
        "creationTypeId",
        "updatedDate",
        "deletionDate",
        "userDeletion",
        "statusId",
        "orderInCardsLastUpdated",
        "activities",
        "workspaceId",
        "userCreation",
    }
)


def _contact_ref(field: str, value: object) -> str | None:
    """`""` or null unlinks; anything else must name a live contact (checked later)."""
    return v.reference(field, value, nullable=True)


VALIDATORS: dict[str, Callable[[str, Any], Any]] = {
    "name": lambda f, x: v.required_text(f, x),
    "description": lambda f, x: v.text(f, x, max_len=v.TEXT_MAX),
    "amount": v.money,
    "finalAmount": v.money,
    "stageId": lambda f, x: v.reference(f, x, nullable=False),
    "assignedAgentId": lambda f, x: v.reference(f, x),
    "assignedComercialId": lambda f, x: v.reference(f, x),
    "expirationDate": lambda f, x: v.timestamp(f, x),
    "contactId": _contact_ref,
    "segmentationId": lambda f, x: v.reference(f, x),
    "winLossStatus": lambda f, x: v.choice(f, x, WIN_LOSS),
    "orderInCards": lambda f, x: v.integer(f, x),
    "files": v.files,
}

CREATE_FIELDS = frozenset(
    {
        "name",
        "amount",
        "description",
        "assignedComercialId",
        "assignedAgentId",
        "contactId",
        "stageId",
        "expirationDate",
        "segmentationId",
        # accepted on create too, with the same rules as on update
        "finalAmount",
        "files",
    }
)


def validate(
    names: list[str] | tuple[str, ...], body: dict[str, Any]
) -> tuple[dict[str, Any], list[v.FieldError]]:
    return v.validate_fields(VALIDATORS, names, body)
