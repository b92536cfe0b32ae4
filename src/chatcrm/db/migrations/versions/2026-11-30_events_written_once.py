"""events are written once: the feed is ordered by (txid, seq) behind a snapshot gate, and
each webhook keeps the feed position through which its deliveries are queued

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-30 09:00:00

Before: a publisher gave each committed event its feed `position` with an UPDATE (every
event row written twice). After: an event's place in the feed is fixed at its INSERT —
`txid` (PostgreSQL: the writing transaction's id, raised to its record's last event's, set
by the trigger below; SQLite: 0, its single writer makes `seq` commit order; -1: never in
the feed) then `seq` — and readers only take events whose `txid` is below every
transaction still running (events/feed.py).

Existing events keep their order: on PostgreSQL published ones take their position as
`seq` with `txid` 0 (below any real transaction id), unpublished ones follow them; on
SQLite `seq` already was the commit order. Each webhook's cursor starts after the events
the old publisher had already queued for it.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The trigger that fixes an event's feed place at its INSERT (see events/feed.py for why a
# record's last event's txid is taken when it is higher). `chatcrm citus distribute`
# replaces its body with one that reads the shard it runs on (db/citus.py).
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
    SELECT max(e.txid) INTO previous FROM events e
     WHERE e.workspace_id = NEW.workspace_id AND e.record_id = NEW.record_id;
    IF previous > NEW.txid THEN
      NEW.txid := previous;
    END IF;
  END IF;
  RETURN NEW;
END
$$
"""
EVENT_TXID_TRIGGER = (
    "CREATE TRIGGER events_txid BEFORE INSERT ON events "
    "FOR EACH ROW EXECUTE FUNCTION chatcrm_event_txid()"
)


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    # 0 until the trigger sets it (PostgreSQL); what SQLite keeps.
    op.add_column("events", sa.Column("txid", sa.BigInteger(), nullable=False, server_default="0"))
    for column in ("feed_txid", "feed_seq"):
        op.add_column(
            "webhooks",
            sa.Column(column, sa.BigInteger(), nullable=False, server_default="0"),
        )
    # Each webhook's cursor: after the last event the old publisher had positioned (and so
    # queued the deliveries of). In `seq` terms: PostgreSQL's `seq` becomes the position
    # below; SQLite's already was in the same order as the positions.
    last_published = "max(e.position)" if postgres else "max(e.seq)"
    op.execute(
        f"UPDATE webhooks SET feed_seq = coalesce((SELECT {last_published} FROM events e "
        "WHERE e.workspace_id = webhooks.workspace_id AND e.position > 0), 0)"
    )
    if postgres:
        # Events not yet positioned follow the positioned ones, in insertion order.
        op.execute(
            """
            WITH ordered AS (
              SELECT workspace_id, id,
                     (SELECT coalesce(max(position), 0) FROM events)
                       + row_number() OVER (ORDER BY seq) AS pos
                FROM events WHERE position IS NULL
            )
            UPDATE events e SET position = o.pos
              FROM ordered o WHERE e.workspace_id = o.workspace_id AND e.id = o.id
            """
        )
        op.execute("UPDATE events SET seq = position WHERE position > 0")
    op.execute("UPDATE events SET txid = -1 WHERE position = 0")

    op.drop_index("ix_events_feed", table_name="events")
    op.drop_index("ix_events_record", table_name="events")
    op.drop_index("ix_events_unpublished", table_name="events")
    # A plain ALTER (SQLite 3.35+), not a table rebuild: the delivery rows refer to events.
    op.execute("ALTER TABLE events DROP COLUMN position")
    op.create_index("ix_events_feed", "events", ["workspace_id", "txid", "seq"])
    op.create_index("ix_events_record", "events", ["workspace_id", "record_id", "txid", "seq"])
    op.drop_table("event_positions")
    if postgres:
        citus = op.get_bind().exec_driver_sql(
            "SELECT count(*) FROM pg_extension WHERE extname = 'citus'"
        )
        if citus.scalar():
            # A database already laid out on Citus: a trigger on a distributed table needs
            # this (db/citus.py then gives the function its shard-local body).
            op.execute("SET LOCAL citus.enable_unsafe_triggers TO on")
        op.execute(EVENT_TXID_FUNCTION)
        op.execute(EVENT_TXID_TRIGGER)


def downgrade() -> None:
    raise NotImplementedError("events written once: there is no way back to positions")
