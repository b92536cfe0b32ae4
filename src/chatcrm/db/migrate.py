"""Apply the Alembic migrations, safely when several processes or nodes start at once."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from sqlalchemy import Connection, text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from chatcrm.db.citus import anything_to_lay_out, distribute
from chatcrm.db.citus_node import is_laid_out

if TYPE_CHECKING:
    from alembic.config import Config

MIGRATIONS_DIR = Path(__file__).parent / "migrations"
# Arbitrary constant naming chatcrm's migration lock among PostgreSQL advisory locks.
PG_LOCK_KEY = 0x63686174_63726D
# A migration's `revision = "…"` and `down_revision = "…"` (or None) lines.
_REVISION_LINE = re.compile(
    r"^(?P<kind>down_revision|revision)\b[^=\n]*=\s*(?:[\"'](?P<value>[^\"']*)[\"']|None)",
    re.MULTILINE,
)


def alembic_config(connection: Connection | None = None) -> Config:
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    cfg.set_main_option("file_template", "%%(year)d-%%(month).2d-%%(day).2d_%%(slug)s")
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def known_revisions() -> set[str]:
    """Every revision this code's migrations name."""
    found: set[str] = set()
    for script in (MIGRATIONS_DIR / "versions").glob("*.py"):
        for line in _REVISION_LINE.finditer(script.read_text(encoding="utf-8")):
            if line["value"] is not None and line["kind"] != "down_revision":
                found.add(line["value"])
    return found


def head_revision() -> str | None:
    """The newest migration, read from the files' `revision` and `down_revision` lines.

    Alembic, which says the same (tests/db/test_schema.py checks that), takes a tenth of a
    second to import; every command and every node's start migrates first, and almost
    always finds the database at head already. Alembic is imported only to migrate."""
    revisions: set[str] = set()
    replaced: set[str] = set()
    for script in (MIGRATIONS_DIR / "versions").glob("*.py"):
        for line in _REVISION_LINE.finditer(script.read_text(encoding="utf-8")):
            if line["value"] is not None:
                (replaced if line["kind"] == "down_revision" else revisions).add(line["value"])
    heads = revisions - replaced
    return heads.pop() if len(heads) == 1 else None


async def current_revision(conn: AsyncConnection) -> str | None:
    """The revision the database is at (None: not migrated, or more than one head)."""
    if conn.dialect.name == "postgresql":
        found = "SELECT to_regclass('alembic_version') IS NOT NULL"
    else:
        found = "SELECT count(*) > 0 FROM sqlite_master WHERE name = 'alembic_version'"
    if not (await conn.execute(text(found))).scalar():
        return None
    rows = (await conn.execute(text("SELECT version_num FROM alembic_version"))).all()
    return str(rows[0][0]) if len(rows) == 1 else None


async def schema_behind(engine: AsyncEngine) -> str | None:
    """Why this code cannot serve the database (its schema is not this code's: never
    migrated, or migrated by another version), or None. An unreachable database is not
    judged here: the service answers 503 until it is back."""
    head = head_revision()
    try:
        async with engine.connect() as conn:
            found = await current_revision(conn)
    except Exception:  # unreachable, or refusing: the requests say so
        return None
    # A revision this code does not know is a newer one (a node upgraded first migrated):
    # its migrations only add, so this code still runs there.
    if head is None or found == head or (found is not None and found not in known_revisions()):
        return None
    at = "has no chatcrm schema" if found is None else f"is at schema revision {found}"
    return f"the database {at}, this version of chatcrm needs {head}: run `chatcrm migrate`"


async def upgrade(engine: AsyncEngine, *, lay_out: bool = True) -> tuple[str | None, str] | None:
    """Migrate to head inside one transaction that holds the migration lock.

    PostgreSQL: a transaction-scoped advisory lock, so nodes starting together queue up
    and the later ones find nothing left to do. SQLite: the engine's BEGIN IMMEDIATE
    takes the database write lock before Alembic even reads the current version.

    On a database that `chatcrm citus distribute` has laid out, the tables a migration
    added are then laid out too (distributed or made reference tables), after the
    migration's commit: Citus copies a table's rows in a transaction of its own.
    `lay_out=False` leaves that to the caller (`chatcrm citus distribute` reports it).

    Returns the revisions migrated from and to (None: from an empty database), or None
    when there was nothing to do.
    """
    migrated: tuple[str | None, str] | None = None
    async with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_LOCK_KEY})
        head = head_revision()
        before = await current_revision(conn)
        if head is None or before != head:
            await conn.run_sync(_upgrade_sync)
            migrated = (before, str(await current_revision(conn)))
        # Only when something is left to lay out: laying out also checks every worker.
        on_citus = lay_out and await is_laid_out(conn) and await anything_to_lay_out(conn)
    if on_citus:
        await distribute(engine)
    return migrated


def _upgrade_sync(connection: Connection) -> None:
    from alembic import command

    command.upgrade(alembic_config(connection), "head")
