"""Opportunities, their activities and their code counters in the database.

As in contacts/repository.py, statements are built once with bound parameters and run on
the driver.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    Integer,
    Select,
    and_,
    bindparam,
    case,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.sql.elements import BindParameter

from chatcrm.core.timestamps import iso_sql
from chatcrm.db.database import Connection, Row
from chatcrm.db.jsonagg import json_array_of_objects, wire_columns
from chatcrm.db.schema import contacts, opportunities, opportunity_activities
from chatcrm.db.types import Money

o = opportunities.c
_WS: BindParameter[str] = bindparam("_ws")
_ID: BindParameter[str] = bindparam("_id")
_LIVE = (o.workspace_id == _WS, o.id == _ID, o.deleted_at.is_(None))


# Shown in answers: formatted by the database (core/timestamps.py), as is money.
_WIRE_TIMESTAMPS = {
    "win_loss_date",
    "created_at",
    "updated_at",
    "deleted_at",
    "order_in_cards_updated_at",
    "expiration_date",
}


@cache
def read_columns(dialect: str) -> tuple[Any, ...]:
    """An opportunity's columns and its activities (date order): what answers show. Only
    the opportunities table appears outside subqueries, so the list also serves RETURNING."""
    acts = opportunity_activities.c
    activity_list = json_array_of_objects(
        dialect=dialect,
        pairs=[
            ("id", acts.id),
            ("categoryType", acts.category),
            ("content", acts.content),
            ("date", iso_sql(acts.date, dialect)),
            ("createdBy", acts.created_by),
        ],
        from_=opportunity_activities,
        where=and_(acts.workspace_id == o.workspace_id, acts.opportunity_id == o.id),
        parent=opportunities,
        order_by=[acts.date, acts.id],
    )
    columns = wire_columns(
        opportunities, dialect, timestamps=_WIRE_TIMESTAMPS, money={"amount", "final_amount"}
    )
    return (*columns, activity_list.label("activities_json"))


@cache
def read_statement(dialect: str) -> Select[Any]:
    """An opportunity as answers show it (no WHERE yet)."""
    return select(*read_columns(dialect))


@cache
def _get_statement(dialect: str) -> Select[Any]:
    return read_statement(dialect).where(*_LIVE)


async def get(conn: Connection, workspace_id: str, opportunity_id: str) -> Row | None:
    return await conn.fetchrow(
        _get_statement(conn.dialect), {"_ws": workspace_id, "_id": opportunity_id}
    )


_LOCK = select(opportunities).where(*_LIVE).with_for_update()


async def lock(conn: Connection, workspace_id: str, opportunity_id: str) -> Row | None:
    """The live opportunity's columns, row-locked until the transaction ends (see contacts)."""
    return await conn.fetchrow(_LOCK, {"_ws": workspace_id, "_id": opportunity_id})


_INSERT = insert(opportunities)


async def insert_opportunity(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(_INSERT, values)


# The SET clause comes from the keys of the parameters: only the named fields are written.
_UPDATE = update(opportunities).where(o.workspace_id == _WS, o.id == _ID)


async def update_opportunity(
    conn: Connection, workspace_id: str, opportunity_id: str, values: dict[str, Any]
) -> None:
    await conn.execute(_UPDATE, {"_ws": workspace_id, "_id": opportunity_id, **values})


@cache
def _update_returning(dialect: str, versioned: bool, follow_amount: bool) -> Any:
    stmt = update(opportunities).where(*_LIVE)
    if versioned:
        stmt = stmt.where(o.version == bindparam("_version"))
    values: dict[str, Any] = {"version": o.version + 1}
    if follow_amount:
        values["final_amount"] = case(
            (o.final_amount_set, o.final_amount), else_=bindparam("_amount", type_=Money)
        )
    stmt = stmt.values(**values)
    if dialect == "sqlite":  # see contacts.repository._update_returning
        return stmt.returning(o.id)
    return stmt.returning(*read_columns(dialect))


async def update_returning(
    conn: Connection,
    workspace_id: str,
    opportunity_id: str,
    values: dict[str, Any],
    *,
    version: int | None,
    follow_amount: bool,
) -> Row | None:
    """Write `values` and bump the version of a live opportunity (of that version, if
    given) in one statement; with `follow_amount`, finalAmount takes the new amount unless
    it was set explicitly. The opportunity as answers show it, or None when no row matched."""
    params = {"_ws": workspace_id, "_id": opportunity_id, **values}
    if version is not None:
        params["_version"] = version
    if follow_amount:
        params["_amount"] = values["amount"]
    stmt = _update_returning(conn.dialect, version is not None, follow_amount)
    row = await conn.fetchrow(stmt, params)
    if row is not None and conn.dialect == "sqlite":
        return await get(conn, workspace_id, opportunity_id)
    return row


_NEXT_CARD = select(func.coalesce(func.max(o.order_in_cards), -1) + 1).where(
    o.workspace_id == _WS, o.stage_id == bindparam("_stage"), o.deleted_at.is_(None)
)


async def next_card_position(conn: Connection, workspace_id: str, stage_id: str) -> int:
    return int(await conn.fetchval(_NEXT_CARD, {"_ws": workspace_id, "_stage": stage_id}))


_LIVE_CONTACT = select(contacts.c.id).where(
    contacts.c.workspace_id == _WS, contacts.c.id == _ID, contacts.c.deleted_at.is_(None)
)


async def live_contact_exists(conn: Connection, workspace_id: str, contact_id: str) -> bool:
    row = await conn.fetchrow(_LIVE_CONTACT, {"_ws": workspace_id, "_id": contact_id})
    return row is not None


_NEXT_CODE = text(
    "INSERT INTO opportunity_code_counters (workspace_id, year, last_value) "
    "VALUES (:_ws, :_year, 1) "
    "ON CONFLICT (workspace_id, year) "
    "DO UPDATE SET last_value = opportunity_code_counters.last_value + 1 "
    "RETURNING last_value"
).columns(last_value=Integer)


async def next_code_number(conn: Connection, workspace_id: str, year: int) -> int:
    """The next number of the workspace's yearly sequence, inside the caller's transaction.

    The upsert row-locks the counter until commit (PostgreSQL), or runs under the write
    lock (SQLite), so concurrent creates queue on it and draw distinct numbers; a rolled
    back create gives its number back, so the sequence has no gaps.
    """
    return int(await conn.fetchval(_NEXT_CODE, {"_ws": workspace_id, "_year": year}))


_MARK_UPDATED = (
    update(opportunities)
    .where(o.workspace_id == _WS, o.id == _ID)
    .values(version=o.version + 1, updated_at=bindparam("_now"), modified_at=bindparam("_now"))
)


async def mark_updated(
    conn: Connection, workspace_id: str, opportunity_id: str, now: datetime
) -> None:
    """An activity counts as a change: bump the version and updatedDate."""
    await conn.execute(_MARK_UPDATED, {"_ws": workspace_id, "_id": opportunity_id, "_now": now})


_INSERT_ACTIVITY = insert(opportunity_activities)


async def insert_activity(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(_INSERT_ACTIVITY, values)
