"""idempotency keys; per-key rate limits

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-26 00:30:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TS = sa.DateTime(timezone=True)


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("rate_limit", sa.Float(), nullable=True))
    op.create_table(
        "idempotency_keys",
        sa.Column("account_id", sa.String(length=36), nullable=False),
        sa.Column("method", sa.String(length=8), nullable=False),
        sa.Column("path", sa.String(length=512), nullable=False),
        sa.Column("key", sa.String(length=255), nullable=False),
        sa.Column("request_hash", sa.String(length=64), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=False),
        sa.Column("response_body", sa.Text(), nullable=False),
        sa.Column("response_headers", sa.Text(), nullable=False),
        sa.Column("created_at", TS, nullable=False),
        sa.Column("expires_at", TS, nullable=False),
        sa.PrimaryKeyConstraint(
            "account_id", "method", "path", "key", name=op.f("pk_idempotency_keys")
        ),
    )
    op.create_index("ix_idempotency_keys_expires", "idempotency_keys", ["expires_at"])


def downgrade() -> None:
    op.drop_table("idempotency_keys")
    with op.batch_alter_table("api_keys") as batch:
        batch.drop_column("rate_limit")
