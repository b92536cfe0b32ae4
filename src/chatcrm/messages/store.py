"""Storing a message (contract K.1): its row, its `message.created` event and its effect
on its contact — the last message and its date, unread, re-opened — an ordinary change
with its `contact.updated` event, all in the caller's transaction."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from chatcrm.contacts.kind import CONTACT
from chatcrm.core.ids import new_id
from chatcrm.core.jsontext import to_text
from chatcrm.db.database import Connection
from chatcrm.events.outbox import NewEvent, write_events
from chatcrm.messages import repository as repo
from chatcrm.messages.record import IN, RECEIVED, SENT, WHATSAPP, preview, wire
from chatcrm.records import statements, writing


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
