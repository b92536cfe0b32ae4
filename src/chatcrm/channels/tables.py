"""The channels table (contract K.2), created by migration 0010, in the one `metadata` of
db/schema.py.

A reference table on Citus (db/citus.py), like `workspaces`: Meta's webhook names a
channel by its id alone, before any workspace is known, and a `phoneNumberId` is unique
across every workspace.
"""

from sqlalchemy import Boolean, Column, ForeignKeyConstraint, Index, String, Table, Text

from chatcrm.db.schema import ID, metadata
from chatcrm.db.types import UTCDateTime

channels = Table(
    "channels",
    metadata,
    Column("id", ID, primary_key=True),
    Column("workspace_id", ID, nullable=False),
    Column("type", String(16), nullable=False),  # "whatsapp"
    Column("name", String(200), nullable=False),
    Column("phone_number_id", String(64), nullable=False),
    Column("display_phone_number", String(64), nullable=True),
    Column("api_base_url", Text, nullable=False),
    Column("verify_token", String(200), nullable=False),
    # Write-only (never shown, never logged): the Graph API needs them as they are, so they
    # cannot be hashed; the answers, logs and audit entries never carry them.
    Column("access_token", Text, nullable=False),
    Column("app_secret", String(200), nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
    Index("ix_channels_phone_number_id", "phone_number_id", unique=True),
    Index("ix_channels_list", "workspace_id", "created_at", "id"),
)
