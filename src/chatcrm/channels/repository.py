"""Channel statements. The workspace's own by (workspace, id); Meta's webhook finds a
channel by its id alone (a reference table on Citus: one copy on every node)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, delete, insert, select, true, update

from chatcrm.channels.tables import channels
from chatcrm.db.database import Connection, Row

c = channels.c
_ONE = (c.workspace_id == bindparam("_ws"), c.id == bindparam("_id"))

_INSERT = insert(channels)
_GET = select(channels).where(*_ONE)
_BY_ID = select(channels).where(c.id == bindparam("_id"))
_BY_PHONE_NUMBER_ID = select(c.id).where(c.phone_number_id == bindparam("_pn"))
_LIST = select(channels).where(c.workspace_id == bindparam("_ws")).order_by(c.created_at, c.id)
# The sending channel of a workspace: its oldest enabled WhatsApp channel.
_SENDING = (
    select(channels)
    .where(c.workspace_id == bindparam("_ws"), c.enabled == true())
    .order_by(c.created_at, c.id)
    .limit(1)
)
_UPDATE = update(channels).where(*_ONE)
_DELETE = delete(channels).where(*_ONE)


async def insert_channel(conn: Connection, row: dict[str, Any]) -> None:
    await conn.execute(_INSERT, row)


async def get(conn: Connection, workspace_id: str, channel_id: str) -> Row | None:
    return await conn.fetchrow(_GET, {"_ws": workspace_id, "_id": channel_id})


async def by_id(conn: Connection, channel_id: str) -> Row | None:
    return await conn.fetchrow(_BY_ID, {"_id": channel_id})


async def holder_of(conn: Connection, phone_number_id: str) -> str | None:
    return await conn.fetchval(_BY_PHONE_NUMBER_ID, {"_pn": phone_number_id})


async def list_all(conn: Connection, workspace_id: str) -> list[Row]:
    return await conn.fetch(_LIST, {"_ws": workspace_id})


async def sending(conn: Connection, workspace_id: str) -> Row | None:
    return await conn.fetchrow(_SENDING, {"_ws": workspace_id})


async def update_channel(
    conn: Connection, workspace_id: str, channel_id: str, columns: dict[str, Any]
) -> bool:
    changed = await conn.execute(_UPDATE, {"_ws": workspace_id, "_id": channel_id, **columns})
    return changed > 0


async def delete_channel(conn: Connection, workspace_id: str, channel_id: str) -> bool:
    return await conn.execute(_DELETE, {"_ws": workspace_id, "_id": channel_id}) > 0
