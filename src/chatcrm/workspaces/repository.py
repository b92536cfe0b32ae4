"""Workspaces and their set-up items (stages, tags, segmentations, agents) in the database."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, Table, bindparam, insert, select, update
from sqlalchemy.sql.elements import BindParameter

from chatcrm.db import locks
from chatcrm.db.database import Connection, Row
from chatcrm.db.schema import workspaces
from chatcrm.records.fields import FULL
from chatcrm.workspaces.fields import WORKSPACE

_WS: BindParameter[str] = bindparam("_ws")
_TOUCH = update(workspaces).where(workspaces.c.id == _WS).values(updated_at=bindparam("_now"))
# Listings for operators (`chatcrm workspace list`), oldest first.
_LISTING = select(
    workspaces.c.id, workspaces.c.account_id, workspaces.c.name, workspaces.c.created_at
).order_by(workspaces.c.created_at, workspaces.c.id)
_ACCOUNT_LISTING = _LISTING.where(workspaces.c.account_id == bindparam("_account"))


_NAMES_SEED = 0x77_6F_72_6B  # this lock's own among the account-keyed advisory locks
_ACCOUNT_NAMES = select(workspaces.c.name).where(workspaces.c.account_id == bindparam("_account"))


async def account_names(conn: Connection, account_id: str) -> set[str]:
    """The names of the account's workspaces, once no other create of the account can
    add one before this transaction ends."""
    await locks.hold(conn, _NAMES_SEED, account_id)
    return {row["name"] for row in await conn.fetch(_ACCOUNT_NAMES, {"_account": account_id})}


@cache
def _insert(table: Table) -> Any:
    return insert(table)


async def insert_row(conn: Connection, table: Table, values: dict[str, Any]) -> None:
    await conn.execute(_insert(table), values)


async def update_workspace(conn: Connection, workspace_id: str, columns: dict[str, Any]) -> None:
    await conn.execute(
        update(workspaces).where(workspaces.c.id == _WS).values(**columns), {"_ws": workspace_id}
    )


_SEE_ONLY_ASSIGNED = select(workspaces.c.agents_see_only_assigned).where(workspaces.c.id == _WS)


async def agents_see_only_assigned(conn: Connection, workspace_id: str) -> bool:
    return bool(await conn.fetchval(_SEE_ONLY_ASSIGNED, {"_ws": workspace_id}))


async def touch_workspace(conn: Connection, workspace_id: str, now: datetime) -> None:
    await conn.execute(_TOUCH, {"_ws": workspace_id, "_now": now})


@cache
def _view_statement(dialect: str) -> Select[Any]:
    columns = WORKSPACE.select_list(workspaces, FULL, dialect)
    return select(*columns).where(workspaces.c.id == _WS)


async def workspace_view(conn: Connection, workspace_id: str) -> Row | None:
    """The workspace with its stages, segmentations, tags and agents: one statement."""
    return await conn.fetchrow(_view_statement(conn.dialect), {"_ws": workspace_id})


async def list_workspaces(conn: Connection, account_id: str | None = None) -> list[Row]:
    """id, account_id, name, created_at of the workspaces of one account, or of all."""
    if account_id is None:
        return await conn.fetch(_LISTING)
    return await conn.fetch(_ACCOUNT_LISTING, {"_account": account_id})
