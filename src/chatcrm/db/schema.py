"""Tables. Tenant tables lead their primary key and every index with `workspace_id`.

The schema is created and changed only by the Alembic migrations in `migrations/`;
these definitions are what the repositories query with (SQLAlchemy Core). The record
tables (contacts, opportunities) are built from their field tables, in their packages.
"""

from sqlalchemy import (
    Column,
    Float,
    ForeignKeyConstraint,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

from chatcrm.db.types import UTCDateTime

ID = String(36)

metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_N_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

# --- accounts and keys -------------------------------------------------------------------

accounts = Table(
    "accounts",
    metadata,
    Column("id", ID, primary_key=True),
    Column("name", String(200), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
)

api_keys = Table(
    "api_keys",
    metadata,
    Column("id", ID, primary_key=True),
    Column("account_id", ID, nullable=False),
    # SHA-256 of the secret part; the key itself is shown once and never stored.
    Column("secret_hash", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("revoked_at", UTCDateTime, nullable=True),
    # Requests per second for this key; NULL: the service default; 0: unlimited (0003).
    Column("rate_limit", Float, nullable=True),
    ForeignKeyConstraint(["account_id"], ["accounts.id"]),
    Index(None, "account_id"),
)

# The stored first answer to a POST sent with an Idempotency-Key (migration 0003).
idempotency_keys = Table(
    "idempotency_keys",
    metadata,
    Column("account_id", ID, nullable=False),
    Column("method", String(8), nullable=False),
    Column("path", String(512), nullable=False),
    Column("key", String(255), nullable=False),
    # SHA-256 of the body as parsed JSON, so formatting and key order do not matter.
    Column("request_hash", String(64), nullable=False),
    Column("status_code", Integer, nullable=False),
    Column("response_body", Text, nullable=False),
    Column("response_headers", Text, nullable=False),  # JSON object
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("account_id", "method", "path", "key"),
    Index("ix_idempotency_keys_expires", "expires_at"),
)

# Process-independent secrets (continuation-token signing key, ...), created by migrations.
service_secrets = Table(
    "service_secrets",
    metadata,
    Column("name", String(64), primary_key=True),
    Column("value", String(128), nullable=False),
)

# --- workspaces and their set-up ------------------------------------------------------------

workspaces = Table(
    "workspaces",
    metadata,
    Column("id", ID, primary_key=True),
    Column("account_id", ID, nullable=False),
    Column("name", String(200), nullable=False),
    Column("timezone", String(64), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    ForeignKeyConstraint(["account_id"], ["accounts.id"]),
    Index(None, "account_id"),
)

agents = Table(
    "agents",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("name", String(200), nullable=False),
    Column("email", String(254), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
)

stages = Table(
    "stages",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("kind", String(16), nullable=False),  # "contact" | "opportunity"
    Column("name", String(200), nullable=False),
    Column("position", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
    Index(None, "workspace_id", "kind", "position"),
)

tags = Table(
    "tags",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("name", String(200), nullable=False),
    Column("color", String(200), nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
)

segmentations = Table(
    "segmentations",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("name", String(200), nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
)

# --- contacts ---------------------------------------------------------------------------------

# contacts: built from the contact field table (contacts/table.py).

contact_tags = Table(
    "contact_tags",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("contact_id", ID, nullable=False),
    Column("tag_id", ID, nullable=False),
    Column("position", Integer, nullable=False),
    Column("assigned_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("workspace_id", "contact_id", "tag_id"),
    ForeignKeyConstraint(["workspace_id", "contact_id"], ["contacts.workspace_id", "contacts.id"]),
    ForeignKeyConstraint(["workspace_id", "tag_id"], ["tags.workspace_id", "tags.id"]),
    Index("ix_contact_tags_tag", "workspace_id", "tag_id", "contact_id"),
)

contact_activities = Table(
    "contact_activities",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("contact_id", ID, nullable=False),
    Column("content", Text, nullable=False),
    Column("created_by", ID, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id", "contact_id"], ["contacts.workspace_id", "contacts.id"]),
    Index("ix_contact_activities_contact", "workspace_id", "contact_id", "created_at", "id"),
)

# --- opportunities ------------------------------------------------------------------------------

# opportunities: built from the opportunity field table (opportunities/table.py).

opportunity_activities = Table(
    "opportunity_activities",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("opportunity_id", ID, nullable=False),
    Column("category", String(16), nullable=False),
    Column("content", Text, nullable=False),
    Column("date", UTCDateTime, nullable=False),
    Column("created_by", ID, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(
        ["workspace_id", "opportunity_id"], ["opportunities.workspace_id", "opportunities.id"]
    ),
    Index("ix_opportunity_activities_date", "workspace_id", "opportunity_id", "date", "id"),
)

# One row per workspace and year; `last_value` is the last code number handed out.
opportunity_code_counters = Table(
    "opportunity_code_counters",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("year", Integer, nullable=False),
    Column("last_value", Integer, nullable=False),
    PrimaryKeyConstraint("workspace_id", "year"),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
)
