"""Apply the Alembic migrations, safely when several processes or nodes start at once."""

from __future__ import annotations

import re
from dataclasses import dataclass
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
# Tables every chatcrm schema has held since its first revision (migrations only add): a
# database at a revision this code does not know is a newer chatcrm's when it holds them
# all, and another application's (its own Alembic history) when it does not.
FIRST_TABLES = ("accounts", "service_secrets", "api_keys", "workspaces", "contacts")
# What a migration meets when the database already holds a table or index of that name:
# PostgreSQL's duplicate_table and duplicate_object, SQLite's message.
_DUPLICATE_SQLSTATES = ("42P07", "42710")
_SQLITE_DUPLICATE = re.compile(r"\b(?:table|index) (\S+) already exists")
_PG_DUPLICATE = re.compile(r'\b(?:relation|type|function) "([^"]+)" already exists')


@dataclass(frozen=True)
class NewerSchema:
    """A database a newer chatcrm migrated: this code uses it as it is (its migrations
    only add) and migrates nothing."""

    revision: str  # the database's
    head: str | None  # the newest this code knows


class ForeignSchema(Exception):
    """The database holds tables that are not chatcrm's: migrating would fail on them, or
    would write into another application's schema. Nothing was changed."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"the database holds tables that are not chatcrm's ({detail})")
        self.detail = detail


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


async def _holds_first_tables(conn: AsyncConnection) -> bool:
    if conn.dialect.name == "postgresql":
        found = "SELECT to_regclass(:name) IS NOT NULL"
    else:
        found = "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = :name"
    for name in FIRST_TABLES:
        if not (await conn.execute(text(found), {"name": name})).scalar():
            return False
    return True


async def _foreign_table(conn: AsyncConnection) -> str | None:
    """A table or view of a database chatcrm has not migrated (none of them can be
    chatcrm's: its migrations create every table and the revision in one transaction),
    else None. An extension's own tables (PostGIS's `spatial_ref_sys`) do not count."""
    if conn.dialect.name == "postgresql":
        found = """
            SELECT c.relname FROM pg_class c
            WHERE c.relnamespace = current_schema()::regnamespace
              AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
              AND NOT EXISTS (
                SELECT 1 FROM pg_depend d
                WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
            ORDER BY c.relname LIMIT 1"""
    else:
        found = """
            SELECT name FROM sqlite_master
            WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
            ORDER BY name LIMIT 1"""
    name = (await conn.execute(text(found))).scalar()
    return None if name is None else str(name)


async def unknown_revision(conn: AsyncConnection, found: str | None) -> NewerSchema | None:
    """For a database at revision `found`: a NewerSchema when that is a revision this code
    does not know, of a newer chatcrm; ForeignSchema raised when it is not chatcrm's."""
    if found is None or found in known_revisions():
        return None
    if not await _holds_first_tables(conn):
        raise ForeignSchema(f"its Alembic revision {found!r} is none of chatcrm's")
    return NewerSchema(revision=found, head=head_revision())


def _duplicate_name(exc: BaseException) -> str | None:
    """The name a migration found taken (`table accounts already exists`), else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        words = str(current).strip()
        if getattr(current, "sqlstate", None) in _DUPLICATE_SQLSTATES:
            named = _PG_DUPLICATE.search(words)
            return named[1] if named else words.splitlines()[0][:200]
        named = _SQLITE_DUPLICATE.search(words)
        if named:
            return named[1]
        orig = getattr(current, "orig", None)
        current = orig if isinstance(orig, BaseException) else current.__cause__
    return None


async def schema_behind(engine: AsyncEngine) -> str | None:
    """Why this code cannot serve the database (its schema is not this code's: never
    migrated, or migrated by another version), or None. An unreachable database is not
    judged here: the service answers 503 until it is back."""
    head = head_revision()
    try:
        async with engine.connect() as conn:
            found = await current_revision(conn)
            # A revision this code does not know is a newer one (a node upgraded first
            # migrated): its migrations only add, so this code still runs there. Unless
            # the database is another application's.
            try:
                newer = await unknown_revision(conn, found)
            except ForeignSchema as exc:
                return f"{exc}: point CHATCRM_DATABASE_URL at chatcrm's database"
    except Exception:  # unreachable, or refusing: the requests say so
        return None
    if head is None or found == head or newer is not None:
        return None
    at = "has no chatcrm schema" if found is None else f"is at schema revision {found}"
    return f"the database {at}, this version of chatcrm needs {head}: run `chatcrm migrate`"


async def upgrade(
    engine: AsyncEngine, *, lay_out: bool = True
) -> tuple[str | None, str] | NewerSchema | None:
    """Migrate to head inside one transaction that holds the migration lock.

    PostgreSQL: a transaction-scoped advisory lock, so nodes starting together queue up
    and the later ones find nothing left to do. SQLite: the engine's BEGIN IMMEDIATE
    takes the database write lock before Alembic even reads the current version.

    On a database that `chatcrm citus distribute` has laid out, the tables a migration
    added are then laid out too (distributed or made reference tables), after the
    migration's commit: Citus copies a table's rows in a transaction of its own.
    `lay_out=False` leaves that to the caller (`chatcrm citus distribute` reports it).

    Returns the revisions migrated from and to (None: from an empty database), a
    NewerSchema for a database a newer chatcrm migrated (left as it is), or None when
    there was nothing to do. Raises ForeignSchema, changing nothing, for a database
    that holds another application's tables or Alembic history.
    """
    migrated: tuple[str | None, str] | NewerSchema | None = None
    async with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            await conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_LOCK_KEY})
        head = head_revision()
        before = await current_revision(conn)
        migrated = await unknown_revision(conn, before)
        # Refused before any statement: a database holding tables but no chatcrm schema is
        # another application's, even when none of its names is one of chatcrm's.
        foreign = await _foreign_table(conn) if before is None else None
        if foreign is not None:
            raise ForeignSchema(f"{foreign!r} exists already")
        if migrated is None and (head is None or before != head):
            if await is_laid_out(conn):
                # One transaction runs every migration: on Citus a function command (0017
                # replaces chatcrm_fold) is refused after DDL sent to the shards over
                # parallel connections (0016 adds a column) unless the shards' DDL goes
                # over one connection per worker.
                await conn.execute(text(_SEQUENTIAL))
            try:
                await conn.run_sync(_upgrade_sync)
            except Exception as exc:
                taken = _duplicate_name(exc) if before is None else None
                if taken is None:
                    raise
                # The transaction rolls back: the other tables stay as they were.
                raise ForeignSchema(f"{taken!r} exists already") from exc
            migrated = (before, str(await current_revision(conn)))
        # Only when something is left to lay out: laying out also checks every worker.
        on_citus = lay_out and await is_laid_out(conn) and await anything_to_lay_out(conn)
    if on_citus:
        await distribute(engine)
    return migrated


_SEQUENTIAL = "SET LOCAL citus.multi_shard_modify_mode TO 'sequential'"


def _upgrade_sync(connection: Connection) -> None:
    from alembic import command

    command.upgrade(alembic_config(connection), "head")
