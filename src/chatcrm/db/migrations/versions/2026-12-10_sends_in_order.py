"""sends_in_order: a contact's queued messages, oldest first

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-10 09:00:00

Messages queued to one contact go out one after the other, in the order they were queued
(docs/channels.md 8): the sender claims a message only when no older message of its
contact is still queued. This partial index answers that question from the few queued rows
of the contact, not from its whole conversation.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_messages_queued_by_contact",
        "messages",
        ["workspace_id", "contact_id", "created_at", "id"],
        sqlite_where=sa.text("status = 'queued'"),
        postgresql_where=sa.text("status = 'queued'"),
    )


def downgrade() -> None:
    op.drop_index("ix_messages_queued_by_contact", table_name="messages")
