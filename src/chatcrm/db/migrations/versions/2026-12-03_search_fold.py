"""search_fold: chatcrm_fold(text), the case- and accent-blind form a search compares

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 09:00:00

On PostgreSQL (and Citus, which propagates it to the workers): lower(unaccent(…)) when
the `unaccent` extension can be had (it ships with PostgreSQL's contrib modules and is a
trusted extension), else lower(translate(…)) over the accented Latin letters. SQLite gets
the same-named function from each connection (db/sqlite_pool.py). Both sides of a search
go through it, so they fold alike (db/textsearch.py).
"""

from collections.abc import Sequence

from alembic import op

from chatcrm.db.engine import ACCENTED, PLAIN

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_UNACCENT = """
CREATE OR REPLACE FUNCTION chatcrm_fold(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
AS $$ SELECT lower(public.unaccent('public.unaccent'::regdictionary, value)) $$
"""
_TRANSLATE = f"""
CREATE OR REPLACE FUNCTION chatcrm_fold(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
AS $$ SELECT lower(translate(value, '{ACCENTED}{ACCENTED.upper()}', '{PLAIN}{PLAIN}')) $$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    available = op.get_bind().exec_driver_sql(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'unaccent'"
    )
    if available.first() is not None:
        # In a savepoint: without the right to create it, the translate() form stands in.
        savepoint = op.get_bind().begin_nested()
        try:
            op.execute("CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA public")
            savepoint.commit()
        except Exception:
            savepoint.rollback()
    installed = op.get_bind().exec_driver_sql(
        "SELECT 1 FROM pg_extension WHERE extname = 'unaccent'"
    )
    op.execute(_UNACCENT if installed.first() is not None else _TRANSLATE)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS chatcrm_fold(text)")
