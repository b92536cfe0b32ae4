"""rate budgets hand out leases: each check records how many tokens it took

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-29 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _rate_budgets(last: sa.Column[object]) -> None:
    # The table only caches buckets (after a crash PostgreSQL empties it anyway): made
    # again, every bucket starts full, as after a restart.
    op.drop_table("rate_budgets")
    op.create_table(
        "rate_budgets",
        sa.Column("key_id", sa.String(length=36), nullable=False),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        last,
        sa.PrimaryKeyConstraint("key_id", name=op.f("pk_rate_budgets")),
        prefixes=["UNLOGGED"] if op.get_bind().dialect.name == "postgresql" else [],
    )


def upgrade() -> None:
    _rate_budgets(sa.Column("taken", sa.Integer(), nullable=False))


def downgrade() -> None:
    _rate_budgets(sa.Column("allowed", sa.Boolean(), nullable=False))
