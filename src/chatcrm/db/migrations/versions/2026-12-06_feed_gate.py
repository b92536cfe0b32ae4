"""feed_gate: chatcrm_feed_gate(), the place below which a feed reader may pass

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06 09:00:00

The feed shows an event only once every transaction that could still write one before it
has ended (docs/operations.md 4.10). Transaction ids are the whole server's, so the bound
was the oldest transaction running in any database of the server; this function leaves
out the transactions it sees running, or prepared, in another database (events/feed.py
says why that is safe). A function rather than the expression in each statement: Citus
sends a `SELECT`'s function calls as they are to the worker of the workspace's shard,
where the events' transaction ids are, whereas it would plan a subquery of catalogs on
the coordinator.
PL/pgSQL, so that the planner never inlines it back into that subquery; STABLE, so it
reads the snapshot of the statement that calls it.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FEED_GATE_FUNCTION = """
CREATE OR REPLACE FUNCTION chatcrm_feed_gate() RETURNS bigint
LANGUAGE plpgsql STABLE PARALLEL SAFE
AS $$
DECLARE
  ours oid := (SELECT d.oid FROM pg_database d WHERE d.datname = current_database());
BEGIN
  RETURN COALESCE(
    (SELECT min(x::text::bigint) FROM pg_snapshot_xip(pg_current_snapshot()) x
      WHERE x::xid NOT IN (
        SELECT a.backend_xid FROM pg_stat_get_activity(NULL) a
         WHERE a.backend_xid IS NOT NULL AND a.datid <> ours
        UNION ALL  -- prepared (Citus's two-phase commits): no backend holds them
        SELECT p.transaction FROM pg_prepared_xact() p WHERE p.dbid <> ours)),
    pg_snapshot_xmax(pg_current_snapshot())::text::bigint);
END
$$
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(FEED_GATE_FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS chatcrm_feed_gate()")
