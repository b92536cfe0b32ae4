"""The statements of a record kind, built from its tables once per dialect and reused with
bound parameters (db/compiled.py compiles each once).

Reads select the record already in wire form (records/fields.py): the row IS the answer's
record, keys in contract order, so nothing is converted or re-ordered in Python.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, NewType

from sqlalchemy import ColumnElement, Select, bindparam, func, insert, select, update

from chatcrm.core.values import INT32_MAX
from chatcrm.db.database import Connection
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.records.kind import RecordKind

# The stored columns of a record (datetimes, decimals), read under its row lock.
Stored = NewType("Stored", dict[str, Any])


@dataclass(frozen=True, slots=True)
class View:
    """A record as an answer shows it: its wire keys in contract order, and its version
    (for its ETag)."""

    version: int
    record: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.record["id"])


def view_of(row: dict[str, Any]) -> View:
    """A row selected in a shape, with its `_version`, as a View."""
    version = row.pop("_version")
    return View(version=version, record=row)


def _view(row: dict[str, Any] | None) -> View | None:
    return None if row is None else view_of(row)


def live_filter(kind: RecordKind) -> tuple[ColumnElement[bool], ...]:
    c = kind.table.c
    return (c.workspace_id == bindparam("_ws"), c.id == bindparam("_id"), c.deleted_at.is_(None))


@cache
def shape_statement(kind: RecordKind, shape: str, dialect: str) -> Select[Any]:
    """A record in a shape, with its version (no WHERE yet)."""
    columns = kind.fields.select_list(kind.table, shape, dialect)
    return select(*columns, kind.table.c.version.label("_version"))


@cache
def _get_statement(kind: RecordKind, shape: str, dialect: str) -> Select[Any]:
    return shape_statement(kind, shape, dialect).where(*live_filter(kind))


async def get(
    conn: Connection, kind: RecordKind, workspace_id: str, record_id: str, shape: str
) -> View | None:
    """A live record in a shape, or None."""
    row = await conn.fetchrow(
        _get_statement(kind, shape, conn.dialect), {"_ws": workspace_id, "_id": record_id}
    )
    return _view(row)


@cache
def _version_statement(kind: RecordKind) -> Select[Any]:
    c = kind.table.c
    return select(c.version).where(c.workspace_id == bindparam("_ws"), c.id == bindparam("_id"))


async def version(
    conn: Connection, kind: RecordKind, workspace_id: str, record_id: str
) -> int | None:
    """A record's version now, deleted or not; None for an id never seen in the workspace."""
    value = await conn.fetchval(_version_statement(kind), {"_ws": workspace_id, "_id": record_id})
    return None if value is None else int(value)


@cache
def _any_statement(kind: RecordKind, shape: str, dialect: str) -> Select[Any]:
    c = kind.table.c
    return shape_statement(kind, shape, dialect).where(
        c.workspace_id == bindparam("_ws"), in_id_list(c.id, "_ids", dialect)
    )


async def get_any(
    conn: Connection, kind: RecordKind, workspace_id: str, record_ids: list[str], shape: str
) -> list[View]:
    """Records in a shape, deleted ones too (what a delete's events show)."""
    if not record_ids:
        return []
    rows = await conn.fetch(
        _any_statement(kind, shape, conn.dialect),
        {"_ws": workspace_id, "_ids": id_list(record_ids, conn.dialect)},
    )
    return [view_of(row) for row in rows]


@cache
def _lock_statement(kind: RecordKind) -> Select[Any]:
    # PostgreSQL: FOR UPDATE, so concurrent updates of one record apply one after the
    # other and none is lost. SQLite ignores it: the transaction holds the write lock.
    return select(kind.table).where(*live_filter(kind)).with_for_update()


async def lock(
    conn: Connection, kind: RecordKind, workspace_id: str, record_id: str
) -> Stored | None:
    """The live record's stored columns, row-locked until the transaction ends."""
    row = await conn.fetchrow(_lock_statement(kind), {"_ws": workspace_id, "_id": record_id})
    return None if row is None else Stored(row)


@cache
def _insert_statement(kind: RecordKind) -> Any:
    return insert(kind.table)


async def insert_record(conn: Connection, kind: RecordKind, values: dict[str, Any]) -> None:
    await conn.execute(_insert_statement(kind), values)


async def insert_records(conn: Connection, kind: RecordKind, rows: list[dict[str, Any]]) -> None:
    """New records with the same columns: one statement, sent once per record."""
    await conn.executemany(_insert_statement(kind), rows)


Expression = Callable[[Any], ColumnElement[Any]]
CITUS = "citus"  # a statement's form for a Citus coordinator (compiled as PostgreSQL's)


@cache
def _update_statement(
    kind: RecordKind,
    dialect: str,
    expressions: tuple[tuple[str, Expression], ...],
    versioned: bool,
    returning: str | None,
) -> Any:
    """UPDATE of a live record: the SET clause holds the parameters' columns (from their
    keys), the version bump and `expressions` (columns computed from the row itself)."""
    c = kind.table.c
    stmt = update(kind.table).where(*live_filter(kind))
    if versioned:
        stmt = stmt.where(c.version == bindparam("_version"))
    stmt = stmt.values(version=c.version + 1, **{col: build(c) for col, build in expressions})
    if returning is None:
        return stmt
    if dialect in ("sqlite", CITUS):
        # SQLite's RETURNING cannot hold the correlated subqueries (SQLAlchemy renders their
        # columns unqualified); the read that follows is in-process and cheap there. Citus
        # refuses non-IMMUTABLE functions (the formatted timestamps) in RETURNING.
        return stmt.returning(c.id)
    columns = kind.fields.select_list(kind.table, returning, dialect)
    return stmt.returning(*columns, c.version.label("_version"))


async def update_record(
    conn: Connection,
    kind: RecordKind,
    workspace_id: str,
    record_id: str,
    columns: Mapping[str, Any],
    *,
    expressions: Mapping[str, Expression] | None = None,
    params: Mapping[str, Any] | None = None,
    version: int | None = None,
    returning: str | None = None,
) -> View | None:
    """Write `columns` (and `expressions`) and bump the version of a live record (of that
    version, if given). With `returning`, one statement gives back the record in that
    shape; None when no row matched (unknown, deleted, or another version)."""
    form = CITUS if returning is not None and await conn.is_citus() else conn.dialect
    stmt = _update_statement(
        kind,
        form,
        tuple(sorted((expressions or {}).items())),
        version is not None,
        returning,
    )
    values = {"_ws": workspace_id, "_id": record_id, **columns, **(params or {})}
    if version is not None:
        values["_version"] = version
    if returning is None:
        await conn.execute(stmt, values)
        return None
    row = await conn.fetchrow(stmt, values)
    if row is not None and form != "postgresql":
        return await get(conn, kind, workspace_id, record_id, returning)
    return _view(row)


async def update_records(
    conn: Connection,
    kind: RecordKind,
    workspace_id: str,
    changes: list[tuple[str, dict[str, Any]]],
) -> None:
    """Write `(record id, columns)` changes of live records and bump their versions: one
    statement per set of columns, sent once per record (a batch's updates)."""
    by_columns: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for record_id, columns in changes:
        rows = by_columns.setdefault(tuple(sorted(columns)), [])
        rows.append({"_ws": workspace_id, "_id": record_id, **columns})
    statement = _update_statement(kind, conn.dialect, (), False, None)
    for rows in by_columns.values():
        await conn.executemany(statement, rows)


@cache
def _next_card_statement(kind: RecordKind) -> Select[Any]:
    c = kind.table.c
    return select(func.coalesce(func.max(c.order_in_cards), -1)).where(
        c.workspace_id == bindparam("_ws"),
        c.stage_id == bindparam("_stage"),
        c.deleted_at.is_(None),
    )


@cache
def _column_ends_statement(kind: RecordKind, dialect: str) -> Select[Any]:
    c = kind.table.c
    return (
        select(c.stage_id, func.max(c.order_in_cards).label("last"))
        .where(
            c.workspace_id == bindparam("_ws"),
            in_id_list(c.stage_id, "_stages", dialect),
            c.deleted_at.is_(None),
        )
        .group_by(c.stage_id)
    )


async def next_card_positions(
    conn: Connection, kind: RecordKind, workspace_id: str, stage_ids: list[str]
) -> dict[str, int]:
    """`next_card_position` of several stage columns at once."""
    ends = dict.fromkeys(stage_ids, 0)
    if stage_ids:
        rows = await conn.fetch(
            _column_ends_statement(kind, conn.dialect),
            {"_ws": workspace_id, "_stages": id_list(stage_ids, conn.dialect)},
        )
        ends.update({row["stage_id"]: after_card(int(row["last"])) for row in rows})
    return ends


def after_card(position: int) -> int:
    """The position after `position`: max + 1 (contract B.1), but never past the largest a
    position may be (a client may put a card there): at that end new cards share it, the
    older first, as any cards of one position are ordered (docs/api.md)."""
    return min(position + 1, INT32_MAX)


async def next_card_position(
    conn: Connection, kind: RecordKind, workspace_id: str, stage_id: str
) -> int:
    """max + 1 of the stage column among live records; 0 in an empty column."""
    statement = _next_card_statement(kind)
    last = await conn.fetchval(statement, {"_ws": workspace_id, "_stage": stage_id})
    return after_card(int(last))


@cache
def _soft_delete_statement(kind: RecordKind, dialect: str) -> Any:
    c = kind.table.c
    return (
        update(kind.table)
        .where(
            c.workspace_id == bindparam("_ws"),
            in_id_list(c.id, "_ids", dialect),
            c.deleted_at.is_(None),
        )
        .values(
            deleted_at=bindparam("_now"),
            deleted_by=bindparam("_key"),
            modified_at=bindparam("_now"),
            version=c.version + 1,
            **kind.deleted,
        )
        .returning(c.id)
    )


async def soft_delete(
    conn: Connection,
    kind: RecordKind,
    workspace_id: str,
    record_ids: list[str],
    *,
    key_id: str,
    now: datetime,
) -> set[str]:
    """Mark live records deleted (rows stay: nothing is lost); returns the ids deleted."""
    if not record_ids:
        return set()
    rows = await conn.fetch(
        _soft_delete_statement(kind, conn.dialect),
        {
            "_ws": workspace_id,
            "_ids": id_list(record_ids, conn.dialect),
            "_key": key_id,
            "_now": now,
        },
    )
    return {row["id"] for row in rows}


def _deleted_filter(kind: RecordKind) -> tuple[ColumnElement[bool], ...]:
    c = kind.table.c
    return (
        c.workspace_id == bindparam("_ws"),
        c.id == bindparam("_id"),
        c.deleted_at.is_not(None),
    )


@cache
def _lock_deleted_statement(kind: RecordKind) -> Select[Any]:
    # FOR UPDATE: two restores (or a restore and a merge) of one record queue on its row.
    return select(kind.table).where(*_deleted_filter(kind)).with_for_update()


async def lock_deleted(
    conn: Connection, kind: RecordKind, workspace_id: str, record_id: str
) -> Stored | None:
    """A soft-deleted record's stored columns, row-locked; None if live or unknown."""
    row = await conn.fetchrow(
        _lock_deleted_statement(kind), {"_ws": workspace_id, "_id": record_id}
    )
    return None if row is None else Stored(row)


@cache
def _undelete_statement(kind: RecordKind) -> Any:
    """UPDATE of a deleted record: the SET clause holds the parameters' columns (from their
    keys) and the version bump."""
    c = kind.table.c
    return update(kind.table).where(*_deleted_filter(kind)).values(version=c.version + 1)


async def undelete(
    conn: Connection,
    kind: RecordKind,
    workspace_id: str,
    record_id: str,
    columns: Mapping[str, Any],
) -> None:
    """Bring a soft-deleted record back with `columns` (which clear deleted_at)."""
    await conn.execute(
        _undelete_statement(kind), {"_ws": workspace_id, "_id": record_id, **columns}
    )
