"""search_fold_sigma: a final sigma folds as any sigma

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-09 09:00:00

Greek has two small sigmas: `ς` ends a word, `σ` is any other. Python's lower() chooses by
the letters around (`ΟΔΥΣ` → `οδυς`), PostgreSQL's always gives `σ`, and a stored `ς` stays
`ς` under both: a search typed in capitals, or cut short, missed names it holds (contract N:
case-insensitive). chatcrm_fold now maps `ς` to `σ` after lowering, here and on SQLite
(db/engine.py `fold`). The search indexes of migration 0013 hold the old fold's trigrams:
they are made again, as 0013 makes them, where they exist (on Citus, on every shard).
"""

from collections.abc import Sequence

from alembic import op

from chatcrm.db.engine import ACCENTED, PLAIN
from chatcrm.db.search_indexes import SEARCH_INDEXES, create_index

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# chatcrm_fold's lowering, as migration 0011 made it: with `unaccent` where it is installed.
_UNACCENT = "lower(public.unaccent('public.unaccent'::regdictionary, value))"
_TRANSLATE = f"lower(translate(value, '{ACCENTED}{ACCENTED.upper()}', '{PLAIN}{PLAIN}'))"


def _fold(body: str) -> str:
    return f"""
CREATE OR REPLACE FUNCTION chatcrm_fold(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
AS $$ SELECT {body} $$
"""


def _found(sql: str) -> bool:
    return op.get_bind().exec_driver_sql(sql).first() is not None


def _lowered() -> str:
    return (
        _UNACCENT if _found("SELECT 1 FROM pg_extension WHERE extname = 'unaccent'") else _TRANSLATE
    )


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_fold(f"replace({_lowered()}, 'ς', 'σ')"))
    for index in SEARCH_INDEXES:
        if not _found(f"SELECT 1 FROM pg_class WHERE relname = '{index[0]}' AND relkind = 'i'"):
            continue
        op.execute(f"DROP INDEX {index[0]}")
        op.execute(create_index(*index))


def downgrade() -> None:
    """Migration 0011's fold again (the indexes are left: they differ only on `ς`)."""
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_fold(_lowered()))
