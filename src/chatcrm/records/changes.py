"""What an update sets beyond the named fields' own columns: a field's `Effect` (a stamp, a
stage move, the solved agent…) and its `After` (rows of other tables, such as tags)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement

from chatcrm.records.defaults import Creation


@dataclass
class Change:
    """An update being turned into column values (records/writing.py)."""

    conn: Any
    kind: Any
    workspace_id: str
    record_id: str
    clean: dict[str, Any]  # the named fields' validated values, by wire name
    now: datetime
    current: dict[str, Any] | None  # the stored columns, under row lock; None: one statement
    columns: dict[str, Any] = field(default_factory=dict)
    # Columns set by an SQL expression of the row (named builders, so statements can be
    # cached by their shape), and the bound values those expressions use.
    expressions: dict[str, Callable[[Any], ColumnElement[Any]]] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)


class Effect:
    """What a change of a field sets beyond its own column. `direct`: it needs neither the
    stored record nor the database, so an update of such fields is one statement."""

    direct = False
    sets: tuple[str, ...] = ()  # wire names it may set (documentation; the events' `changed`)

    async def apply(self, change: Change) -> None:
        raise NotImplementedError

    # The SQL condition, on the row after the update, under which the effect's expression
    # set `sets` (read inside the one-statement update with its event on PostgreSQL,
    # records/evented_update.py; else after the update, writing.py). None: its sets are
    # known from `Change.columns`.
    statement_flag: Callable[[Any], ColumnElement[bool]] | None = None


class After:
    """Rows of other tables written with the record (a contact's tags): after its insert,
    or after its update."""

    async def write(self, change: Change | Creation, value: Any, *, created: bool) -> None:
        raise NotImplementedError
