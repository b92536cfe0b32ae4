"""What Meta's webhook brings (contract K.2), applied in the caller's transaction: each
message of each `messages` change for this channel's number, with its sender's contact
found or created, and each status of a message we sent, forward only.

A wamid the workspace already holds changes nothing. A channel's deliveries are applied
one at a time (an advisory lock of the channel, PostgreSQL): the later one finds what the
earlier stored. Should two still meet at the unique index on (workspace, external id),
the loser's transaction fails with UniqueViolation, the route rolls it back and applies
the delivery again, and this time finds the message stored.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from chatcrm.contacts.kind import CONTACT
from chatcrm.core.phone import PhoneError, normalize_phone
from chatcrm.core.timestamps import utcnow
from chatcrm.core.values import NAME_MAX
from chatcrm.db import locks
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
    preview,
)
from chatcrm.messages.service import apply_status, keep_early_status
from chatcrm.messages.store import (
    NewMessage,
    contact_change,
    created_event,
    message_row,
    touch_contacts,
)
from chatcrm.records import writing
from chatcrm.records.visibility import restrict

_DELIVERY_SEED = 0x77_61_6D_69  # a channel's deliveries, among the advisory locks


@dataclass
class Applied:
    messages: int = 0  # stored now (duplicates not counted)
    statuses: int = 0  # applied now (unknown or backwards ones not counted)


def actor(channel: Mapping[str, Any]) -> dict[str, Any]:
    """Who acts for what a channel brings (J.4): named by its display phone number, or,
    for a channel without one, by its name."""
    name = channel["display_phone_number"] or channel["name"]
    return {"type": "channel", "id": channel["id"], "name": name}


def _items(value: object, key: str) -> list[dict[str, Any]]:
    found = value.get(key) if isinstance(value, dict) else None
    return [i for i in found if isinstance(i, dict)] if isinstance(found, list) else []


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


# Deeper than any field read (a message's fields lie about ten levels down): left out, so
# that no nesting Meta's parser would take makes this walk (or a later one) fail.
DEPTH_KEPT = 32
_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(value: Any, depth: int = 0) -> Any:
    """The delivery as it can be stored: every NUL character taken out of its strings
    (PostgreSQL's text cannot hold one), every lone UTF-16 surrogate (an emoji cut in
    half) made U+FFFD (UTF-8 cannot hold one), and what lies deeper than any field read
    left out. One message's oddity must not make Meta's whole delivery refused (and
    retried for days, its other messages with it)."""
    if isinstance(value, str):
        if "\x00" in value:
            value = value.replace("\x00", "")
        return _SURROGATE.sub("\ufffd", value) if not value.isascii() else value
    if depth >= DEPTH_KEPT:
        return None
    if isinstance(value, dict):
        return {storable(k): storable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [storable(v, depth + 1) for v in value]
    return value


def _time(value: object, default: datetime) -> datetime:
    try:
        return datetime.fromtimestamp(int(str(value)), UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return default


# The longest message id kept (messages.external_id); Meta's are about 60 characters.
WAMID_MAX = 200


@dataclass
class _Inbound:
    """A message of the delivery, read."""

    wamid: str
    number: str  # normalised as B.1 (K.2: the contact's three numbers are this one)
    profile: str | None
    created_at: datetime
    message: dict[str, Any]


async def apply(conn: Connection, channel: Row, payload: object) -> Applied:
    """Apply one delivery (a parsed JSON body); raises UniqueViolation (or
    DuplicateContact) on a racing duplicate (see the module docstring)."""
    restrict(None)  # no caller: nothing is hidden from a channel
    conn.actor = actor(channel)
    payload = storable(payload)
    await conn.begin()
    # One delivery of a channel at a time (PostgreSQL; SQLite writes one at a time): two
    # deliveries sharing wamids and senders, each reading what is stored before the other
    # commits, met at the unique indexes again and again, and a fourth meeting was a 500.
    await locks.hold(conn, _DELIVERY_SEED, str(channel["id"]))
    applied = Applied()
    now = utcnow()
    found: list[_Inbound] = []
    statuses: list[dict[str, Any]] = []
    # Meta's timestamps are whole seconds: the messages of one delivery keep their order
    # in the conversation by a microsecond each.
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
                str(c.get("wa_id")): _str(profile.get("name"))
                for c in _items(value, "contacts")
                if isinstance(profile := c.get("profile"), dict)
            }
            for message in _items(value, "messages"):
                read = _read(message, names, now, len(found))
                if read is not None:
                    found.append(read)
            statuses += _items(value, "statuses")
    applied.messages = await _store(conn, channel, found, now)
    if statuses:
        # Read before the statuses' messages: a send whose answer is recorded after this
        # read gives its message the wamid before the lookups below, and one recorded
        # later finds the statuses kept for it.
        sending = await messages_repo.sending_now(conn, channel["workspace_id"])
        for status in statuses:
            applied.statuses += await _status(conn, channel["workspace_id"], status, now, sending)
    return applied


def _read(
    message: dict[str, Any], names: dict[str, str | None], now: datetime, place: int
) -> _Inbound | None:
    wamid, sender = _str(message.get("id")), _str(message.get("from"))
    if wamid is None or sender is None or len(wamid) > WAMID_MAX:
        return None  # not one of Meta's: ignored, as anything else malformed
    try:
        # Read as the contact made for it writes it (with its `+`, _create_contact): read
        # bare, a number with a trunk 0 after its country code (`4407700…`) stayed as
        # written while its contact held `447700…`, and each later delivery from it failed
        # to find that contact and collided with it (409, the whole delivery refused).
        number = normalize_phone(sender if sender.startswith("+") else f"+{sender}")
    except PhoneError:
        return None
    created_at = _time(message.get("timestamp"), now) + timedelta(microseconds=place)
    return _Inbound(wamid, number, names.get(sender), created_at, message)


async def _store(conn: Connection, channel: Row, found: list[_Inbound], now: datetime) -> int:
    """Store the new messages of a delivery with a few statements whatever their number:
    which wamids are known, the senders' contacts (locked), the contacts to create, then
    every message, their events, each contact's change and its event."""
    workspace_id = channel["workspace_id"]
    known = await messages_repo.by_external_ids(conn, workspace_id, [f.wamid for f in found])
    new: dict[str, _Inbound] = {}
    for f in found:
        if f.wamid not in known:
            new.setdefault(f.wamid, f)  # a wamid twice in one delivery: once
    if not new:
        return 0
    numbers = list(dict.fromkeys(f.number for f in new.values()))
    contacts = await messages_repo.senders(conn, workspace_id, numbers)
    created = False
    # New contacts in the order of their numbers, whatever the delivery's order: two
    # deliveries bringing the same new senders (Meta retries, batches differently) then
    # meet at the same first number, and one waits for the other instead of each holding
    # a number the other needs (a deadlock, on PostgreSQL).
    for f in sorted(new.values(), key=lambda f: f.number):
        if f.number not in contacts:
            contact_id = await _create_contact(conn, workspace_id, f, channel)
            contacts[f.number] = {"id": contact_id, "is_solved": False, "is_read": False}
            created = True
    if created:
        # The contacts' own creation took its time from the clock: what follows it (the
        # messages' and the contacts' changes and events) is not stamped before it.
        now = utcnow()
    replied = [
        str(m.message["context"]["id"])
        for m in new.values()
        if isinstance(m.message.get("context"), dict) and _str(m.message["context"].get("id"))
    ]
    replies = await messages_repo.by_external_ids(conn, workspace_id, replied)
    # Meta dates a message in whole seconds, and one second's messages may come in several
    # deliveries: one that arrives after messages of its second already held is placed
    # after them (a delivery's own are a microsecond apart), so that the conversation and
    # the contact's last message follow the order they came in. (The contacts are locked.)
    held = await messages_repo.newest_of(conn, workspace_id, [c["id"] for c in contacts.values()])
    rows = []
    for f in new.values():
        contact_id = contacts[f.number]["id"]
        at, before = f.created_at, held.get(contact_id)
        if (
            before is not None
            and at <= before
            and at.replace(microsecond=0) == before.replace(microsecond=0)
        ):
            at = before + timedelta(microseconds=1)
        if before is None or at > before:
            held[contact_id] = at
        kind, text, media, location = _content(f.message)
        context = f.message.get("context")
        reply_to = replies.get(str(context.get("id"))) if isinstance(context, dict) else None
        message = NewMessage(
            contact_id=contact_id,
            direction=IN,
            type=kind,
            status=RECEIVED,
            created_at=at,
            text=text,
            media=media,
            location=location,
            external_id=f.wamid,
            reply_to_id=reply_to,
            channel=WHATSAPP,
            channel_id=channel["id"],
        )
        rows.append((message_row(workspace_id, message, now=now), kind, text))
    # In the order of their wamids, for the same reason (the unique index of wamids).
    await messages_repo.insert_messages(
        conn, sorted((r for r, _, _ in rows), key=lambda r: str(r["external_id"]))
    )
    # One change per contact: its latest message of the delivery.
    latest: dict[str, tuple[datetime, str]] = {}
    for row, kind, text in rows:
        at = row["created_at"]
        if row["contact_id"] not in latest or at >= latest[row["contact_id"]][0]:
            latest[row["contact_id"]] = (at, preview(kind, text))
    current = {c["id"]: c for c in contacts.values()}
    # (Read after the insert: a statement of its own, as Citus runs no FOR UPDATE with a
    # subquery into another table; the delivery's own messages count.)
    newest = await messages_repo.newest_of(conn, workspace_id, list(latest))
    changes = {
        contact_id: contact_change(
            current[contact_id],
            last=last,
            at=at,
            inbound=True,
            newest=newest.get(contact_id),
            now=now,
        )
        for contact_id, (at, last) in latest.items()
    }
    # Every event with one statement: the messages', then the contacts' changes.
    messages_created = [created_event(r, now=now) for r, _, _ in rows]
    await touch_contacts(conn, workspace_id, changes, now=now, after=messages_created)
    return len(rows)


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


async def _create_contact(conn: Connection, workspace_id: str, f: _Inbound, channel: Row) -> str:
    """A new contact for a sender no contact has: named by the profile (else the number)."""
    name = (f.profile or "").strip()[:NAME_MAX] or f.number
    # Meta's `from` begins with its country code: written with its `+`, it is never read
    # as a national number of the workspace's defaultCountry (docs/api.md 4.9).
    international = f"+{f.number}"
    body = {
        "name": name,
        "platformId": WHATSAPP,
        "internalWhatsappNumber": international,
        "platformSenderId": f.number,
        "platformSenderPhone": international,
        "platformSenderName": (f.profile or "")[:NAME_MAX],
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
    conn: Connection, workspace_id: str, status: dict[str, Any], now: datetime, sending: bool
) -> int:
    """Apply one status (1 if it moved its message). A status for a wamid no message holds
    while a send is under way may be that send's, come before Meta's answer to it: it is
    kept for the answer (messages/tables.py early_statuses)."""
    wamid, value = _str(status.get("id")), status.get("status")
    if wamid is None or len(wamid) > WAMID_MAX or not (value in RANK or value == FAILED):
        return 0
    error = None
    if value == FAILED:
        errors = _items(status, "errors")
        first = errors[0] if errors else {}
        title = first.get("title") or first.get("message")
        error = {"code": first.get("code"), "title": str(title) if title is not None else None}
    change = {
        "external_id": wamid,
        "status": value,
        "at": _time(status.get("timestamp"), now),
        "error": error,
        "now": now,
    }
    applied = await apply_status(conn, workspace_id, **change)
    if applied is None and sending:
        await keep_early_status(conn, workspace_id, **change)
    return int(bool(applied))
