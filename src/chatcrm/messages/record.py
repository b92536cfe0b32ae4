"""The message record of contract K.1: its keys in order, its values, and the text a
contact's `lastMessage` shows for it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcrm.core.jsontext import load_exact
from chatcrm.core.timestamps import iso
from chatcrm.core.values import TEXT_MAX
from chatcrm.records.types import Schema

IN, OUT = "in", "out"
DIRECTIONS = (IN, OUT)
TYPES = (
    "text",
    "image",
    "audio",
    "video",
    "document",
    "sticker",
    "location",
    "interactive",
    "button",
    "template",
    "reaction",
    "unsupported",
)
MEDIA_TYPES = ("image", "audio", "video", "document", "sticker")
RECEIVED = "received"
QUEUED, SENT, DELIVERED, READ, FAILED = "queued", "sent", "delivered", "read", "failed"
STATUSES = (RECEIVED, QUEUED, SENT, DELIVERED, READ, FAILED)
# Outbound statuses only move forward (K.1); `failed` only from queued or sent.
RANK = {QUEUED: 0, SENT: 1, DELIVERED: 2, READ: 3}
WHATSAPP = 2  # the platformId of B.1
# Limits of K.5.
SEND_TEXT_MAX = 4096
STORED_TEXT_MAX = 65536
UNKNOWN_OUTCOME = "UNKNOWN_OUTCOME"

KEYS = (
    "id",
    "workspaceId",
    "contactId",
    "direction",
    "channel",
    "type",
    "text",
    "media",
    "location",
    "status",
    "error",
    "externalId",
    "replyToId",
    "sentBy",
    "createdAt",
    "statusAt",
)


def in_key_order(names: list[str]) -> list[str]:
    """Changed fields as D.1 lists them: in the record's key order."""
    return [key for key in KEYS if key in names]


def moves_forward(current: str, new: str) -> bool:
    """Whether an outbound message at `current` may take status `new` (K.1)."""
    if current == new or current in (FAILED, RECEIVED):
        return False
    if new == FAILED:
        return current in (QUEUED, SENT)
    return new in RANK and RANK[new] > RANK.get(current, 99)


def _json(value: str | None) -> Any:
    return None if value is None else load_exact(value)


def wire(row: Mapping[str, Any]) -> dict[str, Any]:
    """A stored row as the record, keys in contract order."""
    return {
        "id": row["id"],
        "workspaceId": row["workspace_id"],
        "contactId": row["contact_id"],
        "direction": row["direction"],
        "channel": row["channel"],
        "type": row["type"],
        "text": row["text"],
        "media": _json(row["media"]),
        "location": _json(row["location"]),
        "status": row["status"],
        "error": _json(row["error"]),
        "externalId": row["external_id"],
        "replyToId": row["reply_to_id"],
        "sentBy": _json(row["sent_by"]),
        "createdAt": iso(row["created_at"]),
        "statusAt": iso(row["status_at"]),
    }


def preview(message_type: str, text: str | None) -> str:
    """What the contact's `lastMessage` shows: the text, else `[image]`, `[audio]`…

    A message may hold up to 65,536 characters, the contact's field only TEXT_MAX: the
    text is cut there, so the contact stays one its own clients (and an import of its
    export) accept."""
    return text[:TEXT_MAX] if text else f"[{message_type}]"


def _nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


_STRING = {"type": "string"}
SCHEMA: Schema = {
    "type": "object",
    "properties": {
        "id": _STRING,
        "workspaceId": _STRING,
        "contactId": _STRING,
        "direction": {"type": "string", "enum": list(DIRECTIONS)},
        "channel": {"type": "integer", "description": "A platformId (2: WhatsApp)."},
        "type": {"type": "string", "enum": list(TYPES)},
        "text": _nullable(_STRING),
        "media": _nullable(
            {
                "type": "object",
                "properties": {
                    "id": _STRING,
                    "mimeType": _nullable(_STRING),
                    "caption": _nullable(_STRING),
                    "fileName": _nullable(_STRING),
                },
            }
        ),
        "location": _nullable(
            {
                "type": "object",
                "properties": {
                    "latitude": {"type": "number"},
                    "longitude": {"type": "number"},
                    "name": _nullable(_STRING),
                    "address": _nullable(_STRING),
                },
            }
        ),
        "status": {"type": "string", "enum": list(STATUSES)},
        "error": _nullable(
            {
                "type": "object",
                "properties": {
                    "code": {"anyOf": [{"type": "integer"}, _STRING]},
                    "title": _nullable(_STRING),
                },
            }
        ),
        "externalId": _nullable(_STRING),
        "replyToId": _nullable(_STRING),
        "sentBy": _nullable({"type": "object"}),
        "createdAt": {"type": "string", "format": "date-time"},
        "statusAt": {"type": "string", "format": "date-time"},
    },
    "required": list(KEYS),
    "additionalProperties": False,
}
