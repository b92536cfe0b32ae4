"""conversations: WhatsApp channels and the messages of each contact (contract K)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-02 09:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.String(length=36)


def _at(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "channels",
        sa.Column("id", _ID, nullable=False),
        sa.Column("workspace_id", _ID, nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("phone_number_id", sa.String(length=64), nullable=False),
        sa.Column("display_phone_number", sa.String(length=64), nullable=True),
        sa.Column("api_base_url", sa.Text(), nullable=False),
        sa.Column("verify_token", sa.String(length=200), nullable=False),
        sa.Column("access_token", sa.Text(), nullable=False),
        sa.Column("app_secret", sa.String(length=200), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        _at("created_at"),
        _at("updated_at"),
        sa.ForeignKeyConstraint(
            ["workspace_id"], ["workspaces.id"], name=op.f("fk_channels_workspace_id_workspaces")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_channels")),
    )
    op.create_index("ix_channels_phone_number_id", "channels", ["phone_number_id"], unique=True)
    op.create_index("ix_channels_list", "channels", ["workspace_id", "created_at", "id"])
    op.create_table(
        "messages",
        sa.Column("workspace_id", _ID, nullable=False),
        sa.Column("id", _ID, nullable=False),
        sa.Column("contact_id", _ID, nullable=False),
        sa.Column("direction", sa.String(length=8), nullable=False),
        sa.Column("channel", sa.Integer(), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("media", sa.Text(), nullable=True),
        sa.Column("location", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("external_id", sa.String(length=200), nullable=True),
        sa.Column("reply_to_id", _ID, nullable=True),
        sa.Column("sent_by", sa.Text(), nullable=True),
        _at("created_at"),
        _at("status_at"),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("channel_id", _ID, nullable=True),
        sa.Column("template", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False, server_default=sa.text("0")),
        _at("next_attempt_at", nullable=True),
        _at("attempt_started_at", nullable=True),
        _at("receipt_due_at", nullable=True),
        sa.ForeignKeyConstraint(
            ["workspace_id", "contact_id"],
            ["contacts.workspace_id", "contacts.id"],
            name=op.f("fk_messages_workspace_id_contact_id_contacts"),
        ),
        sa.PrimaryKeyConstraint("workspace_id", "id", name=op.f("pk_messages")),
    )
    op.create_index(
        "ix_messages_conversation", "messages", ["workspace_id", "contact_id", "created_at", "id"]
    )
    op.create_index(
        "ix_messages_external_id",
        "messages",
        ["workspace_id", "external_id"],
        unique=True,
        sqlite_where=sa.text("external_id IS NOT NULL"),
        postgresql_where=sa.text("external_id IS NOT NULL"),
    )
    op.create_index(
        "ix_messages_sends_due",
        "messages",
        ["next_attempt_at"],
        sqlite_where=sa.text("status = 'queued'"),
        postgresql_where=sa.text("status = 'queued'"),
    )
    op.create_index(
        "ix_messages_receipts_due",
        "messages",
        ["receipt_due_at"],
        sqlite_where=sa.text("receipt_due_at IS NOT NULL"),
        postgresql_where=sa.text("receipt_due_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_table("messages")
    op.drop_table("channels")
