"""Tables. Tenant tables lead their primary key and every index with `workspace_id`.

The schema is created and changed only by the Alembic migrations in `migrations/`;
these definitions are what the repositories query with (SQLAlchemy Core).
"""

from sqlalchemy import (
    Boolean,
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
    text,
)

from chatcrm.db.types import Money, UTCDateTime

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

contacts = Table(
    "contacts",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("version", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    # Time of the last change of any kind; serves `updatedSince`.
    Column("modified_at", UTCDateTime, nullable=False),
    Column("assigned_agent_id", ID, nullable=True),
    Column("segmentation_id", ID, nullable=True),
    Column("last_message", Text, nullable=True),
    Column("last_message_date", UTCDateTime, nullable=False),
    Column("platform_sender_id", String(200), nullable=True),
    Column("platform_sender_name", String(200), nullable=False),
    Column("platform_sender_phone", String(15), nullable=True),
    Column("is_read", Boolean, nullable=False),
    Column("is_bot_enabled", Boolean, nullable=False),
    Column("is_manually_added", Boolean, nullable=False),
    Column("avatar_color", String(200), nullable=True),
    Column("order_in_cards", Integer, nullable=False),
    Column("order_in_cards_updated_at", UTCDateTime, nullable=False),
    Column("files", Text, nullable=False),  # JSON array of strings
    Column("variables", Text, nullable=False),  # JSON array of {name, value}
    Column("is_solved", Boolean, nullable=False),
    Column("solved_by_agent_id", ID, nullable=True),
    Column("solved_date", UTCDateTime, nullable=True),
    Column("internal_whatsapp_number", String(15), nullable=False),
    Column("name", String(200), nullable=False),
    Column("lastname", String(200), nullable=False),
    Column("email", String(254), nullable=True),
    # Lower-cased email, computed in Python so both databases compare it the same way.
    Column("email_key", String(254), nullable=True),
    Column("platform_id", Integer, nullable=False),
    Column("stage_id", ID, nullable=False),
    Column("deleted_at", UTCDateTime, nullable=True),
    Column("deleted_by", ID, nullable=True),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
    ForeignKeyConstraint(["workspace_id", "stage_id"], ["stages.workspace_id", "stages.id"]),
    ForeignKeyConstraint(
        ["workspace_id", "assigned_agent_id"], ["agents.workspace_id", "agents.id"]
    ),
    ForeignKeyConstraint(
        ["workspace_id", "solved_by_agent_id"], ["agents.workspace_id", "agents.id"]
    ),
    ForeignKeyConstraint(
        ["workspace_id", "segmentation_id"], ["segmentations.workspace_id", "segmentations.id"]
    ),
    # Newest first: the list order, and the keyset its continuation tokens walk.
    Index("ix_contacts_list", "workspace_id", "created_at", "id"),
    Index("ix_contacts_stage_order", "workspace_id", "stage_id", "order_in_cards"),
    # Partial (migration 0004): SQLite's statistics would count the NULLs as one value.
    Index(
        "ix_contacts_sender_phone",
        "workspace_id",
        "platform_sender_phone",
        sqlite_where=text("platform_sender_phone IS NOT NULL"),
        postgresql_where=text("platform_sender_phone IS NOT NULL"),
    ),
    # Indexes of the list filters (migration 0002); each ends in the list order.
    Index("ix_contacts_phone", "workspace_id", "internal_whatsapp_number"),
    Index("ix_contacts_stage_list", "workspace_id", "stage_id", "created_at", "id"),
    Index(
        "ix_contacts_agent_list",
        "workspace_id",
        "assigned_agent_id",
        "created_at",
        "id",
        sqlite_where=text("assigned_agent_id IS NOT NULL"),
        postgresql_where=text("assigned_agent_id IS NOT NULL"),
    ),
    Index("ix_contacts_solved_list", "workspace_id", "is_solved", "created_at", "id"),
    Index("ix_contacts_modified", "workspace_id", "modified_at"),
    # Unique among live contacts only: a soft-deleted contact frees its phone and email.
    Index(
        "uq_contacts_phone_live",
        "workspace_id",
        "internal_whatsapp_number",
        unique=True,
        sqlite_where=text("deleted_at IS NULL AND internal_whatsapp_number <> ''"),
        postgresql_where=text("deleted_at IS NULL AND internal_whatsapp_number <> ''"),
    ),
    Index(
        "uq_contacts_email_live",
        "workspace_id",
        "email_key",
        unique=True,
        sqlite_where=text("deleted_at IS NULL AND email_key IS NOT NULL"),
        postgresql_where=text("deleted_at IS NULL AND email_key IS NOT NULL"),
    ),
)

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

opportunities = Table(
    "opportunities",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("version", Integer, nullable=False),
    Column("code", String(32), nullable=False),
    Column("opport_status", Integer, nullable=False),
    Column("win_loss_status", Integer, nullable=False),
    Column("win_loss_date", UTCDateTime, nullable=True),
    Column("final_amount", Money, nullable=False),
    # False while finalAmount follows amount; set once a client names finalAmount.
    Column("final_amount_set", Boolean, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("creation_type_id", Integer, nullable=False),
    Column("updated_at", UTCDateTime, nullable=True),
    Column("modified_at", UTCDateTime, nullable=False),
    Column("deleted_at", UTCDateTime, nullable=True),
    Column("deleted_by", ID, nullable=True),
    Column("status_id", Integer, nullable=False),
    Column("files", Text, nullable=False),
    Column("order_in_cards", Integer, nullable=False),
    Column("order_in_cards_updated_at", UTCDateTime, nullable=False),
    Column("segmentation_id", ID, nullable=True),
    Column("name", String(200), nullable=False),
    Column("description", Text, nullable=False),
    Column("amount", Money, nullable=False),
    Column("created_by", ID, nullable=False),
    Column("contact_id", ID, nullable=True),
    Column("expiration_date", UTCDateTime, nullable=True),
    Column("assigned_agent_id", ID, nullable=True),
    Column("stage_id", ID, nullable=False),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
    ForeignKeyConstraint(["workspace_id", "stage_id"], ["stages.workspace_id", "stages.id"]),
    ForeignKeyConstraint(["workspace_id", "contact_id"], ["contacts.workspace_id", "contacts.id"]),
    ForeignKeyConstraint(
        ["workspace_id", "assigned_agent_id"], ["agents.workspace_id", "agents.id"]
    ),
    ForeignKeyConstraint(
        ["workspace_id", "segmentation_id"], ["segmentations.workspace_id", "segmentations.id"]
    ),
    Index("uq_opportunities_code", "workspace_id", "code", unique=True),
    Index("ix_opportunities_list", "workspace_id", "created_at", "id"),
    Index("ix_opportunities_stage_order", "workspace_id", "stage_id", "order_in_cards"),
    Index(
        "ix_opportunities_contact",
        "workspace_id",
        "contact_id",
        sqlite_where=text("contact_id IS NOT NULL"),
        postgresql_where=text("contact_id IS NOT NULL"),
    ),
    Index("ix_opportunities_stage_list", "workspace_id", "stage_id", "created_at", "id"),
    Index(
        "ix_opportunities_agent_list",
        "workspace_id",
        "assigned_agent_id",
        "created_at",
        "id",
        sqlite_where=text("assigned_agent_id IS NOT NULL"),
        postgresql_where=text("assigned_agent_id IS NOT NULL"),
    ),
    Index("ix_opportunities_status_list", "workspace_id", "win_loss_status", "created_at", "id"),
    Index("ix_opportunities_modified", "workspace_id", "modified_at"),
)

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
