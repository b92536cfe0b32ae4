"""SQLAlchemy Core statements compiled once per dialect, then run on the driver directly.

SQLAlchemy builds the SQL (one source of truth, in the repositories); executing through
its async engine costs about 250 µs of Python per statement, so requests instead hand the
compiled text to asyncpg / sqlite3 with positional arguments, applying the column types'
bind and result processors (UTCDateTime, Money, Boolean) exactly as SQLAlchemy would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy.dialects.postgresql import asyncpg as pg_asyncpg
from sqlalchemy.dialects.sqlite import aiosqlite as sqlite_aiosqlite
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

DIALECTS: dict[str, Dialect] = {
    "postgresql": pg_asyncpg.dialect(),
    "sqlite": sqlite_aiosqlite.dialect(),
}

Processor = Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class Compiled:
    sql: str
    names: tuple[str, ...]  # bound parameter names, in positional order
    # Each positional argument with the statement's own value already bound (its literals:
    # formats, time zone, JSON keys; `_GIVEN` where the caller must give it), and where
    # the caller's values go: a read by id binds 26 arguments, two of them the caller's.
    fixed: tuple[Any, ...]
    slots: Mapping[str, tuple[Processor | None, tuple[int, ...]]]
    required: tuple[str, ...]  # the parameters without a value of their own
    keys: tuple[str, ...]  # result column names
    readers: tuple[tuple[int, Processor], ...]  # (column index, processor) where needed
    writes: bool  # INSERT, UPDATE or DELETE (SQLite runs those on its one writer)

    def args(self, params: Mapping[str, Any]) -> list[Any]:
        """The positional arguments for `params` (keys the statement does not bind are
        ignored; a missing required one raises KeyError)."""
        for name in self.required:
            if name not in params:
                raise KeyError(name)
        out = list(self.fixed)
        slots = self.slots
        for name, value in params.items():
            slot = slots.get(name)
            if slot is not None:
                binder, positions = slot
                bound = _bind(binder, value)
                for position in positions:
                    out[position] = bound
        return out

    def row(self, values: Sequence[Any]) -> dict[str, Any]:
        row = dict(zip(self.keys, values, strict=True))
        for index, reader in self.readers:
            key = self.keys[index]
            value = row[key]
            if value is not None:
                row[key] = reader(value)
        return row


# Where a caller's value goes, until it is given.
_GIVEN = object()


def _bind(binder: Processor | None, value: Any) -> Any:
    """A value as the driver takes it (SQLAlchemy's bind processor; NULL as it is)."""
    return binder(value) if binder is not None and value is not None else value


_PG_NUMERIC_OID = 1700


def _reader(type_: Any, dialect: Dialect) -> Processor | None:
    impl = type_.dialect_impl(dialect)
    try:
        reader: Processor | None = impl.result_processor(dialect, None)
    except TypeError:  # asyncpg's Numeric wants the column's type code; ours are NUMERIC
        reader = impl.result_processor(dialect, _PG_NUMERIC_OID)
    return reader


_MAX_ENTRIES = 4096
_cache: dict[tuple[int, str, tuple[str, ...] | None], tuple[ClauseElement, Compiled]] = {}


def compiled(stmt: ClauseElement, dialect_name: str, keys: Iterable[str] | None = None) -> Compiled:
    """The compiled form of a long-lived statement; `keys` names the columns an INSERT or
    UPDATE without explicit values writes (its parameters' keys)."""
    column_keys = tuple(keys) if keys is not None else None
    cache_key = (id(stmt), dialect_name, column_keys)
    hit = _cache.get(cache_key)
    if hit is not None and hit[0] is stmt:
        return hit[1]
    dialect = DIALECTS[dialect_name]
    result = cast(
        SQLCompiler,
        stmt.compile(
            dialect=dialect, column_keys=list(column_keys) if column_keys is not None else None
        ),
    )
    result_columns = result._result_columns or []
    names = tuple(result.positiontup or ())
    # dialect_impl: the type as this dialect runs it (SQLite's DATETIME text, for example).
    binders = tuple(
        result.binds[name].type.dialect_impl(dialect).bind_processor(dialect) for name in names
    )
    # The values a statement carries itself (literals), bound once here.
    defaults = {
        name: bind.effective_value
        for name, bind in result.binds.items()
        if not bind.required and bind.callable is None
    }
    positions: dict[str, list[int]] = {}
    for position, name in enumerate(names):
        positions.setdefault(name, []).append(position)
    slots = {name: (binders[at[0]], tuple(at)) for name, at in positions.items()}
    fixed = tuple(
        _bind(binder, defaults[name]) if name in defaults else _GIVEN
        for name, binder in zip(names, binders, strict=True)
    )
    readers = []
    for index, column in enumerate(result_columns):
        reader = _reader(column.type, dialect)
        if reader is not None:
            readers.append((index, reader))
    entry = Compiled(
        sql=result.string,
        names=names,
        fixed=fixed,
        slots=slots,
        required=tuple(dict.fromkeys(name for name in names if name not in defaults)),
        keys=tuple(column.keyname for column in result_columns),
        readers=tuple(readers),
        writes=result.string.lstrip()[:6].upper() in ("INSERT", "UPDATE", "DELETE"),
    )
    if len(_cache) > _MAX_ENTRIES:  # statements are module constants; this is a safety net
        _cache.clear()
    _cache[cache_key] = (stmt, entry)  # keeps stmt alive, so its id is never reused
    return entry
