"""Case-insensitive substring conditions, the same on SQLite and PostgreSQL."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.sql.functions import Function

from chatcrm.db.engine import UNICODE_LOWER


def like_pattern(text: str) -> str:
    """`%text%` with LIKE's wildcards in the text taken literally (escape char `\\`)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def contains_ci(column: Any, text: str, dialect: str) -> ColumnElement[bool]:
    """`column` contains `text`, ignoring case beyond ASCII too."""
    if dialect == "sqlite":
        pattern = like_pattern(text.lower())
        return Function(UNICODE_LOWER, column).like(pattern, escape="\\")
    return column.ilike(like_pattern(text), escape="\\")


def contains(column: Any, text: str) -> ColumnElement[bool]:
    return column.like(like_pattern(text), escape="\\")
