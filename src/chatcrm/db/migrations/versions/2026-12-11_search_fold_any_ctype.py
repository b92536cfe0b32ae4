"""search_fold_any_ctype: a search ignores case whatever the database's ctype

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-11 09:00:00

PostgreSQL's lower() follows the database's LC_CTYPE: in a database created with
`LC_CTYPE 'C'` it lowers ASCII letters only, so a search for `андрей` missed "Андрей" and
`οδυσσεας` missed "Οδυσσέας" there (contract N: case-insensitive), while
docs/operations.md allows any collation. Where the database's own lower() leaves `Ä`
as it is, chatcrm_fold now lowers with the first Unicode-aware collation the server has
(ICU's root, `und-x-icu`; else glibc's `C.utf8`), and the search indexes, which hold
the old fold's trigrams, are made again (on Citus, on every shard). A database whose
lower() knows every letter is left as it was.
"""

from collections.abc import Sequence

from alembic import op

from chatcrm.db.engine import ACCENTED, PLAIN
from chatcrm.db.search_indexes import SEARCH_INDEXES, create_index

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Tried in turn; each must exist for the database's encoding and lower `Ä`, `Σ` and `Д`.
_UNICODE_COLLATIONS = ("und-x-icu", "C.utf8", "C.UTF-8")
_PROBE = "'ÄΣД'"
_LOWERED = "'äσд'"


def _first(sql: str) -> object:
    row = op.get_bind().exec_driver_sql(sql).first()
    return None if row is None else row[0]


def _collation() -> str | None:
    """The collation chatcrm_fold must lower with, or None when the database's own does."""
    if _first(f"SELECT lower({_PROBE}) = {_LOWERED}"):
        return None
    for name in _UNICODE_COLLATIONS:
        found = _first(
            "SELECT 1 FROM pg_collation WHERE collname = "
            f"'{name}' AND collencoding IN (-1, pg_char_to_encoding(getdatabaseencoding()))"
        )
        if found and _first(f'SELECT lower({_PROBE} COLLATE "{name}") = {_LOWERED}'):
            return name
    return None  # none to be had: the fold stays the database's (docs/operations.md)


def _fold(collation: str | None) -> str:
    """migration 0017's chatcrm_fold, lowering with `collation` when one is given."""
    if _first("SELECT 1 FROM pg_extension WHERE extname = 'unaccent'"):
        plain = "public.unaccent('public.unaccent'::regdictionary, value)"
    else:
        plain = f"translate(value, '{ACCENTED}{ACCENTED.upper()}', '{PLAIN}{PLAIN}')"
    lowered = f'lower({plain} COLLATE "{collation}")' if collation else f"lower({plain})"
    return f"""
CREATE OR REPLACE FUNCTION chatcrm_fold(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
AS $$ SELECT replace({lowered}, 'ς', 'σ') $$
"""


def _search_indexes_again() -> None:
    for index in SEARCH_INDEXES:
        if _first(f"SELECT 1 FROM pg_class WHERE relname = '{index[0]}' AND relkind = 'i'"):
            op.execute(f"DROP INDEX {index[0]}")
            op.execute(create_index(*index))


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    collation = _collation()
    if collation is None:
        return
    op.execute(_fold(collation))
    _search_indexes_again()


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql" or _collation() is None:
        return
    op.execute(_fold(None))
    _search_indexes_again()
