"""PostgreSQL: a one-statement update and its event, in ONE statement.

An update whose columns follow from the request alone is one `UPDATE … RETURNING`. Its
outbox event must commit with it; as two statements in a transaction that costs three
more round trips (BEGIN, INSERT, COMMIT) on the busiest path of the API. Instead the
UPDATE is a data-modifying CTE whose returned row feeds the event's INSERT, the body
built by the database with the same wire expressions the answer is read with: the
statement is atomic by itself, and the answer and the event come from one row.

SQLite runs the same change as statements inside its write transaction (in-process, no
round trips to save), through records/writing.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

import orjson
from sqlalchemy import (
    JSON,
    ColumnElement,
    Select,
    Text,
    bindparam,
    case,
    cast,
    func,
    insert,
    literal,
    select,
    update,
)

from chatcrm.db.database import Connection
from chatcrm.db.schema import events
from chatcrm.events.outbox import IN_FEED, SYSTEM_ACTOR
from chatcrm.records.kind import RecordKind
from chatcrm.records.statements import Expression, View, live_filter, view_of
from chatcrm.records.types import AggregatedJson, JsonText


def _json_value(column: Any) -> Any:
    # Values the database already rendered as JSON text (money, files, variables, tags)
    # go into the body as JSON, not as strings.
    if isinstance(column.type, JsonText | AggregatedJson):
        return cast(column, JSON)
    return column


@cache
def _statement(
    kind: RecordKind,
    columns: tuple[str, ...],
    expressions: tuple[tuple[str, Expression], ...],
    versioned: bool,
    shape: str,
    flag: Any,
) -> Select[Any]:
    c = kind.table.c
    values: dict[str, Any] = {col: bindparam(col, type_=c[col].type) for col in columns}
    values.update({col: build(c) for col, build in expressions})
    stmt = update(kind.table).where(*live_filter(kind)).values(version=c.version + 1, **values)
    if versioned:
        stmt = stmt.where(c.version == bindparam("_version"))
    else:
        # The record as this statement's snapshot saw it, or nothing. The RETURNING's
        # subqueries (tags, activities) read that snapshot; when another change of the
        # record committed while this one waited for its row, PostgreSQL updates the newer
        # row but would render it with the older tags, in the answer and in the event. The
        # row then no longer has the snapshot's version and is not updated: the caller
        # takes the locked path, whose reads come after the lock.
        before = kind.table.alias("before")
        seen = select(before.c.version).where(
            before.c.workspace_id == bindparam("_ws"), before.c.id == bindparam("_id")
        )
        stmt = stmt.where(c.version == seen.scalar_subquery())
    wire = kind.fields.select_list(kind.table, shape, "postgresql")
    returned = [*wire, c.version.label("_version")]
    if flag is not None:
        returned.append(flag(c).label("_flag"))
    row = stmt.returning(*returned).cte("changed_row")
    data = func.json_build_object(
        *(part for w in wire for part in (literal(w.name), _json_value(row.c[w.name])))
    )
    changed: ColumnElement[Any] = cast(bindparam("_changed", type_=Text), JSON)
    if flag is not None:
        changed = case(
            (row.c._flag, cast(bindparam("_changed_flagged", type_=Text), JSON)), else_=changed
        )
    body = func.json_build_object(
        "id",
        bindparam("_event_id", type_=Text),
        "type",
        bindparam("_event_type", type_=Text),
        "workspaceId",
        bindparam("_ws", type_=Text),
        "createdAt",
        bindparam("_created", type_=Text),
        "recordId",
        row.c.id,
        "recordVersion",
        row.c._version,
        "changed",
        changed,
        "data",
        data,
        "actor",  # J.4: the connection's actor, as outbox.py writes it
        cast(bindparam("_actor", type_=Text), JSON),
    )
    event = insert(events).from_select(
        ["workspace_id", "id", "seq", "txid", "type", "record_id", "created_at", "body"],
        select(
            bindparam("_ws", type_=Text),
            bindparam("_event_id", type_=Text),
            func.nextval("events_seq"),
            literal(IN_FEED),
            bindparam("_event_type", type_=Text),
            row.c.id,
            bindparam("_event_at", type_=events.c.created_at.type),
            cast(body, Text),
        ).select_from(row),
    )
    names = [f.wire for f in kind.fields.shape(shape)]  # plain str keys, as orjson needs
    return select(*(row.c[name].label(name) for name in names), row.c._version).add_cte(
        event.cte("event_row")
    )


async def update_with_event(
    conn: Connection,
    kind: RecordKind,
    *,
    workspace_id: str,
    record_id: str,
    columns: Mapping[str, Any],
    expressions: Mapping[str, Expression],
    params: Mapping[str, Any],
    version: int | None,
    shape: str,
    event: Mapping[str, Any],
    flag: Any = None,
) -> View | None:
    """The update and its event (`event`: the `_event_*`, `_created`, `_changed…` values);
    the record in `shape`, or None when no row matched (unknown, deleted, another version
    than `version`, or, without `version`, changed since the statement's snapshot)."""
    stmt = _statement(
        kind,
        tuple(sorted(columns)),
        tuple(sorted(expressions.items())),
        version is not None,
        shape,
        flag,
    )
    actor = orjson.dumps(conn.actor or SYSTEM_ACTOR).decode()
    values = {"_ws": workspace_id, "_id": record_id, **columns, **params, **event, "_actor": actor}
    if version is not None:
        values["_version"] = version
    row = await conn.fetchrow(stmt, values)
    return None if row is None else view_of(row)
