"""`column IN (<list of ids>)` with the whole list as ONE bound parameter, so the statement
is compiled once whatever the list's length: an array on PostgreSQL, JSON text on SQLite."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import ARRAY, ColumnElement, String, Text, any_, bindparam, func, select


def in_id_list(column: Any, param: str, dialect: str) -> ColumnElement[bool]:
    if dialect == "postgresql":
        # text[], not varchar[]: asyncpg has no built-in codec for varchar[] and would ask
        # the server about the type on every new connection (a slow catalog query).
        return column == any_(bindparam(param, type_=ARRAY(Text)))
    values = func.json_each(bindparam(param, type_=String)).table_valued("value")
    return column.in_(select(values.c.value))


def id_list(ids: list[str], dialect: str) -> Any:
    """The bound value for `in_id_list`."""
    return ids if dialect == "postgresql" else orjson.dumps(ids).decode()
