"""Opportunities, their activities and their code counters in the database."""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, and_, func, insert, select, text, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.db.jsonagg import iso_text, json_array_of_objects
from chatcrm.db.schema import contacts, opportunities, opportunity_activities


@cache
def _read_statement(dialect: str) -> Select[Any]:
    """An opportunity with its activities (date order), as one statement."""
    acts = opportunity_activities
    activity_list = json_array_of_objects(
        dialect=dialect,
        pairs=[
            ("id", acts.c.id),
            ("categoryType", acts.c.category),
            ("content", acts.c.content),
            ("date", iso_text(acts.c.date, dialect)),
            ("createdBy", acts.c.created_by),
        ],
        from_=acts,
        where=and_(
            acts.c.workspace_id == opportunities.c.workspace_id,
            acts.c.opportunity_id == opportunities.c.id,
        ),
        parent=opportunities,
        order_by=[acts.c.date, acts.c.id],
    )
    return select(opportunities, activity_list.label("activities_json"))


def read_statement(dialect: str) -> Select[Any]:
    return _read_statement(dialect)


async def get(conn: AsyncConnection, workspace_id: str, opportunity_id: str) -> RowMapping | None:
    stmt = read_statement(conn.dialect.name).where(
        opportunities.c.workspace_id == workspace_id,
        opportunities.c.id == opportunity_id,
        opportunities.c.deleted_at.is_(None),
    )
    return (await conn.execute(stmt)).mappings().first()


async def lock(conn: AsyncConnection, workspace_id: str, opportunity_id: str) -> RowMapping | None:
    """The live opportunity's columns, row-locked until the transaction ends (see contacts)."""
    stmt = (
        select(opportunities)
        .where(
            opportunities.c.workspace_id == workspace_id,
            opportunities.c.id == opportunity_id,
            opportunities.c.deleted_at.is_(None),
        )
        .with_for_update()
    )
    return (await conn.execute(stmt)).mappings().first()


async def insert_opportunity(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(opportunities).values(**values))


async def update_opportunity(
    conn: AsyncConnection, workspace_id: str, opportunity_id: str, values: dict[str, Any]
) -> None:
    await conn.execute(
        update(opportunities)
        .where(opportunities.c.workspace_id == workspace_id, opportunities.c.id == opportunity_id)
        .values(**values)
    )


async def next_card_position(conn: AsyncConnection, workspace_id: str, stage_id: str) -> int:
    result = await conn.execute(
        select(func.coalesce(func.max(opportunities.c.order_in_cards), -1) + 1).where(
            opportunities.c.workspace_id == workspace_id,
            opportunities.c.stage_id == stage_id,
            opportunities.c.deleted_at.is_(None),
        )
    )
    return int(result.scalar_one())


async def live_contact_exists(conn: AsyncConnection, workspace_id: str, contact_id: str) -> bool:
    result = await conn.execute(
        select(contacts.c.id).where(
            contacts.c.workspace_id == workspace_id,
            contacts.c.id == contact_id,
            contacts.c.deleted_at.is_(None),
        )
    )
    return result.first() is not None


_NEXT_CODE = text(
    "INSERT INTO opportunity_code_counters (workspace_id, year, last_value) "
    "VALUES (:workspace_id, :year, 1) "
    "ON CONFLICT (workspace_id, year) "
    "DO UPDATE SET last_value = opportunity_code_counters.last_value + 1 "
    "RETURNING last_value"
)


async def next_code_number(conn: AsyncConnection, workspace_id: str, year: int) -> int:
    """The next number of the workspace's yearly sequence, inside the caller's transaction.

    The upsert row-locks the counter until commit (PostgreSQL), or runs under the write
    lock (SQLite), so concurrent creates queue on it and draw distinct numbers; a rolled
    back create gives its number back, so the sequence has no gaps.
    """
    result = await conn.execute(_NEXT_CODE, {"workspace_id": workspace_id, "year": year})
    return int(result.scalar_one())


async def mark_updated(
    conn: AsyncConnection, workspace_id: str, opportunity_id: str, now: datetime
) -> None:
    """An activity counts as a change: bump the version and updatedDate."""
    await conn.execute(
        update(opportunities)
        .where(opportunities.c.workspace_id == workspace_id, opportunities.c.id == opportunity_id)
        .values(
            version=opportunities.c.version + 1,
            updated_at=now,
            modified_at=now,
        )
    )


async def insert_activity(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(opportunity_activities).values(**values))
