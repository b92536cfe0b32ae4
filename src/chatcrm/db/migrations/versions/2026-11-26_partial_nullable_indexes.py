"""partial indexes on mostly-NULL lookup columns

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26 01:40:00

SQLite's statistics count NULLs as one very frequent value, so with most contacts having
no sender phone (or no agent) its planner judged `platform_sender_phone = ?` to match the
whole workspace and scanned instead. Indexing only the non-NULL rows fixes the estimate
on SQLite and makes the indexes smaller on both databases.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PARTIAL = {
    "ix_contacts_sender_phone": (
        "contacts",
        ["workspace_id", "platform_sender_phone"],
        "platform_sender_phone IS NOT NULL",
    ),
    "ix_contacts_agent_list": (
        "contacts",
        ["workspace_id", "assigned_agent_id", "created_at", "id"],
        "assigned_agent_id IS NOT NULL",
    ),
    "ix_opportunities_agent_list": (
        "opportunities",
        ["workspace_id", "assigned_agent_id", "created_at", "id"],
        "assigned_agent_id IS NOT NULL",
    ),
    "ix_opportunities_contact": (
        "opportunities",
        ["workspace_id", "contact_id"],
        "contact_id IS NOT NULL",
    ),
}


def upgrade() -> None:
    for name, (table, columns, where) in _PARTIAL.items():
        op.drop_index(name, table_name=table)
        op.create_index(
            name,
            table,
            columns,
            sqlite_where=sa.text(where),
            postgresql_where=sa.text(where),
        )


def downgrade() -> None:
    for name, (table, columns, _) in _PARTIAL.items():
        op.drop_index(name, table_name=table)
        op.create_index(name, table, columns)
