"""Apply the Alembic migrations, safely when several processes or nodes start at once."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncEngine

from chatcrm.db.citus import distribute, is_laid_out

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# Arbitrary constant naming chatcrm's migration lock among PostgreSQL advisory locks.
PG_LOCK_KEY = 0x63686174_63726D


def alembic_config(connection: Connection | None = None) -> Config:
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("file_template", "%%(year)d-%%(month).2d-%%(day).2d_%%(slug)s")
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(connection: Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


async def upgrade(engine: AsyncEngine, *, lay_out: bool = True) -> None:
    """Migrate to head inside one transaction that holds the migration lock.

    PostgreSQL: a transaction-scoped advisory lock, so nodes starting together queue up
    and the later ones find nothing left to do. SQLite: the engine's BEGIN IMMEDIATE
    takes the database write lock before Alembic even reads the current version.

    On a database that `chatcrm citus distribute` has laid out, the tables a migration
    added are then laid out too (distributed or made reference tables), after the
    migration's commit: Citus copies a table's rows in a transaction of its own.
    `lay_out=False` leaves that to the caller (`chatcrm citus distribute` reports it).
    """
    async with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_LOCK_KEY})
        await conn.run_sync(_upgrade_sync)
        on_citus = lay_out and await is_laid_out(conn)
    if on_citus:
        await distribute(engine)


def _upgrade_sync(connection: Connection) -> None:
    if current_revision(connection) == head_revision():
        return
    command.upgrade(alembic_config(connection), "head")
