"""Opportunities, their activities and their code counters in the database.

As in contacts/repository.py, statements are built once with bound parameters and run on
the driver.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Integer, Select, and_, bindparam, func, insert, select, text, update
from sqlalchemy.sql.elements import BindParameter

from chatcrm.db.database import Connection, Row
from chatcrm.db.jsonagg import iso_text, json_array_of_objects
from chatcrm.db.schema import contacts, opportunities, opportunity_activities

o = opportunities.c
_WS: BindParameter[str] = bindparam("_ws")
_ID: BindParameter[str] = bindparam("_id")
_LIVE = (o.workspace_id == _WS, o.id == _ID, o.deleted_at.is_(None))


@cache
def read_statement(dialect: str) -> Select[Any]:
    """An opportunity with its activities (date order), as one statement (no WHERE yet)."""
    acts = opportunity_activities.c
    activity_list = json_array_of_objects(
        dialect=dialect,
        pairs=[
            ("id", acts.id),
            ("categoryType", acts.category),
            ("content", acts.content),
            ("date", iso_text(acts.date, dialect)),
            ("createdBy", acts.created_by),
        ],
        from_=opportunity_activities,
        where=and_(acts.workspace_id == o.workspace_id, acts.opportunity_id == o.id),
        parent=opportunities,
        order_by=[acts.date, acts.id],
    )
    return select(opportunities, activity_list.label("activities_json"))


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
