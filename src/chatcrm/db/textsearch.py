"""Case-insensitive substring conditions, the same on SQLite and PostgreSQL.

The condition takes its pattern from a bound parameter (so statements can be reused);
`pattern_for` gives that parameter's value.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, bindparam
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.functions import Function

from chatcrm.db.engine import UNICODE_LOWER


def like_pattern(text: str) -> str:
    """`%text%` with LIKE's wildcards in the text taken literally (escape char `\\`)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def pattern_for(text: str, dialect: str) -> str:
    """The bound value for `contains_ci` of `text`."""
    return like_pattern(text.lower() if dialect == "sqlite" else text)


def contains_ci(column: Any, param: str, dialect: str) -> ColumnElement[bool]:
    """`column` contains the parameter's text, ignoring case beyond ASCII too (SQLite's own
    LIKE folds ASCII only, so the column goes through a Unicode lower() there)."""
    pattern: BindParameter[str] = bindparam(param)
    if dialect == "sqlite":
        return Function(UNICODE_LOWER, column).like(pattern, escape="\\")
    return column.ilike(pattern, escape="\\")


def contains(column: Any, param: str) -> ColumnElement[bool]:
    """`column` contains the parameter's text (pass `like_pattern(text)` as its value)."""
    return column.like(bindparam(param), escape="\\")
