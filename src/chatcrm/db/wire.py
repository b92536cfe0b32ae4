"""SQL that produces values already in wire form, the same on SQLite and PostgreSQL.

Timestamps come back as `…Z` text and money as canonical decimal text, so answers need no
per-value conversion in Python; child rows (a contact's tags, an opportunity's activities)
are aggregated into a JSON array inside the parent's query, so a read is one round trip.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Text,
    case,
    func,
    literal,
    literal_column,
    select,
    type_coerce,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by

_PG_TS_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'


def iso_text(column: Any, dialect: str) -> ColumnElement[str]:
    """A timestamp column rendered as `2025-04-07T21:56:19.325443Z` by the database."""
    if dialect == "postgresql":
        # asyncpg stores datetime.max / datetime.min as ±infinity, which to_char cannot show.
        return case(
            (column == literal_column("'infinity'::timestamptz"), "9999-12-31T23:59:59.999999Z"),
            (column == literal_column("'-infinity'::timestamptz"), "0001-01-01T00:00:00.000000Z"),
            else_=func.to_char(func.timezone("UTC", column), _PG_TS_FORMAT),
        )
    # SQLite stores `YYYY-MM-DD HH:MM:SS.ffffff` (always six fractional digits).
    return func.replace(column, " ", "T").op("||")("Z")


def wire_columns(
    table: Any,
    dialect: str,
    *,
    timestamps: Collection[str],
    money: Collection[str] = (),
) -> list[Any]:
    """The table's columns, those named in `timestamps` and `money` rendered as wire text
    under their own names."""
    out: list[Any] = []
    for column in table.c:
        if column.name in timestamps:
            out.append(iso_text(column, dialect).label(column.name))
        elif column.name in money:
            out.append(money_text(column, dialect).label(column.name))
        else:
            out.append(column)
    return out


def money_text(column: Any, dialect: str) -> ColumnElement[str]:
    """An amount as canonical decimal text: no exponent, no trailing zeros (`1200.5`, `0`)."""
    if dialect == "postgresql":
        return func.trim_scale(column).cast(Text)
    return type_coerce(column, Text)  # stored as canonical text already (db/types.Money)


def json_array_of_objects(
    *,
    dialect: str,
    pairs: list[tuple[str, Any]],
    from_: Any,
    where: Any,
    order_by: list[Any],
    parent: Any,
) -> ColumnElement[str]:
    """Scalar subquery: `[{k: v, ...}, ...]` over the rows of `from_` that `where` links to
    the row of `parent` (the outer query's table), ordered, `[]` if none."""
    args: list[Any] = []
    for key, value in pairs:
        args.extend([literal(key), value])
    if dialect == "postgresql":
        obj = func.json_build_object(*args)
        agg = func.json_agg(aggregate_order_by(obj, *order_by))
        inner = select(func.coalesce(agg, literal_column("'[]'::json")).cast(Text))
        return inner.select_from(from_).where(where).scalar_subquery()
    # SQLite (3.40 has no ORDER BY inside aggregates): aggregate an ordered subquery.
    ordered = (
        select(func.json_object(*args).label("obj"))
        .select_from(from_)
        .where(where)
        .order_by(*order_by)
        # Without this, SQLAlchemy would add `parent` to this inner FROM and the list would
        # gather the children of every parent row.
        .correlate(parent)
        .subquery()
    )
    obj_col: Any = ordered.c.obj
    return select(func.json_group_array(func.json(obj_col))).scalar_subquery()
