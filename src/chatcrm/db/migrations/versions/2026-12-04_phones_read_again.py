"""phones_read_again: the workspace's defaultCountry; stored phones read by libphonenumber

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-04 09:00:00

`workspaces.default_country` (ISO 3166 alpha-2, NULL for none) says how bare digits are
read (contract N, core/phone.py). The numbers stored under the first rule are read again
(core/phone.read_again): an international prefix kept as digits (`0051922333444`) or a trunk
0 kept after the country code (`510922333445`). A number whose new form another live contact
of its workspace already has keeps its old form and is reported (a warning naming both
contacts): two contacts are never merged by a migration. No event is written: the number is
the same number, in the form every other contact's already has.
"""

import logging
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from chatcrm.core.phone import read_again

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("chatcrm.migrate")

# The stored numbers read_again may change: a leading 0, or a 0 after 1 to 3 digits.
_CANDIDATES = ("0%", "_0%", "__0%", "___0%")


def _candidates(column: str) -> str:
    return " OR ".join(f"{column} LIKE '{p}'" for p in _CANDIDATES)


def upgrade() -> None:
    op.add_column("workspaces", sa.Column("default_country", sa.String(length=2), nullable=True))
    bind = op.get_bind()
    _read_again_live_unique(bind)
    _read_again_sender_phones(bind)


def _read_again_live_unique(bind: sa.Connection) -> None:
    """internalWhatsappNumber: unique among a workspace's live contacts."""
    rows = bind.execute(
        sa.text(
            "SELECT workspace_id, id, internal_whatsapp_number AS number, deleted_at"
            f" FROM contacts WHERE {_candidates('internal_whatsapp_number')}"
            " ORDER BY workspace_id, created_at, id"
        )
    ).all()
    holder = sa.text(
        "SELECT id FROM contacts WHERE workspace_id = :ws AND internal_whatsapp_number = :number"
        " AND deleted_at IS NULL AND id <> :id"
    )
    change = sa.text(
        "UPDATE contacts SET internal_whatsapp_number = :number"
        " WHERE workspace_id = :ws AND id = :id"
    )
    for row in rows:
        again = read_again(row.number)
        if again == row.number:
            continue
        if row.deleted_at is None:
            other = bind.execute(
                holder, {"ws": row.workspace_id, "number": again, "id": row.id}
            ).scalar()
            if other is not None:
                log.warning(
                    "contact %s of workspace %s keeps its phone %s: read again it is %s,"
                    " the phone of contact %s (merge them if they are one person)",
                    row.id,
                    row.workspace_id,
                    row.number,
                    again,
                    other,
                )
                continue
        bind.execute(change, {"ws": row.workspace_id, "id": row.id, "number": again})


def _read_again_sender_phones(bind: sa.Connection) -> None:
    """platformSenderPhone: not unique, read again wherever it changes."""
    rows = bind.execute(
        sa.text(
            "SELECT workspace_id, id, platform_sender_phone AS number FROM contacts"
            f" WHERE {_candidates('platform_sender_phone')}"
        )
    ).all()
    change = sa.text(
        "UPDATE contacts SET platform_sender_phone = :number WHERE workspace_id = :ws AND id = :id"
    )
    for row in rows:
        again = read_again(row.number)
        if again != row.number:
            bind.execute(change, {"ws": row.workspace_id, "id": row.id, "number": again})


def downgrade() -> None:
    # The numbers read again stay in their new form: it is the stored form of both rules.
    with op.batch_alter_table("workspaces") as batch:
        batch.drop_column("default_country")
