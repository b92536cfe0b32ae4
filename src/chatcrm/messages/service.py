"""Messages (contract K.1): storing one with its event and its effect on the contact, the
conversation's pages, queueing a send, recording, marking read, retrying, status changes.

Every change runs on the caller's connection, in its transaction: the message, its
`message.*` event, the contact's change and its `contact.updated` event commit together.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from chatcrm.contacts.kind import CONTACT
from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.jsontext import to_text
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection, Row
from chatcrm.events.outbox import NewEvent, write_event, write_events
from chatcrm.messages import repository as repo
from chatcrm.messages.bodies import Recorded, Send
from chatcrm.messages.errors import MessageNotFailed, MessageNotFound, NoChannel, WindowClosed
from chatcrm.messages.record import (
    FAILED,
    IN,
    OUT,
    QUEUED,
    RECEIVED,
    SENT,
    WHATSAPP,
    moves_forward,
    preview,
    wire,
)
from chatcrm.records import statements, writing

WINDOW = timedelta(hours=24)
PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX = 50, 100
# On a contact, the columns whose fields a message's effect sets, in the event's order.
_CONTACT_CHANGE = ("last_message", "last_message_date")


@dataclass
class NewMessage:
    """A message about to be stored; what is not given takes the usual empty value."""

    contact_id: str
    direction: str
    type: str
    status: str
    created_at: datetime
    text: str | None = None
    media: dict[str, Any] | None = None
    location: dict[str, Any] | None = None
    external_id: str | None = None
    reply_to_id: str | None = None
    sent_by: dict[str, Any] | None = None
    channel: int = WHATSAPP
    channel_id: str | None = None
    template: dict[str, Any] | None = None
    next_attempt_at: datetime | None = None


def _json(value: Any) -> str | None:
    return None if value is None else to_text(value)


def message_row(workspace_id: str, new: NewMessage, *, now: datetime) -> dict[str, Any]:
    """The row of a new message (version 1)."""
    return {
        "workspace_id": workspace_id,
        "id": new_id(),
        "contact_id": new.contact_id,
        "direction": new.direction,
        "channel": new.channel,
        "type": new.type,
        "text": new.text,
        "media": _json(new.media),
        "location": _json(new.location),
        "status": new.status,
        "error": None,
        "external_id": new.external_id,
        "reply_to_id": new.reply_to_id,
        "sent_by": _json(new.sent_by),
        "created_at": new.created_at,
        "status_at": new.created_at if new.status in (RECEIVED, SENT) else now,
        "version": 1,
        "channel_id": new.channel_id,
        "template": _json(new.template),
        "attempts": 0,
        "next_attempt_at": new.next_attempt_at,
        "attempt_started_at": None,
        "receipt_due_at": None,
    }


def created_event(row: dict[str, Any], *, now: datetime) -> NewEvent:
    return NewEvent(row["workspace_id"], "message.created", row["id"], 1, [], wire(row), now)


async def store(
    conn: Connection, workspace_id: str, new: NewMessage, *, now: datetime
) -> dict[str, Any]:
    """Insert a message with its `message.created` event and its effect on the contact
    (which must be live: the caller found it). Raises UniqueViolation for an external id
    the workspace already holds (the caller decides what a duplicate means)."""
    await conn.begin()
    # The contact is locked first: the message's insert takes a key-share lock of its row
    # (the foreign key), and two such inserts each waiting to lock it for the update
    # would deadlock.
    current = await statements.lock(conn, CONTACT, workspace_id, new.contact_id)
    if current is None:
        raise CONTACT.not_found(new.contact_id)
    row = message_row(workspace_id, new, now=now)
    await repo.insert_message(conn, row)
    await write_events(conn, [created_event(row, now=now)])
    await touch_contact(
        conn,
        workspace_id,
        current,
        last=preview(new.type, new.text),
        at=new.created_at,
        inbound=new.direction == IN,
        now=now,
    )
    return wire(row)


def contact_change(
    current: Mapping[str, Any],
    *,
    last: str,
    at: datetime,
    inbound: bool,
    newest: datetime | None,
    now: datetime,
) -> dict[str, Any]:
    """The columns a message sets on its contact (K.1), given the contact's stored
    `is_read` and `is_solved` and when its newest message so far was created: the last
    message and its date (not moved back by a message older than one the conversation
    holds, recorded or delivered late); an inbound one also makes it unread and re-opens
    it if solved. Empty when nothing changes."""
    columns: dict[str, Any] = {}
    if newest is None or at >= newest:
        columns.update(last_message=last, last_message_date=at)
    if inbound:
        if current["is_read"]:
            columns["is_read"] = False
        if current["is_solved"]:
            columns.update(is_solved=False, solved_date=None, solved_by_agent_id=None)
    if columns:
        columns["modified_at"] = now
    return columns


async def touch_contacts(
    conn: Connection,
    workspace_id: str,
    changes: dict[str, dict[str, Any]],
    *,
    now: datetime,
    after: list[NewEvent] | None = None,
) -> None:
    """Write contacts' changes (locked by the caller) and their `contact.updated` events,
    with few statements whatever their number (a delivery's); `after`: events written
    first, with the same statement."""
    events = list(after or [])
    changes = {contact_id: columns for contact_id, columns in changes.items() if columns}
    views = []
    if len(changes) == 1 and conn.dialect == "postgresql" and not await conn.is_citus():
        # One contact (most deliveries): the change and its record in one statement.
        [(contact_id, columns)] = changes.items()
        view = await statements.update_record(
            conn, CONTACT, workspace_id, contact_id, columns, returning=CONTACT.written_shape
        )
        views = [view] if view is not None else []
    elif changes:
        await statements.update_records(conn, CONTACT, workspace_id, list(changes.items()))
        views = await statements.get_any(
            conn, CONTACT, workspace_id, list(changes), CONTACT.written_shape
        )
    events += [
        NewEvent(
            workspace_id,
            "contact.updated",
            v.id,
            v.version,
            CONTACT.fields.changed({}, columns=changes[v.id]),
            v.record,
            now,
        )
        for v in views
    ]
    await write_events(conn, events)


async def touch_contact(
    conn: Connection,
    workspace_id: str,
    current: Mapping[str, Any],
    *,
    last: str,
    at: datetime,
    inbound: bool,
    now: datetime,
) -> None:
    """A message's effect on its contact (`current`: its stored row, locked), an ordinary
    change with its event (K.1): the last message and its date; an inbound one also makes
    it unread and re-opens it if solved."""
    contact_id = str(current["id"])
    newest = (await repo.newest_of(conn, workspace_id, [contact_id])).get(contact_id)
    columns = contact_change(current, last=last, at=at, inbound=inbound, newest=newest, now=now)
    if not columns:
        return
    await statements.update_record(conn, CONTACT, workspace_id, contact_id, columns)
    view = await writing.get(conn, CONTACT, workspace_id, contact_id, shape=CONTACT.written_shape)
    changed = CONTACT.fields.changed({}, columns=columns)
    await writing.record_event(
        conn, CONTACT, "updated", workspace_id, view, now=now, changed=changed
    )


async def live_contact(conn: Connection, workspace_id: str, contact_id: str) -> dict[str, Any]:
    """The contact (404 when unknown, deleted, or not the caller's to see)."""
    view = await writing.get(conn, CONTACT, workspace_id, contact_id, shape=CONTACT.written_shape)
    return view.record


# --- reading -----------------------------------------------------------------------------


def page_size(raw: str | None) -> int:
    if raw is None or raw == "":
        return PAGE_SIZE_DEFAULT
    if raw.isdigit() and 1 <= int(raw) <= PAGE_SIZE_MAX:
        return int(raw)
    raise ValidationFailed(
        [FieldError("pageSize", f"must be a whole number from 1 to {PAGE_SIZE_MAX}")]
    )


async def conversation(
    conn: Connection, *, workspace_id: str, contact_id: str, before: str | None, size: int
) -> dict[str, Any]:
    """A page of the conversation: the newest messages (older than `before`), oldest
    first, and the id to ask for the page before it (null at the first message)."""
    await live_contact(conn, workspace_id, contact_id)
    anchor = None
    if before is not None:
        anchor = await repo.get(conn, workspace_id, before) if is_id(before) else None
        if anchor is None or anchor["contact_id"] != contact_id:
            raise ValidationFailed(
                [FieldError("before", "must be the id of a message of this contact")]
            )
    rows = await repo.newest(conn, workspace_id, contact_id, limit=size + 1, before=anchor)
    more = len(rows) > size
    rows = rows[:size]
    rows.reverse()
    return {
        "contactId": contact_id,
        "messages": [wire(r) for r in rows],
        "before": rows[0]["id"] if more and rows else None,
    }


async def get_row(conn: Connection, workspace_id: str, message_id: str) -> Row:
    """A message of the workspace whose contact the caller may see; 404 otherwise."""
    row = await repo.get(conn, workspace_id, message_id) if is_id(message_id) else None
    if row is None:
        raise MessageNotFound(message_id)
    from chatcrm.records import visibility

    if not await visibility.sees(conn, CONTACT, workspace_id, row["contact_id"]):
        raise MessageNotFound(message_id)
    return row


# --- sending, recording, reading, retrying -----------------------------------------------


def whatsapp_number(contact: dict[str, Any]) -> str | None:
    number = contact.get("internalWhatsappNumber") or contact.get("platformSenderPhone")
    return number or None


async def queue(
    conn: Connection,
    *,
    workspace_id: str,
    contact_id: str,
    send: Send,
    actor: dict[str, Any] | None,
    sending_channel: Row | None,
) -> dict[str, Any]:
    """Store a message `queued` for the channel sender (K.2), in the request's transaction."""
    contact = await live_contact(conn, workspace_id, contact_id)
    if sending_channel is None:
        raise NoChannel("This workspace has no enabled WhatsApp channel: connect one first.")
    if whatsapp_number(contact) is None:
        raise NoChannel("This contact has no WhatsApp number to send to.")
    now = utcnow()
    if send.text is not None:
        last_in = await repo.last_inbound(conn, workspace_id, contact_id)
        if last_in is None or last_in["created_at"] < now - WINDOW:
            raise WindowClosed
    reply_to = None
    if send.reply_to_id is not None:
        reply_to = (
            await repo.get(conn, workspace_id, send.reply_to_id)
            if is_id(send.reply_to_id)
            else None
        )
        if reply_to is None or reply_to["contact_id"] != contact_id:
            raise ValidationFailed(
                [FieldError("replyToId", "must be the id of a message of this contact")]
            )
    template = send.template.stored() if send.template is not None else None
    new = NewMessage(
        contact_id=contact_id,
        direction=OUT,
        type="text" if send.text is not None else "template",
        status=QUEUED,
        created_at=now,
        text=send.text if send.text is not None else template_text(template),
        reply_to_id=send.reply_to_id,
        sent_by=actor,
        channel_id=sending_channel["id"],
        template=template,
        next_attempt_at=now,
    )
    return await store(conn, workspace_id, new, now=now)


def template_text(template: dict[str, Any] | None) -> str | None:
    """What a template message shows as its text: its name and parameters."""
    if template is None:
        return None
    params = ", ".join(template["parameters"])
    return f"[template {template['name']}]" + (f" {params}" if params else "")


async def record(
    conn: Connection,
    *,
    workspace_id: str,
    contact_id: str,
    given: Recorded,
    actor: dict[str, Any] | None,
) -> dict[str, Any]:
    """Store a message exchanged elsewhere, without sending it; a second record of the same
    externalId for the contact answers the first and changes nothing."""
    from chatcrm.db.errors import UniqueViolation

    await live_contact(conn, workspace_id, contact_id)
    await conn.begin()
    if given.external_id is not None:
        first = await _recorded_before(conn, workspace_id, contact_id, given.external_id)
        if first is not None:
            return first
    now = utcnow()
    inbound = given.direction == IN
    new = NewMessage(
        contact_id=contact_id,
        direction=given.direction,
        type="text",
        status=RECEIVED if inbound else SENT,
        created_at=given.created_at or now,
        text=given.text,
        external_id=given.external_id,
        sent_by=None if inbound else actor,
    )
    try:
        async with conn.savepoint():
            return await store(conn, workspace_id, new, now=now)
    except UniqueViolation:  # the same externalId recorded by a request that raced this one
        assert given.external_id is not None
        first = await _recorded_before(conn, workspace_id, contact_id, given.external_id)
        if first is None:
            raise
        return first


async def _recorded_before(
    conn: Connection, workspace_id: str, contact_id: str, external_id: str
) -> dict[str, Any] | None:
    row = await repo.by_external_id(conn, workspace_id, external_id)
    if row is None:
        return None
    if row["contact_id"] != contact_id:
        raise ValidationFailed(
            [FieldError("externalId", "already names a message of another contact")]
        )
    return wire(row)


async def mark_read(conn: Connection, *, workspace_id: str, contact_id: str) -> Row | None:
    """The conversation is read: `isRead` true (an ordinary change, with its event when it
    changes); the last inbound WhatsApp message's read receipt is queued (best effort).
    Returns that message, if any."""
    contact = await live_contact(conn, workspace_id, contact_id)
    await conn.begin()
    now = utcnow()
    if not contact["isRead"]:
        await writing.update(
            conn,
            CONTACT,
            workspace_id=workspace_id,
            record_id=contact_id,
            body={"isRead": True},
            if_match=None,
        )
    last_in = await repo.last_inbound(conn, workspace_id, contact_id)
    if last_in is not None and last_in["external_id"] and last_in["channel"] == WHATSAPP:
        await repo.update_message(conn, workspace_id, last_in["id"], {"receipt_due_at": now})
    return last_in


async def retry(
    conn: Connection, *, workspace_id: str, message_id: str, sending_channel: Row | None
) -> dict[str, Any]:
    """A failed outbound message queued again: the same message, `queued`, no error, to go
    out through the workspace's sending channel of now (the one it was queued for may be
    gone)."""
    await get_row(conn, workspace_id, message_id)
    await conn.begin()
    row = await repo.lock(conn, workspace_id, message_id)
    if row is None:
        raise MessageNotFound(message_id)
    if row["status"] != FAILED or row["direction"] != OUT:
        raise MessageNotFailed(message_id, row["status"])
    now = utcnow()
    extra: dict[str, Any] = {"error": None, "next_attempt_at": now, "attempt_started_at": None}
    extra["attempts"] = 0
    if sending_channel is not None:  # the workspace's sending channel now, if it has one
        extra["channel_id"] = sending_channel["id"]
    return await change_status(
        conn,
        row,
        status=QUEUED,
        at=now,
        now=now,
        extra=extra,
        changed=["status", "statusAt", "error"],
    )


async def change_status(
    conn: Connection,
    row: Row,
    *,
    status: str,
    at: datetime,
    now: datetime,
    extra: dict[str, Any] | None = None,
    changed: list[str] | None = None,
) -> dict[str, Any]:
    """Write a status change (the row is locked or freshly claimed) and its
    `message.updated` event; returns the message."""
    values = {"status": status, "status_at": at, "version": row["version"] + 1, **(extra or {})}
    await repo.update_message(conn, row["workspace_id"], row["id"], values)
    updated = {**row, **values}
    message = wire(updated)
    await write_event(
        conn,
        workspace_id=row["workspace_id"],
        type="message.updated",
        record_id=row["id"],
        record_version=values["version"],
        changed=changed or ["status", "statusAt"],
        data=message,
        now=now,
    )
    return message


async def apply_status(
    conn: Connection,
    workspace_id: str,
    *,
    external_id: str,
    status: str,
    at: datetime,
    error: dict[str, Any] | None,
    now: datetime,
) -> bool:
    """A status Meta reported for an outbound message, forward only (K.1); an unknown
    wamid, or a status that would go backwards, changes nothing."""
    row = await repo.by_external_id(conn, workspace_id, external_id, locked=True)
    if row is None or row["direction"] != OUT or not moves_forward(row["status"], status):
        return False
    extra: dict[str, Any] = {}
    changed = ["status", "statusAt"]
    if status == FAILED:
        extra["error"] = to_text(error or {"code": None, "title": None})
        changed.append("error")
    await change_status(conn, row, status=status, at=at, now=now, extra=extra, changed=changed)
    return True
