"""The people's tables (contract J): users, their invitation and reset links, console
sessions, failed sign-ins, the audit log. Created by migration 0009; in the one
`metadata` of db/schema.py.
"""

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

from chatcrm.db.schema import ID, metadata
from chatcrm.db.types import UTCDateTime

# None of these has a workspace_id: on Citus they stay tables of the coordinator, and they
# name accounts without a foreign key (a coordinator table may not reference a reference
# table under the layout's settings, db/citus.py).

users = Table(
    "users",
    metadata,
    Column("id", ID, primary_key=True),
    Column("account_id", ID, nullable=False),
    Column("email", String(254), nullable=False),  # as given
    Column("email_key", String(254), nullable=False),  # lower-cased: unique service-wide
    Column("name", String(200), nullable=False),
    Column("role", String(16), nullable=False),  # owner, admin, agent, viewer
    Column("status", String(16), nullable=False),  # invited, active, disabled
    Column("workspace_ids", Text, nullable=False),  # JSON array (agents and viewers)
    Column("password_hash", String(200), nullable=True),  # Argon2id; NULL until set
    # Two-factor: the TOTP secret (NULL: never set up), whether it is on, the last time
    # step accepted (a code is accepted once), the recovery codes' hashes (JSON array).
    Column("totp_secret", String(64), nullable=True),
    Column("two_factor_enabled", Boolean, nullable=False),
    Column("totp_last_step", BigInteger, nullable=True),
    Column("recovery_codes", Text, nullable=True),
    Column("created_at", UTCDateTime, nullable=False),
    Column("updated_at", UTCDateTime, nullable=False),
    Column("last_sign_in_at", UTCDateTime, nullable=True),
    Index(None, "email_key", unique=True),
    Index(None, "account_id"),
)

# Invitation and reset links: only the token's SHA-256 is kept; single-use.
user_tokens = Table(
    "user_tokens",
    metadata,
    Column("token_hash", String(64), primary_key=True),
    Column("user_id", ID, nullable=False),
    Column("purpose", String(16), nullable=False),  # invite, reset
    Column("created_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),
    Column("used_at", UTCDateTime, nullable=True),
    Index(None, "user_id"),
)

sessions = Table(
    "sessions",
    metadata,
    Column("id", ID, primary_key=True),
    Column("token_hash", String(64), nullable=False),  # SHA-256 of the cookie's token
    Column("user_id", ID, nullable=False),
    Column("account_id", ID, nullable=False),
    Column("created_at", UTCDateTime, nullable=False),
    Column("last_seen_at", UTCDateTime, nullable=False),
    Column("expires_at", UTCDateTime, nullable=False),  # the absolute lifetime
    Column("ended_at", UTCDateTime, nullable=True),
    Column("user_agent", String(500), nullable=False),
    Column("ip", String(64), nullable=False),
    Index(None, "token_hash", unique=True),
    Index(None, "user_id"),
)

# Failed sign-ins per e-mail and per client address (J.3's throttling).
sign_in_failures = Table(
    "sign_in_failures",
    metadata,
    Column("subject", String(300), primary_key=True),  # "email:<key>" or "ip:<address>"
    Column("failures", Integer, nullable=False),  # within the window
    Column("window_start", UTCDateTime, nullable=False),
    Column("lockouts", Integer, nullable=False),  # how many times throttled: the wait doubles
    Column("blocked_until", UTCDateTime, nullable=True),
)

audit_log = Table(
    "audit_log",
    metadata,
    Column("account_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("at", UTCDateTime, nullable=False),
    Column("actor", Text, nullable=True),  # JSON {type, id, name}; NULL for a failed sign-in
    Column("action", String(64), nullable=False),
    Column("target", String(300), nullable=True),
    Column("ip", String(64), nullable=False),
    Column("user_agent", String(500), nullable=False),
    PrimaryKeyConstraint("account_id", "id"),
)
