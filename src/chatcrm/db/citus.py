"""Lay a migrated database on a Citus coordinator out as docs/scaling.md section 3.1 says.

Every table with a `workspace_id` column is distributed by it, all in one co-location
group but `channels`; `accounts`, `workspaces`, `api_keys` and `channels` (Meta's webhook
finds a channel by its id alone) become reference tables; every other table
(`alembic_version`, `rate_budgets`, `key_changes`, `service_secrets`, `idempotency_keys`,
and the people's `users`, `user_tokens`, `sessions`, `sign_in_failures`, `audit_log`) stays
a plain table of the coordinator. The tables are read from the
live catalog, not listed here, so a table added by a later migration is laid out by the
next run; tables already in `pg_dist_partition` are skipped, so a second run changes
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

DISTRIBUTION_COLUMN = "workspace_id"
# Small, rarely written and read by every request: a copy on every node.
REFERENCE_TABLES = ("accounts", "workspaces", "api_keys", "channels")
# Arbitrary constant naming this lay-out among PostgreSQL advisory locks (one run at a
# time: two nodes starting together must not both distribute the same table).
LOCK_KEY = 0x63686174_63697475

# Without this, making `workspaces` a reference table turns every table with a foreign
# key to it into a "Citus local table", which create_distributed_table then refuses
# ("cannot distribute relation"). Without the second, tables with triggers are refused.
_SESSION_SETTINGS = (
    "SET citus.enable_local_reference_table_foreign_keys TO off",
    "SET citus.enable_unsafe_triggers TO on",
)

_TABLES = text(
    """
    SELECT c.relname AS name,
           EXISTS (SELECT 1 FROM pg_attribute a
                   WHERE a.attrelid = c.oid AND a.attname = :column
                     AND a.attnum > 0 AND NOT a.attisdropped) AS tenant,
           p.partmethod AS method,
           p.partmethod = 'n' AND p.repmodel = 's' AS citus_local
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
    WHERE n.nspname = current_schema() AND c.relkind = 'r'
    """
)
_FOREIGN_KEYS = text(
    """
    SELECT DISTINCT c.conrelid::regclass::text AS referencing,
                    c.confrelid::regclass::text AS referenced
    FROM pg_constraint c
    JOIN pg_class r ON r.oid = c.conrelid
    JOIN pg_namespace n ON n.oid = r.relnamespace
    WHERE c.contype = 'f' AND n.nspname = current_schema()
    """
)
# The table whose co-location group the tenant tables share, when one is distributed.
_ANCHOR = text(
    """
    SELECT p.logicalrelid::regclass::text
    FROM pg_dist_partition p
    JOIN pg_class c ON c.oid = p.logicalrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND p.partmethod = 'h'
      AND column_to_column_name(p.logicalrelid, p.partkey) = :column
    ORDER BY p.colocationid, p.logicalrelid::regclass::text
    LIMIT 1
    """
)


# The events trigger of migration 0008, reading the table it fires on (TG_TABLE_NAME)
# rather than `events` by name: on Citus it fires on a worker, on a shard (events_102008),
# where a query of `events` would be a distributed query from inside a shard's write.
# Same answers on the coordinator's own table. Replaced only where the function exists.
EVENT_TXID_FUNCTION = """
CREATE OR REPLACE FUNCTION chatcrm_event_txid() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  previous bigint;
BEGIN
  IF NEW.txid < 0 THEN  -- -1: an event never in the feed (webhook.test)
    RETURN NEW;
  END IF;
  NEW.txid := pg_current_xact_id()::text::bigint;
  IF NEW.record_id IS NOT NULL THEN
    EXECUTE format('SELECT max(e.txid) FROM %I.%I e '
                   'WHERE e.workspace_id = $1 AND e.record_id = $2',
                   TG_TABLE_SCHEMA, TG_TABLE_NAME)
      INTO previous USING NEW.workspace_id, NEW.record_id;
    IF previous > NEW.txid THEN
      NEW.txid := previous;
    END IF;
  END IF;
  RETURN NEW;
END
$$
"""


class NotACoordinator(Exception):
    """The database is not a Citus coordinator with workers; says what is missing."""


@dataclass(frozen=True)
class _Table:
    name: str
    tenant: bool  # has a workspace_id column
    laid_out: bool  # already distributed or a reference table
    # A "Citus local table": one created after the layout with a foreign key to a
    # reference table (a later migration's), which Citus adds to its metadata at once.
    # Its rows are already in a shard of the coordinator: no local copy to remove.
    citus_local: bool


async def is_citus(conn: AsyncConnection) -> bool:
    """Whether the citus extension is installed in this database."""
    found = await conn.execute(text("SELECT 1 FROM pg_extension WHERE extname = 'citus'"))
    return found.first() is not None


async def is_laid_out(conn: AsyncConnection) -> bool:
    """Whether `distribute` has run here: `workspaces` is a reference table."""
    if conn.dialect.name != "postgresql" or not await is_citus(conn):
        return False
    found = await conn.execute(
        text(
            "SELECT 1 FROM pg_dist_partition "
            "WHERE logicalrelid = to_regclass('workspaces') AND partmethod = 'n'"
        )
    )
    return found.first() is not None


async def check_coordinator(conn: AsyncConnection) -> None:
    """Raise NotACoordinator unless this is a Citus coordinator with at least one worker."""
    if conn.dialect.name != "postgresql":
        raise NotACoordinator("not PostgreSQL: Citus needs a PostgreSQL coordinator")
    if not await is_citus(conn):
        raise NotACoordinator(
            "the citus extension is not installed in this database (CREATE EXTENSION citus)"
        )
    if not (await conn.execute(text("SELECT citus_is_coordinator()"))).scalar():
        raise NotACoordinator(
            "this database is not a Citus coordinator "
            "(SELECT citus_set_coordinator_host(host, port) on it)"
        )
    workers = (
        await conn.execute(
            text("SELECT count(*) FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary'")
        )
    ).scalar()
    if not workers:
        raise NotACoordinator("no Citus worker nodes (SELECT citus_add_node(host, port) first)")


def _dependency_order(names: list[str], edges: set[tuple[str, str]]) -> list[str]:
    """`names` with every referenced table before the tables that reference it (by name
    among the tables free to go next, so the order is the same on every run)."""
    pending = set(names)
    ordered: list[str] = []
    while pending:
        ready = sorted(
            t for t in pending if not any(a == t and b in pending and b != t for a, b in edges)
        )
        if not ready:  # a cycle of foreign keys: none in the schema; go on by name
            ready = sorted(pending)[:1]
        ordered.extend(ready)
        pending.difference_update(ready)
    return ordered


async def _has_rows(conn: AsyncConnection, table: str) -> bool:
    found = await conn.execute(text(f'SELECT 1 FROM ONLY "{table}" LIMIT 1'))
    return found.first() is not None


async def distribute(engine: AsyncEngine) -> list[str]:
    """Lay every table not yet laid out on this Citus coordinator out; one line per table
    (`distributed contacts by workspace_id`, `made accounts a reference table`).

    Each call commits on its own (autocommit): a create_distributed_table of a table with
    rows copies them to the shards, which Citus does not allow after other distributed
    work in the same transaction. Raises NotACoordinator when this is not one.
    """
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await check_coordinator(conn)
        for setting in _SESSION_SETTINGS:
            await conn.execute(text(setting))
        await conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": LOCK_KEY})
        try:
            return await _lay_out(conn)
        finally:
            await conn.execute(text("SELECT pg_advisory_unlock(:key)"), {"key": LOCK_KEY})


async def _shard_local_triggers(conn: AsyncConnection) -> None:
    """Give the events trigger its shard-local body (unchanged when it already has it)."""
    found = await conn.execute(
        text(
            "SELECT pg_get_functiondef(p.oid) FROM pg_proc p "
            "JOIN pg_namespace n ON n.oid = p.pronamespace "
            "WHERE p.proname = 'chatcrm_event_txid' AND n.nspname = current_schema()"
        )
    )
    definition = found.scalar()
    if definition is not None and "TG_TABLE_NAME" not in definition:
        await conn.execute(text(EVENT_TXID_FUNCTION))


async def _lay_out(conn: AsyncConnection) -> list[str]:
    await _shard_local_triggers(conn)
    rows = (await conn.execute(_TABLES, {"column": DISTRIBUTION_COLUMN})).all()
    tables = {
        r.name: _Table(
            r.name,
            tenant=bool(r.tenant),
            laid_out=r.method is not None and not r.citus_local,
            citus_local=bool(r.citus_local),
        )
        for r in rows
    }
    edges = {
        (r.referencing, r.referenced)
        for r in (await conn.execute(_FOREIGN_KEYS)).all()
        if r.referencing in tables and r.referenced in tables
    }
    reference = [t for t in REFERENCE_TABLES if t in tables and not tables[t].laid_out]
    tenant = [
        t.name
        for t in tables.values()
        if t.tenant and not t.laid_out and t.name not in REFERENCE_TABLES
    ]
    anchor = (await conn.execute(_ANCHOR, {"column": DISTRIBUTION_COLUMN})).scalar()

    done: list[str] = []
    moved: list[str] = []  # tables whose rows were copied: their shell still holds them
    for name in _dependency_order(reference, edges):
        if not tables[name].citus_local and await _has_rows(conn, name):
            moved.append(name)
        await conn.execute(text("SELECT create_reference_table(:t)"), {"t": name})
        done.append(f"made {name} a reference table")
    for name in _dependency_order(tenant, edges):
        if not tables[name].citus_local and await _has_rows(conn, name):
            moved.append(name)
        # The first one opens a co-location group of its own; the others join it.
        await conn.execute(
            text("SELECT create_distributed_table(:t, :column, colocate_with => :with)"),
            {"t": name, "column": DISTRIBUTION_COLUMN, "with": anchor or "none"},
        )
        anchor = anchor or name
        done.append(f"distributed {name} by {DISTRIBUTION_COLUMN}")
    # Referencing tables first: a shell cannot be emptied while another's rows point at it.
    for name in reversed(moved):
        await conn.execute(
            text("SELECT truncate_local_data_after_distributing_table(:t)"), {"t": name}
        )
    return done
