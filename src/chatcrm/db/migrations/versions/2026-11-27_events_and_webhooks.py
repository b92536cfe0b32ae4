"""events outbox, feed positions, webhooks and their deliveries

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27 09:00:00
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)
ID = sa.String(length=36)
EVENT_ID = sa.String(length=40)


def _partial(where: str) -> dict[str, Any]:
    return {"sqlite_where": sa.text(where), "postgresql_where": sa.text(where)}


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        # Insertion order of events (SQLite draws it under its single writer instead).
        op.execute("CREATE SEQUENCE IF NOT EXISTS events_seq")
    op.create_table(
        "events",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("id", EVENT_ID, nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("position", sa.BigInteger(), nullable=True),
        sa.Column("type", sa.String(length=40), nullable=False),
        sa.Column("record_id", ID, nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_events")),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspaces.id"], name=op.f("fk_events_workspace_id_workspaces")
        ),
    )
    op.create_index("ix_events_feed", "events", ["workspace_id", "position"])
    op.create_index("ix_events_record", "events", ["workspace_id", "record_id", "position"])
    op.create_index("ix_events_unpublished", "events", ["seq"], **_partial("position IS NULL"))
    op.create_index("ix_events_created", "events", ["created_at"])

    op.create_table(
        "event_positions",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("last_position", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_event_positions")),
    )
    op.execute("INSERT INTO event_positions (id, last_position) VALUES (1, 0)")

    op.create_table(
        "webhooks",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("id", ID, nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("event_types", sa.Text(), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("disabled_reason", sa.String(length=16), nullable=True),
        sa.Column("secret", sa.String(length=64), nullable=False),
        sa.Column("previous_secret", sa.String(length=64), nullable=True),
        sa.Column("previous_secret_expires_at", TS, nullable=True),
        sa.Column("consecutive_failures", sa.Integer(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("updated_at", TS, nullable=False),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_webhooks")),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspaces.id"], name=op.f("fk_webhooks_workspace_id_workspaces")
        ),
    )
    op.create_index("ix_webhooks_list", "webhooks", ["workspace_id", "created_at", "id"])

    op.create_table(
        "webhook_deliveries",
        sa.Column("workspace_id", ID, nullable=False),
        sa.Column("webhook_id", ID, nullable=False),
        sa.Column("event_id", EVENT_ID, nullable=False),
        sa.Column("event_type", sa.String(length=40), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", TS, nullable=True),
        sa.Column("last_attempt_at", TS, nullable=True),
        sa.Column("last_response_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", TS, nullable=False),
        sa.PrimaryKeyConstraint(
            "workspace_id", "webhook_id", "event_id", name=op.f("pk_webhook_deliveries")
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id", "webhook_id"],
            ["webhooks.workspace_id", "webhooks.id"],
            name=op.f("fk_webhook_deliveries_workspace_id_webhook_id_webhooks"),
        ),
        sa.ForeignKeyConstraint(
            ["workspace_id", "event_id"],
            ["events.workspace_id", "events.id"],
            name=op.f("fk_webhook_deliveries_workspace_id_event_id_events"),
        ),
    )
    op.create_index(
        "ix_webhook_deliveries_list",
        "webhook_deliveries",
        ["workspace_id", "webhook_id", "created_at", "event_id"],
    )
    op.create_index(
        "ix_webhook_deliveries_due",
        "webhook_deliveries",
        ["next_attempt_at"],
        **_partial("status = 'pending'"),
    )


def downgrade() -> None:
    op.drop_table("webhook_deliveries")
    op.drop_table("webhooks")
    op.drop_table("event_positions")
    op.drop_table("events")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP SEQUENCE IF EXISTS events_seq")
