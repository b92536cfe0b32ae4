"""The channel sender's statements: claim queued messages and due read receipts, record
what came of each send.

As webhook deliveries (webhooks/claims.py): a claim leases rows in one short transaction
with `FOR UPDATE SKIP LOCKED` (PostgreSQL; SQLite's write lock otherwise), one workspace's
shard at a time on Citus. Unlike a delivery, a message is never sent twice: a claim stamps
`attempt_started_at`, recording the outcome clears it, and a row found still stamped
after its lease (the process died during the send) fails with UNKNOWN_OUTCOME instead of
being sent again.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, literal_column, or_, select, update

from chatcrm.channels.tables import channels
from chatcrm.contacts.table import contacts
from chatcrm.core.jsontext import load_exact, to_text
from chatcrm.db.database import Connection, Database, Row
from chatcrm.messages import repository as messages_repo
from chatcrm.messages.record import FAILED, QUEUED, SENT, UNKNOWN_OUTCOME
from chatcrm.messages.service import apply_early_statuses, change_status
from chatcrm.messages.tables import messages

log = logging.getLogger("chatcrm.channels")

_m = messages.c
_c = contacts.c
_ch = channels.c
# Inline, not parameters: the partial indexes are on exactly these predicates.
_QUEUED = _m.status == literal_column("'queued'")
_RECEIPT = _m.receipt_due_at.isnot(None)


_older = messages.alias("older")
# No older message of the same contact is still queued (waiting, or in flight under a
# lease): a contact's messages go out one after the other, in the order they were queued,
# as a person sends them; other contacts' messages are not held up behind them
# (ix_messages_queued_by_contact answers from the contact's few queued rows).
_FIRST_OF_CONTACT = ~(
    select(_older.c.id)
    .where(
        _older.c.workspace_id == _m.workspace_id,
        _older.c.contact_id == _m.contact_id,
        _older.c.status == literal_column("'queued'"),
        or_(
            _older.c.created_at < _m.created_at,
            and_(_older.c.created_at == _m.created_at, _older.c.id < _m.id),
        ),
    )
    .exists()
)
_SEND_DUE = and_(_QUEUED, _FIRST_OF_CONTACT)


def _due(predicate: Any, column: Any, *, one_workspace: bool) -> Any:
    scope = [_m.workspace_id == bindparam("_ws")] if one_workspace else []
    return (
        select(messages)
        .where(*scope, predicate, column <= bindparam("_due"))
        .order_by(column)
        .limit(bindparam("_limit"))
        .with_for_update(skip_locked=True)
    )


_SENDS = _due(_SEND_DUE, _m.next_attempt_at, one_workspace=False)
_SENDS_ONE = _due(_SEND_DUE, _m.next_attempt_at, one_workspace=True)
_RECEIPTS = _due(_RECEIPT, _m.receipt_due_at, one_workspace=False)
_RECEIPTS_ONE = _due(_RECEIPT, _m.receipt_due_at, one_workspace=True)
_ANY = {
    "sends": select(_m.id).where(_SEND_DUE, _m.next_attempt_at <= bindparam("_due")).limit(1),
    "receipts": select(_m.id).where(_RECEIPT, _m.receipt_due_at <= bindparam("_due")).limit(1),
}
# Citus: the workspaces with due rows (a multi-shard read without locks), then each claimed
# on its own shard.
_WORKSPACES = {
    "sends": select(_m.workspace_id)
    .where(_SEND_DUE, _m.next_attempt_at <= bindparam("_due"))
    .group_by(_m.workspace_id)
    .limit(bindparam("_limit")),
    "receipts": select(_m.workspace_id)
    .where(_RECEIPT, _m.receipt_due_at <= bindparam("_due"))
    .group_by(_m.workspace_id)
    .limit(bindparam("_limit")),
}
_CHANNEL = select(channels).where(_ch.id == bindparam("_id"))
_NUMBER = select(_c.internal_whatsapp_number, _c.platform_sender_phone, _c.deleted_at).where(
    _c.workspace_id == bindparam("_ws"), _c.id == bindparam("_id")
)
_LEASE = update(messages).where(_m.workspace_id == bindparam("_ws"), _m.id == bindparam("_id"))


@dataclass(frozen=True, slots=True)
class Send:
    """A queued message leased for one attempt, with what sending it needs."""

    workspace_id: str
    message_id: str
    attempt: int
    started_at: datetime
    channel: Row | None  # None: deleted or disabled since the message was queued
    to: str | None  # None: not to be sent to the contact, `not_to` says why
    not_to: str | None
    text: str | None
    template: dict[str, Any] | None
    reply_to: str | None  # the wamid of the message replied to


@dataclass(frozen=True, slots=True)
class Receipt:
    channel: Row
    wamid: str


async def anything_due(db: Database, *, due: datetime) -> bool:
    """A cheap read, so an idle sender never takes a lock or SQLite's writer."""
    async with db.session() as conn:
        for statement in _ANY.values():
            if await conn.fetchrow(statement, {"_due": due}) is not None:
                return True
    return False


async def _due_rows(conn: Connection, which: str, *, due: datetime, limit: int) -> list[Row]:
    one, many = (_SENDS_ONE, _SENDS) if which == "sends" else (_RECEIPTS_ONE, _RECEIPTS)
    if not await conn.is_citus():
        return await conn.fetch(many, {"_due": due, "_limit": limit})
    rows: list[Row] = []
    for found in await conn.fetch(_WORKSPACES[which], {"_due": due, "_limit": limit}):
        if len(rows) >= limit:
            break
        params = {"_due": due, "_limit": limit - len(rows), "_ws": found["workspace_id"]}
        rows += await conn.fetch(one, params)
    return rows


async def _channel(conn: Connection, channel_id: str | None) -> Row | None:
    if channel_id is None:
        return None
    row = await conn.fetchrow(_CHANNEL, {"_id": channel_id})
    return row if row is not None and row["enabled"] else None


async def claim_sends(
    db: Database, *, due: datetime, now: datetime, lease_seconds: float, limit: int
) -> list[Send]:
    """Lease up to `limit` queued messages due at `due`, none while an older message of
    its contact is still queued. A message whose earlier attempt never recorded its
    outcome is failed here (UNKNOWN_OUTCOME), not sent again."""
    taken: list[Send] = []
    async with db.transaction() as conn:
        for row in await _due_rows(conn, "sends", due=due, limit=limit):
            if row["attempt_started_at"] is not None:
                error = {
                    "code": UNKNOWN_OUTCOME,
                    "title": "the outcome is unknown: the sender stopped during the attempt",
                }
                await _fail(conn, row, error, now)
                continue
            attempt = row["attempts"] + 1
            await conn.execute(
                _LEASE,
                {
                    "_ws": row["workspace_id"],
                    "_id": row["id"],
                    "attempts": attempt,
                    "attempt_started_at": now,
                    "next_attempt_at": now + timedelta(seconds=lease_seconds),
                },
            )
            number = await conn.fetchrow(
                _NUMBER, {"_ws": row["workspace_id"], "_id": row["contact_id"]}
            )
            # A contact deleted since (B.3: it leaves every read, its messages too) is
            # not written to, until it is restored and the message retried.
            to: str | None = None
            not_to: str | None = "the contact was deleted"
            if number is not None and number["deleted_at"] is None:
                to = number["internal_whatsapp_number"] or number["platform_sender_phone"]
                not_to = None if to else "no WhatsApp number"
            reply_to = None
            if row["reply_to_id"] is not None:
                replied = await messages_repo.get(conn, row["workspace_id"], row["reply_to_id"])
                # Quoted only when it went through a channel: a recorded message's
                # externalId is not a wamid Meta would know.
                if replied is not None and replied["channel_id"] is not None:
                    reply_to = replied["external_id"]
            taken.append(
                Send(
                    workspace_id=row["workspace_id"],
                    message_id=row["id"],
                    attempt=attempt,
                    started_at=now,
                    channel=await _channel(conn, row["channel_id"]),
                    to=to,
                    not_to=not_to,
                    text=row["text"],
                    template=load_exact(row["template"]) if row["template"] else None,
                    reply_to=reply_to,
                )
            )
    return taken


async def claim_receipts(db: Database, *, due: datetime, limit: int) -> list[Receipt]:
    """Take up to `limit` due read receipts: one attempt each, best effort (K.1)."""
    taken: list[Receipt] = []
    async with db.transaction() as conn:
        for row in await _due_rows(conn, "receipts", due=due, limit=limit):
            await conn.execute(
                _LEASE, {"_ws": row["workspace_id"], "_id": row["id"], "receipt_due_at": None}
            )
            channel = await _channel(conn, row["channel_id"])
            if channel is not None and row["external_id"]:
                taken.append(Receipt(channel, row["external_id"]))
    return taken


async def _fail(conn: Connection, row: Row, error: dict[str, Any], now: datetime) -> None:
    await change_status(
        conn,
        row,
        status=FAILED,
        at=now,
        now=now,
        extra={
            "error": to_text(error),
            "next_attempt_at": None,
            "attempt_started_at": None,
        },
        changed=["status", "statusAt", "error"],
    )


async def _current(conn: Connection, s: Send) -> Row | None:
    """The row, locked, if it still carries this attempt's lease."""
    row = await messages_repo.lock(conn, s.workspace_id, s.message_id)
    if (
        row is None
        or row["status"] != QUEUED
        or row["attempts"] != s.attempt
        or row["attempt_started_at"] is None
        or abs((row["attempt_started_at"] - s.started_at).total_seconds()) > 1e-3
    ):
        return None
    return row


async def record_sent(db: Database, s: Send, external_id: str | None, now: datetime) -> None:
    """`sent` with Meta's message id. An id the workspace already holds for another
    message (Meta's ids are unique; a fake or a replayed answer's may not be) is not
    kept: the message was sent all the same, and is recorded so, without it."""
    async with db.transaction() as conn:
        row = await _current(conn, s)
        if row is None:
            return
        if external_id and await messages_repo.by_external_ids(conn, s.workspace_id, [external_id]):
            log.warning(
                "a sent message's id is another message's: recorded without it",
                extra={"message_id": s.message_id, "external_id": external_id},
            )
            external_id = None
        changed = ["status", "statusAt"] + (["externalId"] if external_id else [])
        await change_status(
            conn,
            row,
            status=SENT,
            at=now,
            now=now,
            extra={"external_id": external_id, "next_attempt_at": None, "attempt_started_at": None},
            changed=changed,
        )
        if external_id:
            await apply_early_statuses(conn, s.workspace_id, external_id, now=now)


async def record_failed(db: Database, s: Send, error: dict[str, Any], now: datetime) -> None:
    async with db.transaction() as conn:
        row = await _current(conn, s)
        if row is not None:
            await _fail(conn, row, error, now)


async def record_retry(db: Database, s: Send, at: datetime) -> None:
    """Nothing was sent: the message stays queued, due again at `at`."""
    async with db.transaction() as conn:
        if await _current(conn, s) is not None:
            await conn.execute(
                _LEASE,
                {
                    "_ws": s.workspace_id,
                    "_id": s.message_id,
                    "next_attempt_at": at,
                    "attempt_started_at": None,
                },
            )


# How long a status kept for a wamid no message holds waits for it: far longer than any
# send's lease, after which the send's outcome is recorded (or UNKNOWN_OUTCOME).
EARLY_STATUSES_KEPT = timedelta(hours=1)


async def settle_early_statuses(db: Database, *, now: datetime, limit: int = 100) -> int:
    """Apply the kept statuses whose message was given its wamid by an answer recorded
    while the status was being kept (the two transactions crossed), and forget those kept
    too long. Returns how many moved a message."""
    async with db.session() as conn:
        if not await messages_repo.any_early(conn):
            return 0
    applied = 0
    async with db.transaction() as conn:
        for found in await messages_repo.early_matched(conn, limit):
            applied += await apply_early_statuses(
                conn, found["workspace_id"], found["external_id"], now=now
            )
        await messages_repo.expire_early(conn, now - EARLY_STATUSES_KEPT)
    return applied
