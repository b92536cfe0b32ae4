"""Tables. Tenant tables lead their primary key and every index with `workspace_id`.

The schema is created and changed only by the Alembic migrations in `migrations/`;
these definitions are what the repositories query with (SQLAlchemy Core). The record
tables (contacts, opportunities) are built from their field tables, in their packages.
"""

from sqlalchemy import (
    BigInteger,
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
    # Scoped keys (J.5, migration 0009). NULL scopes: every permission (the first
    # edition's account keys); NULL workspace_ids: every workspace of the account.
    Column("name", String(200), nullable=False, server_default=""),
    Column("scopes", Text, nullable=True),  # JSON array
    Column("workspace_ids", Text, nullable=True),  # JSON array
    Column("expires_at", UTCDateTime, nullable=True),
    Column("last_used_at", UTCDateTime, nullable=True),
    Column("created_by", ID, nullable=True),  # the user or key that created it
    ForeignKeyConstraint(["account_id"], ["accounts.id"]),
    Index(None, "account_id"),
)

# One rate budget per API key, shared by every process and node (PostgreSQL; migrations
# 0006 and 0007): the tokens left at `at` (epoch seconds, the database's clock) and how
# many the last check took (0: refused). UNLOGGED there: rewritten on every check, never
# worth WAL.
rate_budgets = Table(
    "rate_budgets",
    metadata,
    Column("key_id", ID, primary_key=True),
    Column("tokens", Float, nullable=False),
    Column("at", Float, nullable=False),
    Column("taken", Integer, nullable=False),
)

# One row, its `version` counted up by every revocation or limit change of a key: SQLite
# processes read it at most every half second and drop their cached keys when it moved.
key_changes = Table(
    "key_changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("version", BigInteger, nullable=False),
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
    # J.2's assigned-only agents (migration 0009).
    Column("agents_see_only_assigned", Boolean, nullable=False, server_default=text("false")),
    # How bare-digit phones are read (contract N; migration 0012).
    Column("default_country", String(2), nullable=True),
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

# --- events and webhooks (contract D) ---------------------------------------------------------

# The outbox: one row per event, written once, in the transaction of the change it records.
# Its place in the feed is fixed at that INSERT: `txid`, then `seq` (events/feed.py says why
# readers never see an event appear behind one they have passed). `seq` is the order of
# insertion. `txid` is, on PostgreSQL, the writing transaction's id (raised to the record's
# last event's when that is higher), set by a trigger (migration 0008); on SQLite 0, its one
# writer making `seq` commit order; -1 for an event never in the feed (webhook.test,
# delivered to one endpoint only).
events = Table(
    "events",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", String(40), nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("type", String(40), nullable=False),
    Column("record_id", ID, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("body", Text, nullable=False),  # the event object, as JSON, as sent and shown
    Column("txid", BigInteger, nullable=False, server_default=text("0")),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
    Index("ix_events_feed", "workspace_id", "txid", "seq"),
    Index("ix_events_record", "workspace_id", "record_id", "txid", "seq"),
    Index("ix_events_created", "created_at"),
)

webhooks = Table(
    "webhooks",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("url", Text, nullable=False),
    Column("event_types", Text, nullable=False),  # JSON array, as given
    Column("description", Text, nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("disabled_reason", String(16), nullable=True),
    Column("secret", String(64), nullable=False),
    # The secret before the last rotation, still signed with until it expires.
    Column("previous_secret", String(64), nullable=True),
    Column("previous_secret_expires_at", UTCDateTime, nullable=True),
    Column("consecutive_failures", Integer, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    # The feed position (txid, seq) through which this endpoint's deliveries are queued
    # (events/publisher.py); moved to the feed's end when it is created or enabled.
    Column("feed_txid", BigInteger, nullable=False, server_default=text("0")),
    Column("feed_seq", BigInteger, nullable=False, server_default=text("0")),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
    Index("ix_webhooks_list", "workspace_id", "created_at", "id"),
)

# One row per event and endpoint: its state, and the lease of the attempt under way
# (`next_attempt_at` is moved past the attempt's deadline when a dispatcher claims it).
webhook_deliveries = Table(
    "webhook_deliveries",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("webhook_id", ID, nullable=False),
    Column("event_id", String(40), nullable=False),
    Column("event_type", String(40), nullable=False),
    Column("status", String(16), nullable=False),  # pending, succeeded, failed
    Column("attempts", Integer, nullable=False),
    Column("next_attempt_at", UTCDateTime, nullable=True),
    Column("last_attempt_at", UTCDateTime, nullable=True),
    Column("last_response_status", Integer, nullable=True),
    Column("last_error", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    PrimaryKeyConstraint("workspace_id", "webhook_id", "event_id"),
    ForeignKeyConstraint(["workspace_id", "webhook_id"], ["webhooks.workspace_id", "webhooks.id"]),
    ForeignKeyConstraint(["workspace_id", "event_id"], ["events.workspace_id", "events.id"]),
    Index("ix_webhook_deliveries_list", "workspace_id", "webhook_id", "created_at", "event_id"),
    Index(
        "ix_webhook_deliveries_due",
        "next_attempt_at",
        sqlite_where=text("status = 'pending'"),
        postgresql_where=text("status = 'pending'"),
    ),
)
