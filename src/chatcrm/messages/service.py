"""Messages (contract K.1): the conversation's pages, queueing a send, recording, marking
read, retrying, status changes. Storing a message and its effect on the contact is in
messages/store.py.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from chatcrm.contacts.kind import CONTACT
from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.ids import is_id
from chatcrm.core.jsontext import load_exact, to_text
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection, Row
from chatcrm.events.outbox import write_event
from chatcrm.messages import repository as repo
from chatcrm.messages.bodies import Recorded, Send
from chatcrm.messages.errors import MessageNotFailed, MessageNotFound, NoChannel, WindowClosed
from chatcrm.messages.record import (
    FAILED,
    IN,
    OUT,
    QUEUED,
    RANK,
    RECEIVED,
    SENT,
    WHATSAPP,
    in_key_order,
    moves_forward,
    wire,
)
from chatcrm.messages.store import NewMessage, store
from chatcrm.records import writing

WINDOW = timedelta(hours=24)
PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX = 50, 100


async def live_contact(conn: Connection, workspace_id: str, contact_id: str) -> dict[str, Any]:
    """The contact (404 when unknown, deleted, or not the caller's to see)."""
    view = await writing.get(conn, CONTACT, workspace_id, contact_id, shape=CONTACT.written_shape)
    return view.record


# --- reading -----------------------------------------------------------------------------


def page_size(raw: str | None) -> int:
    if raw is None or raw == "":
        return PAGE_SIZE_DEFAULT
    # ASCII digits only: "²" is a digit to str.isdigit, not to int().
    if raw.isascii() and raw.isdigit() and 1 <= int(raw) <= PAGE_SIZE_MAX:
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
    """A message of the workspace whose contact the caller may see and is not deleted;
    404 otherwise."""
    row = await repo.get_live(conn, workspace_id, message_id) if is_id(message_id) else None
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
    changed = ["status", "statusAt", "error"]
    if row["external_id"] is not None:
        # The channel's id was the failed attempt's: a late or repeated status Meta sends
        # for it (at least once, in any order) must not move the retry, which gets an id
        # of its own when it is sent again.
        extra["external_id"] = None
        changed.append("externalId")
    if sending_channel is not None:  # the workspace's sending channel now, if it has one
        extra["channel_id"] = sending_channel["id"]
    return await change_status(
        conn, row, status=QUEUED, at=now, now=now, extra=extra, changed=changed
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
        # D.1: in record key order (status, error, externalId, …, statusAt).
        changed=in_key_order(changed or ["status", "statusAt"]),
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
) -> bool | None:
    """A status Meta reported for an outbound message, forward only (K.1): True when
    applied, False when it would go backwards (or names an inbound message, or one only
    recorded: it never went through a channel, docs/channels.md 6.1), None when no
    message holds the wamid."""
    row = await repo.by_external_id(conn, workspace_id, external_id, locked=True)
    if row is None:
        return None
    sent = row["direction"] == OUT and row["channel_id"] is not None
    if not sent or not moves_forward(row["status"], status):
        return False
    extra: dict[str, Any] = {}
    changed = ["status", "statusAt"]
    if status == FAILED:
        extra["error"] = to_text(error or {"code": None, "title": None})
        changed.append("error")
    await change_status(conn, row, status=status, at=at, now=now, extra=extra, changed=changed)
    return True


async def keep_early_status(
    conn: Connection,
    workspace_id: str,
    *,
    external_id: str,
    status: str,
    at: datetime,
    error: dict[str, Any] | None,
    now: datetime,
) -> None:
    """Keep a status for a wamid no message holds yet (messages/tables.py early_statuses)."""
    row = {
        "workspace_id": workspace_id,
        "external_id": external_id,
        "status": status,
        "status_at": at,
        "error": to_text(error) if error is not None else None,
        "received_at": now,
        "actor": to_text(conn.actor) if conn.actor is not None else None,
    }
    await repo.keep_early(conn, row)


async def apply_early_statuses(
    conn: Connection, workspace_id: str, external_id: str, *, now: datetime
) -> int:
    """Apply, forward only and in their order, the statuses kept for a wamid a message
    has just been given; returns how many moved it."""
    kept = await repo.take_early(conn, workspace_id, external_id)
    applied = 0
    own = conn.actor  # the sender's: each status's event names who brought it instead
    try:
        # By rank (`failed` last): each moves the message on from the one before it.
        for early in sorted(kept, key=lambda r: RANK.get(r["status"], len(RANK))):
            conn.actor = load_exact(early["actor"]) if early["actor"] else None
            moved = await apply_status(
                conn,
                workspace_id,
                external_id=external_id,
                status=early["status"],
                at=early["status_at"],
                error=load_exact(early["error"]) if early["error"] else None,
                now=now,
            )
            applied += bool(moved)
    finally:
        conn.actor = own
    return applied
