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

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from chatcrm.db.citus_node import NotACoordinator, check_coordinator, check_workers_answer

DISTRIBUTION_COLUMN = "workspace_id"
# Small, rarely written and read by every request: a copy on every node.
REFERENCE_TABLES = ("accounts", "workspaces", "api_keys", "channels")
# Arbitrary constant naming this lay-out among PostgreSQL advisory locks (one run at a
# time: two nodes starting together must not both distribute the same table).
LOCK_KEY = 0x63686174_63697475

# Without the first, making `workspaces` a reference table turns every table with a
# foreign key to it into a "Citus local table", which create_distributed_table then
# refuses ("cannot distribute relation"). Without the second, tables with triggers are
# refused. Without the third, distributing a table with rows and a foreign key to a table
# that also has rows and is itself distributed by workspace_id (a tag of a contact, a
# delivery of an event) fails: "cannot execute parallel DDL on table … after DDL command on
# reference table "workspaces"" — the copy reads `workspaces` over one connection, and the
# foreign key's checks would then open several in the same transaction.
_SESSION_SETTINGS = (
    "SET citus.enable_local_reference_table_foreign_keys TO off",
    "SET citus.enable_unsafe_triggers TO on",
    "SET citus.multi_shard_modify_mode TO 'sequential'",
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


# The coordinator's own copy of a table laid out here that still holds rows: left by the
# copy to the shards until emptied (also by a run that failed before emptying it).
_LEFT_ON_THE_COORDINATOR = text(
    """
    SELECT c.relname
    FROM pg_dist_partition p
    JOIN pg_class c ON c.oid = p.logicalrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = current_schema() AND NOT (p.partmethod = 'n' AND p.repmodel = 's')
      AND pg_relation_size(c.oid) > 0
    """
)
# The extensions the migrations create (search: 0011, 0013). Created on the coordinator
# after `CREATE EXTENSION citus`, Citus creates them on the workers too; created before it
# (a database migrated, then made a coordinator), they are only on the coordinator, and
# the shards' search function and indexes would fail there.
_EXTENSIONS_OF_THE_SCHEMA = ("pg_trgm", "unaccent")
_EXTENSIONS = text("SELECT extname FROM pg_extension WHERE extname = ANY(:names) ORDER BY 1")
_ON_WORKERS = text(
    "SELECT nodename, nodeport, success, result FROM run_command_on_workers(:command)"
)
# The feed's order before the move, kept by `seq` alone: the copy to the shards gives
# every moved event the id of the transaction that copied it (the trigger fires again on
# the worker), so afterwards a workspace's events share one `txid` and `seq` orders them.
# Each workspace's own `seq` values are dealt out again in (txid, seq) order: no value new,
# none drawn from the sequence. An event never in the feed (txid -1) keeps its own.
_SEQ_IN_FEED_ORDER = text(
    """
    WITH feed AS (
      SELECT workspace_id, id, seq,
             row_number() OVER (PARTITION BY workspace_id ORDER BY txid, seq) AS place,
             row_number() OVER (PARTITION BY workspace_id ORDER BY seq) AS by_seq
        FROM events WHERE txid >= 0
    ),
    dealt AS (
      SELECT f.workspace_id, f.id, s.seq
        FROM feed f JOIN feed s ON s.workspace_id = f.workspace_id AND s.by_seq = f.place
       WHERE s.seq <> f.seq
    )
    UPDATE events e SET seq = d.seq
      FROM dealt d WHERE e.workspace_id = d.workspace_id AND e.id = d.id
    """
)
# A webhook whose place is to be taken again, at its workspace's last event, once the
# events have moved (their transaction ids change with the move): marked so before the
# move and committed, a run cut short after the move leaves the mark for the next run.
_TO_PLACE = -1
_MARK_WEBHOOKS = text(f"UPDATE webhooks SET feed_txid = {_TO_PLACE}, feed_seq = 0")
_WEBHOOKS = text(
    f"SELECT workspace_id, id FROM webhooks WHERE feed_txid = {_TO_PLACE} ORDER BY workspace_id, id"
)
# A workspace's last event in the feed (events/feed.py's end, without its gate: nothing
# else runs while the layout changes).
_FEED_END = text(
    "SELECT txid, seq FROM events WHERE workspace_id = :ws AND txid >= 0 "
    "ORDER BY txid DESC, seq DESC LIMIT 1"
)
_PLACE_WEBHOOK = text(
    "UPDATE webhooks SET feed_txid = :txid, feed_seq = :seq WHERE workspace_id = :ws AND id = :id"
)

# Called before the event table's rows move (see `distribute`).
BeforeEventsMove = Callable[[], Awaitable[None]]


@dataclass(frozen=True)
class _Table:
    name: str
    tenant: bool  # has a workspace_id column
    laid_out: bool  # already distributed or a reference table
    # A "Citus local table": one created after the layout with a foreign key to a
    # reference table (a later migration's), which Citus adds to its metadata at once.
    # Its rows are already in a shard of the coordinator: no local copy to remove.
    citus_local: bool


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


async def anything_to_lay_out(conn: AsyncConnection) -> bool:
    """Whether a table of the schema is not laid out yet (a migration added it, or a
    `distribute` was cut short). Read from the coordinator's catalog alone: a start on a
    cluster with a worker down (its workspaces' requests fail, the others' are served)
    is not refused for a layout that is already whole."""
    rows = (await conn.execute(_TABLES, {"column": DISTRIBUTION_COLUMN})).all()
    return any(
        (r.tenant or r.name in REFERENCE_TABLES) and (r.method is None or r.citus_local)
        for r in rows
    )


async def distribute(
    engine: AsyncEngine, *, before_events_move: BeforeEventsMove | None = None
) -> list[str]:
    """Lay every table not yet laid out on this Citus coordinator out; one line per table
    (`distributed contacts by workspace_id`, `made accounts a reference table`).

    Each call commits on its own (autocommit): a create_distributed_table of a table with
    rows copies them to the shards, which Citus does not allow after other distributed
    work in the same transaction. Raises NotACoordinator when this is not one.

    Moving the event table changes every event's transaction id: its trigger fires again
    on the worker, with the worker's ids, which have nothing to do with the coordinator's.
    A feed reader's `after` names an event, found again at its new place; a webhook's
    place is kept as ids, so `before_events_move` is awaited first (the publisher's
    `publish_pending`: every delivery of the events so far queued) and each webhook then
    starts from its workspace's last event, as when it is created.
    """
    async with engine.connect() as conn:
        conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
        await check_coordinator(conn)
        await check_workers_answer(conn)
        for setting in _SESSION_SETTINGS:
            await conn.execute(text(setting))
        await conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": LOCK_KEY})
        try:
            return await _lay_out(conn, before_events_move)
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


# The schema's functions that the workers call in the statements sent to them (the feed's
# gate, migration 0014). Citus copies a function created on a coordinator to its workers,
# but one created before `CREATE EXTENSION citus` stays on the coordinator until it is
# distributed; distributed, a later CREATE OR REPLACE reaches the workers too.
_WORKER_FUNCTIONS = ("chatcrm_feed_gate()",)
_UNDISTRIBUTED = text(
    "SELECT f FROM unnest(CAST(:functions AS text[])) f WHERE NOT EXISTS ("
    "SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass "
    "AND o.objid = to_regprocedure(f))"
)


async def _functions_on_the_workers(conn: AsyncConnection) -> None:
    missing = (await conn.execute(_UNDISTRIBUTED, {"functions": list(_WORKER_FUNCTIONS)})).all()
    for (signature,) in missing:
        await conn.execute(text("SELECT create_distributed_function(:f)"), {"f": signature})


async def _extensions_on_the_workers(conn: AsyncConnection) -> None:
    names = list(_EXTENSIONS_OF_THE_SCHEMA)
    for (name,) in (await conn.execute(_EXTENSIONS, {"names": names})).all():
        # Only where it is missing: a worker refuses any DDL of an extension Citus manages.
        probe = f"SELECT count(*) FROM pg_extension WHERE extname = '{name}'"
        found = (await conn.execute(_ON_WORKERS, {"command": probe})).all()
        if all(node.success and node.result == "1" for node in found):
            continue
        # On the worker alone: with propagation on, a worker refuses the DDL ("operation
        # is not allowed on this node"), which only the coordinator may propagate.
        command = (
            "SET citus.enable_ddl_propagation TO off; "
            f"CREATE EXTENSION IF NOT EXISTS {name} SCHEMA public"
        )
        for node in (await conn.execute(_ON_WORKERS, {"command": command})).all():
            if not node.success:
                raise NotACoordinator(
                    f"could not create the {name} extension on the worker "
                    f"{node.nodename}:{node.nodeport}: {node.result}"
                )


async def _lay_out(conn: AsyncConnection, before_events_move: BeforeEventsMove | None) -> list[str]:
    await _extensions_on_the_workers(conn)
    await _functions_on_the_workers(conn)
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
    events_move = "events" in tenant
    if events_move and before_events_move is not None:
        await before_events_move()
    if events_move:
        await conn.execute(_SEQ_IN_FEED_ORDER)
        if "webhooks" in tables:
            await conn.execute(_MARK_WEBHOOKS)

    done: list[str] = []
    for name in _dependency_order(reference, edges):
        await conn.execute(text("SELECT create_reference_table(:t)"), {"t": name})
        done.append(f"made {name} a reference table")
    for name in _dependency_order(tenant, edges):
        # The first one opens a co-location group of its own; the others join it.
        await conn.execute(
            text("SELECT create_distributed_table(:t, :column, colocate_with => :with)"),
            {"t": name, "column": DISTRIBUTION_COLUMN, "with": anchor or "none"},
        )
        anchor = anchor or name
        done.append(f"distributed {name} by {DISTRIBUTION_COLUMN}")
    if "webhooks" in tables:  # this run's move, or a move an earlier run was cut short after
        placed = await _webhooks_from_the_feeds_end(conn)
        if placed:
            done.append(f"started {placed} webhook(s) after their workspace's last event")
    # Referencing tables first: a shell cannot be emptied while another's rows point at it.
    left = [r.relname for r in (await conn.execute(_LEFT_ON_THE_COORDINATOR)).all()]
    for name in reversed(_dependency_order(left, edges)):
        await conn.execute(
            text("SELECT truncate_local_data_after_distributing_table(:t)"), {"t": name}
        )
    return done


async def _webhooks_from_the_feeds_end(conn: AsyncConnection) -> int:
    """Each marked webhook's place at its workspace's last event, in the workers' ids."""
    webhooks = (await conn.execute(_WEBHOOKS)).all()
    for ws, webhook_id in webhooks:
        end = (await conn.execute(_FEED_END, {"ws": ws})).first()
        txid, seq = (int(end.txid), int(end.seq)) if end is not None else (0, 0)
        await conn.execute(_PLACE_WEBHOOK, {"ws": ws, "id": webhook_id, "txid": txid, "seq": seq})
    return len(webhooks)
