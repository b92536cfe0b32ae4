"""Contacts in the database (SQLAlchemy Core; rows, never ORM objects)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, and_, delete, func, insert, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.db.jsonagg import iso_text, json_array_of_objects
from chatcrm.db.schema import agents, contact_activities, contact_tags, contacts, tags


@cache
def _read_statement(dialect: str) -> Select[Any]:
    """A contact with its agent's name and its tags, as one statement."""
    tag_list = json_array_of_objects(
        dialect=dialect,
        pairs=[
            ("id", tags.c.id),
            ("name", tags.c.name),
            ("color", tags.c.color),
            ("assignmentDate", iso_text(contact_tags.c.assigned_at, dialect)),
        ],
        from_=contact_tags.join(
            tags,
            and_(
                tags.c.workspace_id == contact_tags.c.workspace_id,
                tags.c.id == contact_tags.c.tag_id,
            ),
        ),
        where=and_(
            contact_tags.c.workspace_id == contacts.c.workspace_id,
            contact_tags.c.contact_id == contacts.c.id,
        ),
        parent=contacts,
        order_by=[contact_tags.c.position],
    )
    return select(
        contacts,
        agents.c.name.label("agent_name"),
        tag_list.label("tags_json"),
    ).select_from(
        contacts.outerjoin(
            agents,
            and_(
                agents.c.workspace_id == contacts.c.workspace_id,
                agents.c.id == contacts.c.assigned_agent_id,
            ),
        )
    )


def read_statement(dialect: str) -> Select[Any]:
    return _read_statement(dialect)


async def get(conn: AsyncConnection, workspace_id: str, contact_id: str) -> RowMapping | None:
    """A live contact with agent name and tags, or None."""
    stmt = read_statement(conn.dialect.name).where(
        contacts.c.workspace_id == workspace_id,
        contacts.c.id == contact_id,
        contacts.c.deleted_at.is_(None),
    )
    return (await conn.execute(stmt)).mappings().first()


async def lock(conn: AsyncConnection, workspace_id: str, contact_id: str) -> RowMapping | None:
    """The live contact's own columns, row-locked until the transaction ends.

    PostgreSQL: FOR UPDATE, so concurrent updates of one contact apply one after the other
    and none is lost. SQLite: the transaction already holds the database write lock.
    """
    stmt = (
        select(contacts)
        .where(
            contacts.c.workspace_id == workspace_id,
            contacts.c.id == contact_id,
            contacts.c.deleted_at.is_(None),
        )
        .with_for_update()
    )
    return (await conn.execute(stmt)).mappings().first()


async def insert_contact(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(contacts).values(**values))


async def update_contact(
    conn: AsyncConnection, workspace_id: str, contact_id: str, values: dict[str, Any]
) -> None:
    await conn.execute(
        update(contacts)
        .where(contacts.c.workspace_id == workspace_id, contacts.c.id == contact_id)
        .values(**values)
    )


async def next_card_position(conn: AsyncConnection, workspace_id: str, stage_id: str) -> int:
    """max + 1 of the stage column among live contacts; 0 in an empty column."""
    result = await conn.execute(
        select(func.coalesce(func.max(contacts.c.order_in_cards), -1) + 1).where(
            contacts.c.workspace_id == workspace_id,
            contacts.c.stage_id == stage_id,
            contacts.c.deleted_at.is_(None),
        )
    )
    return int(result.scalar_one())


async def find_live_by_phone(
    conn: AsyncConnection, workspace_id: str, phone: str, *, exclude: str | None = None
) -> str | None:
    stmt = select(contacts.c.id).where(
        contacts.c.workspace_id == workspace_id,
        contacts.c.internal_whatsapp_number == phone,
        contacts.c.deleted_at.is_(None),
    )
    if exclude is not None:
        stmt = stmt.where(contacts.c.id != exclude)
    return (await conn.execute(stmt.limit(1))).scalar_one_or_none()


async def find_live_by_email_key(
    conn: AsyncConnection, workspace_id: str, email_key: str, *, exclude: str | None = None
) -> str | None:
    stmt = select(contacts.c.id).where(
        contacts.c.workspace_id == workspace_id,
        contacts.c.email_key == email_key,
        contacts.c.deleted_at.is_(None),
    )
    if exclude is not None:
        stmt = stmt.where(contacts.c.id != exclude)
    return (await conn.execute(stmt.limit(1))).scalar_one_or_none()


async def tag_assignments(
    conn: AsyncConnection, workspace_id: str, contact_id: str
) -> dict[str, datetime]:
    result = await conn.execute(
        select(contact_tags.c.tag_id, contact_tags.c.assigned_at).where(
            contact_tags.c.workspace_id == workspace_id, contact_tags.c.contact_id == contact_id
        )
    )
    return {row.tag_id: row.assigned_at for row in result}


async def replace_tags(
    conn: AsyncConnection,
    workspace_id: str,
    contact_id: str,
    tag_ids: Iterable[str],
    *,
    kept: dict[str, datetime],
    now: datetime,
) -> None:
    """Make the contact's tags exactly `tag_ids`, in that order; kept tags keep their date."""
    ordered = list(tag_ids)
    await conn.execute(
        delete(contact_tags).where(
            contact_tags.c.workspace_id == workspace_id, contact_tags.c.contact_id == contact_id
        )
    )
    if ordered:
        await conn.execute(
            insert(contact_tags),
            [
                {
                    "workspace_id": workspace_id,
                    "contact_id": contact_id,
                    "tag_id": tag_id,
                    "position": position,
                    "assigned_at": kept.get(tag_id, now),
                }
                for position, tag_id in enumerate(ordered)
            ],
        )


async def soft_delete(
    conn: AsyncConnection, workspace_id: str, contact_ids: list[str], *, key_id: str, now: datetime
) -> set[str]:
    """Mark live contacts deleted (rows stay: nothing is lost); returns the ids deleted."""
    if not contact_ids:
        return set()
    result = await conn.execute(
        update(contacts)
        .where(
            contacts.c.workspace_id == workspace_id,
            contacts.c.id.in_(contact_ids),
            contacts.c.deleted_at.is_(None),
        )
        .values(
            deleted_at=now,
            deleted_by=key_id,
            modified_at=now,
            version=contacts.c.version + 1,
        )
        .returning(contacts.c.id)
    )
    return set(result.scalars())


async def is_live(conn: AsyncConnection, workspace_id: str, contact_id: str) -> bool:
    result = await conn.execute(
        select(contacts.c.id).where(
            contacts.c.workspace_id == workspace_id,
            contacts.c.id == contact_id,
            contacts.c.deleted_at.is_(None),
        )
    )
    return result.first() is not None


async def insert_activity(conn: AsyncConnection, values: dict[str, Any]) -> None:
    await conn.execute(insert(contact_activities).values(**values))


def activities_statement(workspace_id: str, contact_id: str) -> Select[Any]:
    acts = contact_activities.c
    return select(acts.id, acts.content, acts.created_at, acts.created_by).where(
        acts.workspace_id == workspace_id, acts.contact_id == contact_id
    )
