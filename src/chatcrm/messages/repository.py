"""Message statements: every one filters on the workspace by equality first (one shard on
Citus)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import and_, bindparam, insert, or_, select, update

from chatcrm.db.database import Connection, Row
from chatcrm.messages.record import IN
from chatcrm.messages.tables import messages

c = messages.c
_WS = c.workspace_id == bindparam("_ws")
_ONE = (_WS, c.id == bindparam("_id"))

_INSERT = insert(messages)
_GET = select(messages).where(*_ONE)
_LOCK = select(messages).where(*_ONE).with_for_update()
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


async def get(conn: Connection, workspace_id: str, message_id: str) -> Row | None:
    return await conn.fetchrow(_GET, {"_ws": workspace_id, "_id": message_id})


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


async def last_inbound(conn: Connection, workspace_id: str, contact_id: str) -> Row | None:
    return await conn.fetchrow(_LAST_INBOUND, {"_ws": workspace_id, "_contact": contact_id})


async def update_message(
    conn: Connection, workspace_id: str, message_id: str, values: dict[str, Any]
) -> int:
    return await conn.execute(_UPDATE, {"_ws": workspace_id, "_id": message_id, **values})


def due_at(row: Row) -> datetime | None:
    value: datetime | None = row["next_attempt_at"]
    return value
