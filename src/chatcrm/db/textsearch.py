"""Case- and accent-insensitive substring conditions, the same on SQLite, PostgreSQL and
Citus: `q=nunez` finds "Núñez", `q=JOSE` finds "josé".

The condition takes its pattern from a bound parameter (so statements can be reused);
`pattern_for` gives that parameter's value.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, bindparam
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.functions import Function

from chatcrm.db.engine import UNACCENT_RULES, UNICODE_FOLD


def like_pattern(text: str) -> str:
    """`%text%` with LIKE's wildcards in the text taken literally (escape char `\\`)."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# What folds to LIKE's wildcards or its escape (`％` → %): in a pattern that is folded
# after it is escaped, each stands as the character it folds to, escaped.
_FOLDS_TO_SPECIAL = str.maketrans(
    {ch: "\\" + plain for ch, plain in UNACCENT_RULES.items() if plain in ("%", "_", "\\")}
)


def pattern_for(text: str, dialect: str) -> str:
    """The bound value for `contains_ci` of `text` (folded by the database, as the column):
    `%`, `_` and `\\` are literal, also in the forms that fold to them (`％`, `＿`, `＼`)."""
    return like_pattern(text).translate(_FOLDS_TO_SPECIAL)


def contains_ci(column: Any, param: str, dialect: str) -> ColumnElement[bool]:
    """`column` contains the parameter's text, ignoring case and accents: both go through
    chatcrm_fold — on PostgreSQL a function of migration 0011 (lower(unaccent(…)) where the
    extension could be installed), on SQLite one of each connection (`engine.fold`)."""
    pattern: BindParameter[str] = bindparam(param)
    return Function(UNICODE_FOLD, column).like(Function(UNICODE_FOLD, pattern), escape="\\")


def contains(column: Any, param: str) -> ColumnElement[bool]:
    """`column` contains the parameter's text (pass `like_pattern(text)` as its value)."""
    return column.like(bindparam(param), escape="\\")
