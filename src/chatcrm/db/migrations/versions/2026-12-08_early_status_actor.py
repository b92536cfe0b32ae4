"""early_status_actor: who brought a status kept for its message's wamid

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-08 09:00:00

A status kept in `early_statuses` is applied later, in the sender's transaction; its event
must still name the channel whose delivery brought it (J.4), not the system. The actor is
kept with the status as JSON; a status kept before this migration (NULL) is the system's.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("early_statuses", sa.Column("actor", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("early_statuses", "actor")
