"""What Meta's webhook brings (contract K.2), applied in the caller's transaction: each
message of each `messages` change for this channel's number, with its sender's contact
found or created, and each status of a message we sent, forward only.

A wamid the workspace already holds changes nothing. Two deliveries of one message racing
each other meet at the unique index on (workspace, external id): the loser's transaction
fails with UniqueViolation, the route rolls it back and applies the delivery again, and
this time finds the message stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from chatcrm.contacts import repository as contacts_repo
from chatcrm.contacts.kind import CONTACT
from chatcrm.core.phone import PhoneError, normalize_phone
from chatcrm.core.timestamps import utcnow
from chatcrm.core.values import NAME_MAX
from chatcrm.db.database import Connection, Row
from chatcrm.messages import repository as messages_repo
from chatcrm.messages.record import (
    FAILED,
    IN,
    MEDIA_TYPES,
    RANK,
    RECEIVED,
    STORED_TEXT_MAX,
    TYPES,
    WHATSAPP,
)
from chatcrm.messages.service import NewMessage, apply_status, store
from chatcrm.records import writing
from chatcrm.records.visibility import restrict


@dataclass
class Applied:
    messages: int = 0  # stored now (duplicates not counted)
    statuses: int = 0  # applied now (unknown or backwards ones not counted)


def actor(channel: Mapping[str, Any]) -> dict[str, Any]:
    """Who acts for what a channel brings (J.4)."""
    return {"type": "channel", "id": channel["id"], "name": channel["name"]}


def _items(value: object, key: str) -> list[dict[str, Any]]:
    found = value.get(key) if isinstance(value, dict) else None
    return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _time(value: object, default: datetime) -> datetime:
    try:
        return datetime.fromtimestamp(int(str(value)), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return default


async def apply(conn: Connection, channel: Row, payload: object) -> Applied:
    """Apply one delivery (a parsed JSON body); raises UniqueViolation on a racing
    duplicate (see the module docstring)."""
    restrict(None)  # no caller: nothing is hidden from a channel
    conn.actor = actor(channel)
    await conn.begin()
    applied = Applied()
    now = utcnow()
    for entry in _items(payload, "entry"):
        for change in _items(entry, "changes"):
            value = change.get("value")
            if change.get("field") != "messages" or not isinstance(value, dict):
                continue
            metadata = value.get("metadata")
            if not isinstance(metadata, dict):
                continue
            if str(metadata.get("phone_number_id")) != channel["phone_number_id"]:
                continue
            names = {
                str(c.get("wa_id")): _str((c.get("profile") or {}).get("name"))
                for c in _items(value, "contacts")
            }
            for message in _items(value, "messages"):
                applied.messages += await _message(conn, channel, message, names, now)
            for status in _items(value, "statuses"):
                applied.statuses += await _status(conn, channel["workspace_id"], status, now)
    return applied


def _content(message: dict[str, Any]) -> tuple[str, str | None, Any, Any]:
    """(type, text, media, location) of an inbound message, as K.1 keeps them."""
    kind = message.get("type")
    kind = kind if isinstance(kind, str) and kind in TYPES else "unsupported"
    found = message.get(kind)
    body: dict[str, Any] = found if isinstance(found, dict) else {}
    text = media = location = None
    if kind == "text":
        text = _str(body.get("body"))
    elif kind in MEDIA_TYPES:
        text = _str(body.get("caption"))
        if _str(body.get("id")):
            media = {
                "id": body["id"],
                "mimeType": _str(body.get("mime_type")),
                "caption": text,
                "fileName": _str(body.get("filename")),
            }
    elif kind == "location":
        try:
            location = {
                "latitude": float(body["latitude"]),
                "longitude": float(body["longitude"]),
                "name": _str(body.get("name")),
                "address": _str(body.get("address")),
            }
        except (KeyError, TypeError, ValueError):
            location = None
    elif kind == "interactive":
        reply = body.get("button_reply") or body.get("list_reply") or {}
        text = _str(reply.get("title")) if isinstance(reply, dict) else None
    elif kind == "button":
        text = _str(body.get("text"))
    elif kind == "reaction":
        text = _str(body.get("emoji"))
    if text is not None and len(text) > STORED_TEXT_MAX:
        text = text[:STORED_TEXT_MAX]
    return kind, text, media, location


async def _message(
    conn: Connection,
    channel: Row,
    message: dict[str, Any],
    names: dict[str, str | None],
    now: datetime,
) -> int:
    workspace_id = channel["workspace_id"]
    wamid, sender = _str(message.get("id")), _str(message.get("from"))
    if wamid is None or sender is None:
        return 0
    if await messages_repo.by_external_id(conn, workspace_id, wamid) is not None:
        return 0  # a duplicate delivery: nothing changes
    try:
        number = normalize_phone(sender)
    except PhoneError:
        return 0
    contact_id = await _contact(conn, workspace_id, number, sender, names.get(sender), channel)
    kind, text, media, location = _content(message)
    reply_to = None
    context = message.get("context")
    if isinstance(context, dict) and _str(context.get("id")):
        replied = await messages_repo.by_external_id(conn, workspace_id, context["id"])
        reply_to = replied["id"] if replied is not None else None
    new = NewMessage(
        contact_id=contact_id,
        direction=IN,
        type=kind,
        status=RECEIVED,
        created_at=_time(message.get("timestamp"), now),
        text=text,
        media=media,
        location=location,
        external_id=wamid,
        reply_to_id=reply_to,
        channel=WHATSAPP,
        channel_id=channel["id"],
    )
    await store(conn, workspace_id, new, now=now)
    return 1


async def _contact(
    conn: Connection,
    workspace_id: str,
    number: str,
    sender: str,
    profile: str | None,
    channel: Row,
) -> str:
    """The live contact of the sender's number (its WhatsApp number, else its sender
    phone), or a new one made from the profile."""
    found = await contacts_repo.find_live_by_phone(conn, workspace_id, number)
    if found is None:
        found = await contacts_repo.find_live_by_sender_phone(conn, workspace_id, number)
    if found is not None:
        return found
    name = (profile or "").strip()[:NAME_MAX] or number
    body = {
        "name": name,
        "platformId": WHATSAPP,
        "internalWhatsappNumber": number,
        "platformSenderId": sender,
        "platformSenderPhone": number,
        "platformSenderName": (profile or "")[:NAME_MAX],
    }
    view = await writing.create(
        conn,
        CONTACT,
        workspace_id=workspace_id,
        key_id=channel["id"],
        body=body,
        overrides={"isManuallyAdded": False},
    )
    return view.id


async def _status(
    conn: Connection, workspace_id: str, status: dict[str, Any], now: datetime
) -> int:
    wamid, value = _str(status.get("id")), status.get("status")
    if wamid is None or not (value in RANK or value == FAILED):
        return 0
    error = None
    if value == FAILED:
        errors = _items(status, "errors")
        first = errors[0] if errors else {}
        title = first.get("title") or first.get("message")
        error = {"code": first.get("code"), "title": str(title) if title is not None else None}
    applied = await apply_status(
        conn,
        workspace_id,
        external_id=wamid,
        status=value,
        at=_time(status.get("timestamp"), now),
        error=error,
        now=now,
    )
    return int(applied)
