"""rate budgets shared by every process and node; the key-change counter

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-28 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    # UNLOGGED on PostgreSQL: no WAL for a row rewritten on every request; after a crash
    # the table comes back empty, which only refills every bucket.
    op.create_table(
        "rate_budgets",
        sa.Column("key_id", sa.String(length=36), nullable=False),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("at", sa.Float(), nullable=False),
        sa.Column("allowed", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("key_id", name=op.f("pk_rate_budgets")),
        prefixes=["UNLOGGED"] if postgres else [],
    )
    op.create_table(
        "key_changes",
        sa.Column("id", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_key_changes")),
    )
    op.execute("INSERT INTO key_changes (id, version) VALUES (1, 0)")


def downgrade() -> None:
    op.drop_table("key_changes")
    op.drop_table("rate_budgets")
