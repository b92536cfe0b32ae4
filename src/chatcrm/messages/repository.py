"""Message statements: every one filters on the workspace by equality first (one shard on
Citus)."""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import (
    Select,
    and_,
    bindparam,
    delete,
    func,
    insert,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.dialects import postgresql, sqlite

from chatcrm.contacts.table import contacts
from chatcrm.db.database import Connection, Row
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.messages.record import IN
from chatcrm.messages.tables import early_statuses, messages

c = messages.c
_WS = c.workspace_id == bindparam("_ws")
_ONE = (_WS, c.id == bindparam("_id"))

_INSERT = insert(messages)
_GET = select(messages).where(*_ONE)
_LOCK = select(messages).where(*_ONE).with_for_update()
# A message whose contact is not deleted: a deleted contact's messages leave every read
# and every change by their id too (B.3), until it is restored.
_k = contacts.c
_GET_LIVE = select(messages).where(
    *_ONE,
    select(_k.id)
    .where(_k.workspace_id == bindparam("_ws"), _k.id == c.contact_id, _k.deleted_at.is_(None))
    .exists(),
)
_BY_EXTERNAL = select(messages).where(_WS, c.external_id == bindparam("_external"))
_LOCK_BY_EXTERNAL = _BY_EXTERNAL.with_for_update()
_CONVERSATION = (_WS, c.contact_id == bindparam("_contact"))
# Newest first; the page is turned oldest first by the caller.
_NEWEST = (
    select(messages)
    .where(*_CONVERSATION)
    .order_by(c.created_at.desc(), c.id.desc())
    .limit(bindparam("_limit"))
)
_OLDER = (
    select(messages)
    .where(
        *_CONVERSATION,
        or_(
            c.created_at < bindparam("_at"),
            and_(c.created_at == bindparam("_at"), c.id < bindparam("_before")),
        ),
    )
    .order_by(c.created_at.desc(), c.id.desc())
    .limit(bindparam("_limit"))
)
_LAST_INBOUND = (
    select(messages)
    .where(*_CONVERSATION, c.direction == IN)
    .order_by(c.created_at.desc(), c.id.desc())
    .limit(1)
)
_UPDATE = update(messages).where(*_ONE)


async def insert_message(conn: Connection, row: dict[str, Any]) -> None:
    await conn.execute(_INSERT, row)


async def insert_messages(conn: Connection, rows: list[dict[str, Any]]) -> None:
    """Many messages with one statement sent many times (a delivery's)."""
    if rows:
        await conn.executemany(_INSERT, rows)


@cache
def _by_external_ids(dialect: str) -> Select[Any]:
    return select(c.id, c.external_id).where(_WS, in_id_list(c.external_id, "_ids", dialect))


async def by_external_ids(
    conn: Connection, workspace_id: str, external_ids: list[str]
) -> dict[str, str]:
    """external id → message id, for the given external ids the workspace holds."""
    if not external_ids:
        return {}
    rows = await conn.fetch(
        _by_external_ids(conn.dialect),
        {"_ws": workspace_id, "_ids": id_list(external_ids, conn.dialect)},
    )
    return {r["external_id"]: r["id"] for r in rows}


async def get(conn: Connection, workspace_id: str, message_id: str) -> Row | None:
    return await conn.fetchrow(_GET, {"_ws": workspace_id, "_id": message_id})


async def get_live(conn: Connection, workspace_id: str, message_id: str) -> Row | None:
    """The message, when its contact is not deleted."""
    return await conn.fetchrow(_GET_LIVE, {"_ws": workspace_id, "_id": message_id})


async def lock(conn: Connection, workspace_id: str, message_id: str) -> Row | None:
    return await conn.fetchrow(_LOCK, {"_ws": workspace_id, "_id": message_id})


async def by_external_id(
    conn: Connection, workspace_id: str, external_id: str, *, locked: bool = False
) -> Row | None:
    stmt = _LOCK_BY_EXTERNAL if locked else _BY_EXTERNAL
    return await conn.fetchrow(stmt, {"_ws": workspace_id, "_external": external_id})


async def newest(
    conn: Connection,
    workspace_id: str,
    contact_id: str,
    *,
    limit: int,
    before: Row | None = None,
) -> list[Row]:
    """Up to `limit` messages of the conversation, newest first (older than `before`)."""
    params: dict[str, Any] = {"_ws": workspace_id, "_contact": contact_id, "_limit": limit}
    if before is None:
        return await conn.fetch(_NEWEST, params)
    params.update(_at=before["created_at"], _before=before["id"])
    return await conn.fetch(_OLDER, params)


@cache
def _newest_of(dialect: str) -> Select[Any]:
    return (
        select(c.contact_id, func.max(c.created_at).label("newest"))
        .where(_WS, in_id_list(c.contact_id, "_ids", dialect))
        .group_by(c.contact_id)
    )


async def newest_of(conn: Connection, workspace_id: str, contact_ids: list[str]) -> dict[str, Any]:
    """contact id → when its newest message was created (contacts with messages only)."""
    if not contact_ids:
        return {}
    rows = await conn.fetch(
        _newest_of(conn.dialect), {"_ws": workspace_id, "_ids": id_list(contact_ids, conn.dialect)}
    )
    return {r["contact_id"]: r["newest"] for r in rows}


@cache
def _senders(dialect: str) -> Select[Any]:
    k = contacts.c
    return (
        select(
            k.id,
            k.internal_whatsapp_number,
            k.platform_sender_phone,
            k.is_solved,
            k.is_read,
        )
        .where(
            k.workspace_id == bindparam("_ws"),
            or_(
                in_id_list(k.internal_whatsapp_number, "_numbers", dialect),
                in_id_list(k.platform_sender_phone, "_numbers", dialect),
            ),
            k.deleted_at.is_(None),
        )
        .order_by(k.created_at, k.id)
        # FOR UPDATE: their last message and read state are about to change.
        .with_for_update()
    )


async def senders(
    conn: Connection, workspace_id: str, numbers: list[str]
) -> dict[str, dict[str, Any]]:
    """number → the live contact whose WhatsApp number it is, else the (oldest) one whose
    sender phone it is, row-locked until the transaction ends."""
    if not numbers:
        return {}
    rows = await conn.fetch(
        _senders(conn.dialect), {"_ws": workspace_id, "_numbers": id_list(numbers, conn.dialect)}
    )
    found: dict[str, dict[str, Any]] = {}
    for row in rows:
        found.setdefault(row["platform_sender_phone"], row)
    for row in rows:  # a WhatsApp number wins over a sender phone
        if row["internal_whatsapp_number"] in numbers:
            found[row["internal_whatsapp_number"]] = row
    return {n: found[n] for n in numbers if n in found}


async def last_inbound(conn: Connection, workspace_id: str, contact_id: str) -> Row | None:
    return await conn.fetchrow(_LAST_INBOUND, {"_ws": workspace_id, "_contact": contact_id})


async def update_message(
    conn: Connection, workspace_id: str, message_id: str, values: dict[str, Any]
) -> int:
    return await conn.execute(_UPDATE, {"_ws": workspace_id, "_id": message_id, **values})


# Early statuses (messages/tables.py). A send is under way while its row is queued with an
# attempt stamped (channels/send_claims.py); `'queued'` inline, as the partial index says.
_SENDING_NOW = (
    select(c.id)
    .where(_WS, c.status == literal_column("'queued'"), c.attempt_started_at.isnot(None))
    .limit(1)
)
e = early_statuses.c
_KEEP_EARLY = {
    "postgresql": postgresql.insert(early_statuses).on_conflict_do_nothing(),
    "sqlite": sqlite.insert(early_statuses).on_conflict_do_nothing(),
}
_EARLY_OF = select(early_statuses).where(
    e.workspace_id == bindparam("_ws"), e.external_id == bindparam("_external")
)
_FORGET_EARLY = delete(early_statuses).where(
    e.workspace_id == bindparam("_ws"), e.external_id == bindparam("_external")
)
# Those whose wamid a message holds now: recorded by an answer that crossed the status.
_EARLY_MATCHED = (
    select(early_statuses.c.workspace_id, early_statuses.c.external_id)
    .join(
        messages,
        and_(c.workspace_id == e.workspace_id, c.external_id == e.external_id),
    )
    .distinct()
    .limit(bindparam("_limit"))
)
_ANY_EARLY = select(e.workspace_id).limit(1)
_EXPIRE_EARLY = delete(early_statuses).where(e.received_at < bindparam("_before"))


async def sending_now(conn: Connection, workspace_id: str) -> bool:
    """Whether a send of the workspace is under way (its outcome not yet recorded)."""
    return await conn.fetchrow(_SENDING_NOW, {"_ws": workspace_id}) is not None


async def keep_early(conn: Connection, row: dict[str, Any]) -> None:
    await conn.execute(_KEEP_EARLY[conn.dialect], row)


async def take_early(conn: Connection, workspace_id: str, external_id: str) -> list[Row]:
    """The statuses kept for a wamid, forgotten as they are taken."""
    params = {"_ws": workspace_id, "_external": external_id}
    rows = await conn.fetch(_EARLY_OF, params)
    if rows:
        await conn.execute(_FORGET_EARLY, params)
    return rows


async def any_early(conn: Connection) -> bool:
    return await conn.fetchrow(_ANY_EARLY, {}) is not None


async def early_matched(conn: Connection, limit: int) -> list[Row]:
    """(workspace_id, external_id) of kept statuses whose message has its wamid now."""
    return await conn.fetch(_EARLY_MATCHED, {"_limit": limit})


async def expire_early(conn: Connection, before: Any) -> None:
    await conn.execute(_EXPIRE_EARLY, {"_before": before})
