"""Child rows (a contact's tags, an opportunity's activities) aggregated into a JSON array
inside the parent's query, the same on SQLite and PostgreSQL: a read is one round trip."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Text, func, literal, literal_column, select
from sqlalchemy.dialects.postgresql import aggregate_order_by


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
