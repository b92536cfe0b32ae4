"""people: users, invitation and reset links, console sessions, sign-in throttling, the
audit log, and scoped API keys (contract J)

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-01 09:00:00

Existing keys keep every permission: their `scopes` and `workspace_ids` stay NULL.
Existing events gain the last key `actor` (J.4) as the service itself: who acted before
people existed is not known.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.String(length=36)


def _at(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


# The stored event object ends with "}": the actor goes in before it, once.
_SYSTEM_ACTOR = ',"actor":{"type":"system","id":null,"name":"chatcrm"}}'


def upgrade() -> None:
    events = sa.table("events", sa.column("body", sa.Text()))
    op.execute(
        events.update().values(
            body=sa.func.substr(events.c.body, 1, sa.func.length(events.c.body) - 1).op("||")(
                sa.literal(_SYSTEM_ACTOR)
            )
        )
    )
    op.create_table(
        "users",
        sa.Column("id", _ID, nullable=False),
        sa.Column("account_id", _ID, nullable=False),
        sa.Column("email", sa.String(length=254), nullable=False),
        sa.Column("email_key", sa.String(length=254), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("workspace_ids", sa.Text(), nullable=False),
        sa.Column("password_hash", sa.String(length=200), nullable=True),
        sa.Column("totp_secret", sa.String(length=64), nullable=True),
        sa.Column("two_factor_enabled", sa.Boolean(), nullable=False),
        sa.Column("totp_last_step", sa.BigInteger(), nullable=True),
        sa.Column("recovery_codes", sa.Text(), nullable=True),
        _at("created_at"),
        _at("updated_at"),
        _at("last_sign_in_at", nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
    )
    op.create_index(op.f("ix_users_email_key"), "users", ["email_key"], unique=True)
    op.create_index(op.f("ix_users_account_id"), "users", ["account_id"])
    op.create_table(
        "user_tokens",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", _ID, nullable=False),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        _at("created_at"),
        _at("expires_at"),
        _at("used_at", nullable=True),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_user_tokens")),
    )
    op.create_index(op.f("ix_user_tokens_user_id"), "user_tokens", ["user_id"])
    op.create_table(
        "sessions",
        sa.Column("id", _ID, nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", _ID, nullable=False),
        sa.Column("account_id", _ID, nullable=False),
        _at("created_at"),
        _at("last_seen_at"),
        _at("expires_at"),
        _at("ended_at", nullable=True),
        sa.Column("user_agent", sa.String(length=500), nullable=False),
        sa.Column("ip", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sessions")),
    )
    op.create_index(op.f("ix_sessions_token_hash"), "sessions", ["token_hash"], unique=True)
    op.create_index(op.f("ix_sessions_user_id"), "sessions", ["user_id"])
    op.create_table(
        "sign_in_failures",
        sa.Column("subject", sa.String(length=300), nullable=False),
        sa.Column("failures", sa.Integer(), nullable=False),
        _at("window_start"),
        sa.Column("lockouts", sa.Integer(), nullable=False),
        _at("blocked_until", nullable=True),
        sa.PrimaryKeyConstraint("subject", name=op.f("pk_sign_in_failures")),
    )
    op.create_table(
        "audit_log",
        sa.Column("account_id", _ID, nullable=False),
        sa.Column("id", _ID, nullable=False),
        _at("at"),
        sa.Column("actor", sa.Text(), nullable=True),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=300), nullable=True),
        sa.Column("ip", sa.String(length=64), nullable=False),
        sa.Column("user_agent", sa.String(length=500), nullable=False),
        sa.PrimaryKeyConstraint("account_id", "id", name=op.f("pk_audit_log")),
    )
    # Plain ADD COLUMN (SQLite has it for columns with a constant default): a batch
    # operation would copy and drop `workspaces`, which the rows of other tables name.
    op.add_column(
        "workspaces",
        sa.Column(
            "agents_see_only_assigned",
            sa.Boolean(),
            nullable=False,
            server_default=sa.text("false"),
        ),
    )
    op.add_column(
        "api_keys", sa.Column("name", sa.String(length=200), nullable=False, server_default="")
    )
    op.add_column("api_keys", sa.Column("scopes", sa.Text(), nullable=True))
    op.add_column("api_keys", sa.Column("workspace_ids", sa.Text(), nullable=True))
    op.add_column("api_keys", _at("expires_at", nullable=True))
    op.add_column("api_keys", _at("last_used_at", nullable=True))
    op.add_column("api_keys", sa.Column("created_by", _ID, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("workspaces") as batch:
        batch.drop_column("agents_see_only_assigned")
    with op.batch_alter_table("api_keys") as batch:
        for column in ("created_by", "last_used_at", "expires_at", "workspace_ids", "scopes"):
            batch.drop_column(column)
        batch.drop_column("name")
    for table in ("audit_log", "sign_in_failures", "sessions", "user_tokens", "users"):
        op.drop_table(table)
