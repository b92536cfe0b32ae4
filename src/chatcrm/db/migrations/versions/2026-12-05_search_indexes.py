"""search_indexes: `?q=` found through a trigram index on PostgreSQL and Citus

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 09:00:00

A search compares chatcrm_fold(column) with a folded `%q%` (db/textsearch.py, migration
0011). Without an index PostgreSQL folds every row of the workspace for every search. With
the `pg_trgm` extension (PostgreSQL's contrib modules, like `unaccent`; trusted), one GIN
index per record table holds the trigrams of the folded text columns and of the phone
digits, and a search reads only the rows whose trigrams match. Without the extension, or
the right to create it, the index is not made and a search still answers, by a scan.

On Citus the extension and the indexes are created on every worker's shards as well.
SQLite has no index for a substring: it folds with a Python function of the connection
(db/engine.py `fold`), fast on ASCII text.

The indexes are db/search_indexes.py's.
"""

from collections.abc import Sequence

from alembic import op

from chatcrm.db.search_indexes import SEARCH_INDEXES, create_index

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _installed(name: str) -> bool:
    found = op.get_bind().exec_driver_sql(f"SELECT 1 FROM pg_extension WHERE extname = '{name}'")
    return found.first() is not None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    available = op.get_bind().exec_driver_sql(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm'"
    )
    if available.first() is not None and not _installed("pg_trgm"):
        # In a savepoint: without the right to create it, searches keep scanning.
        savepoint = op.get_bind().begin_nested()
        try:
            op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public")
            savepoint.commit()
        except Exception:
            savepoint.rollback()
    if not _installed("pg_trgm"):
        return
    for index in SEARCH_INDEXES:
        op.execute(create_index(*index))


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for index, *_ in SEARCH_INDEXES:
        op.execute(f"DROP INDEX IF EXISTS {index}")
