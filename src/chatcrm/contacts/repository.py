"""Contacts in the database (SQLAlchemy Core; rows, never ORM objects).

Statements are built once, with bound parameters, compiled once per dialect and run on the
driver (db/compiled.py): no statement is rebuilt or recompiled per request.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, and_, bindparam, delete, func, insert, select, update
from sqlalchemy.sql.elements import BindParameter

from chatcrm.core.timestamps import iso_sql
from chatcrm.db.database import Connection, Row
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.jsonagg import json_array_of_objects, wire_columns
from chatcrm.db.schema import agents, contact_activities, contact_tags, contacts, tags

c = contacts.c
_WS: BindParameter[str] = bindparam("_ws")
_ID: BindParameter[str] = bindparam("_id")
_LIVE = (c.workspace_id == _WS, c.id == _ID, c.deleted_at.is_(None))


# Shown in answers: formatted by the database (core/timestamps.py). The row's created_at is then
# text too; the keyset reads it back (db/keyset.py).
_WIRE_TIMESTAMPS = {
    "created_at",
    "last_message_date",
    "order_in_cards_updated_at",
    "solved_date",
}


@cache
def read_columns(dialect: str) -> tuple[Any, ...]:
    """A contact's columns, its agent's name and its tags: what every contact answer shows.

    Only the contacts table appears outside subqueries, so the same list serves a SELECT
    and an UPDATE … RETURNING (an update is then a single statement)."""
    tag_list = json_array_of_objects(
        dialect=dialect,
        pairs=[
            ("id", tags.c.id),
            ("name", tags.c.name),
            ("color", tags.c.color),
            ("assignmentDate", iso_sql(contact_tags.c.assigned_at, dialect)),
        ],
        from_=contact_tags.join(
            tags,
            and_(
                tags.c.workspace_id == contact_tags.c.workspace_id,
                tags.c.id == contact_tags.c.tag_id,
            ),
        ),
        where=and_(
            contact_tags.c.workspace_id == c.workspace_id,
            contact_tags.c.contact_id == c.id,
        ),
        parent=contacts,
        order_by=[contact_tags.c.position],
    )
    agent_name = (
        select(agents.c.name)
        .where(agents.c.workspace_id == c.workspace_id, agents.c.id == c.assigned_agent_id)
        .scalar_subquery()
    )
    columns = wire_columns(contacts, dialect, timestamps=_WIRE_TIMESTAMPS)
    return (*columns, agent_name.label("agent_name"), tag_list.label("tags_json"))


@cache
def read_statement(dialect: str) -> Select[Any]:
    """A contact as answers show it (no WHERE yet)."""
    return select(*read_columns(dialect))


@cache
def _get_statement(dialect: str) -> Select[Any]:
    return read_statement(dialect).where(*_LIVE)


async def get(conn: Connection, workspace_id: str, contact_id: str) -> Row | None:
    """A live contact with agent name and tags, or None."""
    return await conn.fetchrow(
        _get_statement(conn.dialect), {"_ws": workspace_id, "_id": contact_id}
    )


# PostgreSQL: FOR UPDATE, so concurrent updates of one contact apply one after the other and
# none is lost. SQLite ignores it: the transaction already holds the database write lock.
_LOCK = select(contacts).where(*_LIVE).with_for_update()


async def lock(conn: Connection, workspace_id: str, contact_id: str) -> Row | None:
    """The live contact's own columns, row-locked until the transaction ends."""
    return await conn.fetchrow(_LOCK, {"_ws": workspace_id, "_id": contact_id})


_INSERT = insert(contacts)


async def insert_contact(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(_INSERT, values)


# The SET clause comes from the keys of the parameters: only the named fields are written.
_UPDATE = update(contacts).where(c.workspace_id == _WS, c.id == _ID)


@cache
def _update_returning(dialect: str, versioned: bool) -> Any:
    stmt = update(contacts).where(*_LIVE)
    if versioned:
        stmt = stmt.where(c.version == bindparam("_version"))
    stmt = stmt.values(version=c.version + 1)
    if dialect == "sqlite":
        # SQLite's RETURNING cannot hold the correlated subqueries (SQLAlchemy renders its
        # columns unqualified); the read that follows is in-process and cheap there.
        return stmt.returning(c.id)
    return stmt.returning(*read_columns(dialect))


async def update_returning(
    conn: Connection,
    workspace_id: str,
    contact_id: str,
    values: dict[str, Any],
    *,
    version: int | None,
) -> Row | None:
    """Write `values` and bump the version of a live contact (of that version, if given) in
    one statement; the contact as answers show it, or None when no row matched."""
    params = {"_ws": workspace_id, "_id": contact_id, **values}
    if version is not None:
        params["_version"] = version
    row = await conn.fetchrow(_update_returning(conn.dialect, version is not None), params)
    if row is not None and conn.dialect == "sqlite":
        return await get(conn, workspace_id, contact_id)
    return row


async def update_contact(
    conn: Connection, workspace_id: str, contact_id: str, values: dict[str, Any]
) -> None:
    await conn.execute(_UPDATE, {"_ws": workspace_id, "_id": contact_id, **values})


_NEXT_CARD = select(func.coalesce(func.max(c.order_in_cards), -1) + 1).where(
    c.workspace_id == _WS, c.stage_id == bindparam("_stage"), c.deleted_at.is_(None)
)


async def next_card_position(conn: Connection, workspace_id: str, stage_id: str) -> int:
    """max + 1 of the stage column among live contacts; 0 in an empty column."""
    return int(await conn.fetchval(_NEXT_CARD, {"_ws": workspace_id, "_stage": stage_id}))


def _find_live(column: Any) -> tuple[Select[Any], Select[Any]]:
    """(by value, by value excluding one contact): the owner of a unique phone or email."""
    base = (
        select(c.id)
        .where(c.workspace_id == _WS, column == bindparam("_value"), c.deleted_at.is_(None))
        .limit(1)
    )
    return base, base.where(c.id != bindparam("_exclude"))


_BY_PHONE = _find_live(c.internal_whatsapp_number)
_BY_EMAIL_KEY = _find_live(c.email_key)


async def _owner(
    conn: Connection,
    statements: tuple[Select[Any], Select[Any]],
    workspace_id: str,
    value: str,
    exclude: str | None,
) -> str | None:
    params = {"_ws": workspace_id, "_value": value}
    if exclude is None:
        return await conn.fetchval(statements[0], params)
    params["_exclude"] = exclude
    return await conn.fetchval(statements[1], params)


async def find_live_by_phone(
    conn: Connection, workspace_id: str, phone: str, *, exclude: str | None = None
) -> str | None:
    return await _owner(conn, _BY_PHONE, workspace_id, phone, exclude)


async def find_live_by_email_key(
    conn: Connection, workspace_id: str, email_key: str, *, exclude: str | None = None
) -> str | None:
    return await _owner(conn, _BY_EMAIL_KEY, workspace_id, email_key, exclude)


_ct = contact_tags.c
_TAGS_OF = (_ct.workspace_id == _WS, _ct.contact_id == _ID)
_TAG_ASSIGNMENTS = select(_ct.tag_id, _ct.assigned_at).where(*_TAGS_OF)
_DELETE_TAGS = delete(contact_tags).where(*_TAGS_OF)
_INSERT_TAG = insert(contact_tags)


async def tag_assignments(
    conn: Connection, workspace_id: str, contact_id: str
) -> dict[str, datetime]:
    rows = await conn.fetch(_TAG_ASSIGNMENTS, {"_ws": workspace_id, "_id": contact_id})
    return {row["tag_id"]: row["assigned_at"] for row in rows}


async def replace_tags(
    conn: Connection,
    workspace_id: str,
    contact_id: str,
    tag_ids: Iterable[str],
    *,
    kept: dict[str, datetime],
    now: datetime,
) -> None:
    """Make the contact's tags exactly `tag_ids`, in that order; kept tags keep their date."""
    ordered = list(tag_ids)
    await conn.execute(_DELETE_TAGS, {"_ws": workspace_id, "_id": contact_id})
    if ordered:
        await conn.executemany(
            _INSERT_TAG,
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


@cache
def soft_delete_statement(dialect: str) -> Any:
    return (
        update(contacts)
        .where(
            c.workspace_id == _WS,
            in_id_list(c.id, "_ids", dialect),
            c.deleted_at.is_(None),
        )
        .values(
            deleted_at=bindparam("_now"),
            deleted_by=bindparam("_key"),
            modified_at=bindparam("_now"),
            version=c.version + 1,
        )
        .returning(c.id)
    )


async def soft_delete(
    conn: Connection, workspace_id: str, contact_ids: list[str], *, key_id: str, now: datetime
) -> set[str]:
    """Mark live contacts deleted (rows stay: nothing is lost); returns the ids deleted."""
    if not contact_ids:
        return set()
    rows = await conn.fetch(
        soft_delete_statement(conn.dialect),
        {
            "_ws": workspace_id,
            "_ids": id_list(contact_ids, conn.dialect),
            "_key": key_id,
            "_now": now,
        },
    )
    return {row["id"] for row in rows}


_IS_LIVE = select(c.id).where(*_LIVE)


async def is_live(conn: Connection, workspace_id: str, contact_id: str) -> bool:
    return await conn.fetchrow(_IS_LIVE, {"_ws": workspace_id, "_id": contact_id}) is not None


_INSERT_ACTIVITY = insert(contact_activities)


async def insert_activity(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(_INSERT_ACTIVITY, values)


_acts = contact_activities.c
_ACTIVITIES = select(_acts.id, _acts.content, _acts.created_at, _acts.created_by).where(
    _acts.workspace_id == _WS, _acts.contact_id == bindparam("_contact")
)


def activities_statement() -> Select[Any]:
    """A contact's activities; parameters `_ws` and `_contact`."""
    return _ACTIVITIES
