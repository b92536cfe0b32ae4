"""Activity logs of records (a contact's notes, an opportunity's calls and meetings): the
same flow for both, over an activity kind (its field table, its table, its record kind)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, Table, bindparam, insert, select

from chatcrm.core.errors import require_valid
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.pagination import TokenCodec
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db.database import Connection
from chatcrm.db.keyset import list_with_token
from chatcrm.events.outbox import write_event
from chatcrm.records import bodies, statements
from chatcrm.records.defaults import Creation
from chatcrm.records.fields import FULL, FieldTable
from chatcrm.records.kind import RecordKind
from chatcrm.records.references import live_record_exists
from chatcrm.records.writing import fill


@dataclass(frozen=True, eq=False)
class ActivityKind:
    fields: FieldTable  # the body of a new activity, and its shape
    table: Table
    owner: RecordKind
    owner_column: str  # the column naming the record the activity is of
    date_column: str  # its order: oldest first
    # A new activity is a change of its record: version and updatedDate move (opportunities).
    changes_owner: bool = False


async def add(
    conn: Connection,
    activities: ActivityKind,
    *,
    workspace_id: str,
    record_id: str,
    key_id: str,
    body: dict[str, Any],
) -> None:
    given = bodies.create_body(activities.fields, body)
    require_valid(given.errors)
    owner = activities.owner
    if not is_id(record_id):
        raise owner.not_found(record_id)
    now = utcnow()
    await conn.begin()
    if activities.changes_owner:
        if await statements.lock(conn, owner, workspace_id, record_id) is None:
            raise owner.not_found(record_id)
    elif not await live_record_exists(conn, owner.table, workspace_id, record_id, for_write=True):
        raise owner.not_found(record_id)
    creation = Creation(conn, workspace_id, new_id(), key_id, now, {})
    await fill(activities.fields, given, creation)
    values = {"workspace_id": workspace_id, activities.owner_column: record_id, "created_at": now}
    for f in activities.fields:
        values.update(f.store(creation.values[f.wire]))
    await conn.execute(_insert_statement(activities), values)
    if activities.changes_owner:
        touched = {"modified_at": now, **dict.fromkeys(owner.touch, now)}
        await statements.update_record(conn, owner, workspace_id, record_id, touched)
    await write_event(
        conn,
        workspace_id=workspace_id,
        type=f"{owner.name}.activity.created",
        record_id=record_id,
        record_version=await statements.version(conn, owner, workspace_id, record_id),
        changed=[],
        data={f"{owner.name}Id": record_id, "activity": _event_activity(activities, creation)},
        now=now,
    )


def _event_activity(activities: ActivityKind, creation: Creation) -> dict[str, Any]:
    """An activity as events show it (contract D.1): `{id, categoryType, content, date,
    createdBy}`, categoryType null where the kind has none (a contact's)."""
    values = creation.values
    shown = {f.wire: values[f.wire] for f in activities.fields.shape(FULL)}
    return {
        key: iso(value) if isinstance(value, datetime) else value
        for key, value in (
            ("id", shown["id"]),
            ("categoryType", shown.get("categoryType")),
            ("content", shown["content"]),
            ("date", shown["date"]),
            ("createdBy", shown["createdBy"]),
        )
    }


@cache
def _insert_statement(activities: ActivityKind) -> Any:
    return insert(activities.table)


@cache
def _list_statement(activities: ActivityKind, dialect: str) -> Select[Any]:
    c = activities.table.c
    return select(*activities.fields.select_list(activities.table, "full", dialect)).where(
        c.workspace_id == bindparam("_ws"), c[activities.owner_column] == bindparam("_owner")
    )


async def list_page(
    conn: Connection,
    activities: ActivityKind,
    codec: TokenCodec,
    *,
    workspace_id: str,
    record_id: str,
    token: str | None,
    size: int,
) -> tuple[list[dict[str, Any]], str | None]:
    """A record's activities, oldest first, in keyset pages (404 for an unknown record)."""
    owner = activities.owner
    if not await live_record_exists(conn, owner.table, workspace_id, record_id):
        raise owner.not_found(record_id)
    c = activities.table.c
    return await list_with_token(
        conn,
        codec,
        _list_statement(activities, conn.dialect),
        {"_ws": workspace_id, "_owner": record_id},
        scope=f"{owner.name}-activities:{workspace_id}:{record_id}",
        digest="",
        token=token,
        size=size,
        created=c[activities.date_column],
        ident=c.id,
        newest_first=False,
        created_key="date",
    )


@cache
def _all_statement(activities: ActivityKind, dialect: str) -> Select[Any]:
    c = activities.table.c
    return _list_statement(activities, dialect).order_by(c[activities.date_column], c.id)


async def list_all(
    conn: Connection, activities: ActivityKind, *, workspace_id: str, record_id: str
) -> list[dict[str, Any]]:
    """All of a live record's activities, oldest first, in one answer (the original
    service's newer list has no pages: contract E.1); 404 for an unknown record."""
    owner = activities.owner
    if not await live_record_exists(conn, owner.table, workspace_id, record_id):
        raise owner.not_found(record_id)
    return await conn.fetch(
        _all_statement(activities, conn.dialect), {"_ws": workspace_id, "_owner": record_id}
    )
