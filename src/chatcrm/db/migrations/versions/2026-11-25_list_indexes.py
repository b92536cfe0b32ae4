"""indexes for list filters and phone lookups

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25 23:30:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_INDEXES = {
    "ix_contacts_phone": ("contacts", ["workspace_id", "internal_whatsapp_number"]),
    "ix_contacts_stage_list": ("contacts", ["workspace_id", "stage_id", "created_at", "id"]),
    "ix_contacts_agent_list": (
        "contacts",
        ["workspace_id", "assigned_agent_id", "created_at", "id"],
    ),
    "ix_contacts_solved_list": ("contacts", ["workspace_id", "is_solved", "created_at", "id"]),
    "ix_contacts_modified": ("contacts", ["workspace_id", "modified_at"]),
    "ix_opportunities_stage_list": (
        "opportunities",
        ["workspace_id", "stage_id", "created_at", "id"],
    ),
    "ix_opportunities_agent_list": (
        "opportunities",
        ["workspace_id", "assigned_agent_id", "created_at", "id"],
    ),
    "ix_opportunities_status_list": (
        "opportunities",
        ["workspace_id", "win_loss_status", "created_at", "id"],
    ),
    "ix_opportunities_modified": ("opportunities", ["workspace_id", "modified_at"]),
}


def upgrade() -> None:
    for name, (table, columns) in _INDEXES.items():
        op.create_index(name, table, columns)


def downgrade() -> None:
    for name, (table, _) in _INDEXES.items():
        op.drop_index(name, table_name=table)
