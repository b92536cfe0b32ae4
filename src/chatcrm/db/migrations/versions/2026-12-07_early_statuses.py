"""early_statuses: statuses Meta reports before its answer to the send is recorded

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07 09:00:00

Meta's status webhook for a message may arrive before the sender has recorded Meta's
answer, the message's wamid. Answered 200 (K.2), such a status would be lost: it is kept
here and applied when the wamid is recorded (messages/tables.py). On Citus the table is
distributed by workspace with the others (db/migrate.py lays new tables out).
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "early_statuses",
        sa.Column("workspace_id", sa.String(length=36), nullable=False),
        sa.Column("external_id", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "workspace_id", "external_id", "status", name=op.f("pk_early_statuses")
        ),
    )
    op.create_index("ix_early_statuses_received_at", "early_statuses", ["received_at"])


def downgrade() -> None:
    op.drop_index("ix_early_statuses_received_at", table_name="early_statuses")
    op.drop_table("early_statuses")
