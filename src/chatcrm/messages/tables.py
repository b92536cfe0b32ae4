"""The messages table (contract K.1), created by migration 0010, in the one `metadata` of
db/schema.py; distributed by workspace on Citus, co-located with the contacts.

An outbound message is also its own send job: `queued` rows with `next_attempt_at` are
claimed by the channel sender (channels/sending.py), as webhook deliveries are. A claim
stamps `attempt_started_at`; an attempt that never recorded its outcome leaves it set, and
the next claim fails the message (UNKNOWN_OUTCOME) instead of sending it again.
"""

from sqlalchemy import (
    BigInteger,
    Column,
    ForeignKeyConstraint,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
    text,
)

from chatcrm.db.schema import ID, metadata
from chatcrm.db.types import UTCDateTime

messages = Table(
    "messages",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("id", ID, nullable=False),
    Column("contact_id", ID, nullable=False),
    Column("direction", String(8), nullable=False),  # in, out
    Column("channel", Integer, nullable=False),  # a platformId of B.1 (2: WhatsApp)
    Column("type", String(16), nullable=False),
    Column("text", Text, nullable=True),
    Column("media", Text, nullable=True),  # JSON object
    Column("location", Text, nullable=True),  # JSON object
    Column("status", String(16), nullable=False),
    Column("error", Text, nullable=True),  # JSON object {code, title}
    Column("external_id", String(200), nullable=True),
    Column("reply_to_id", ID, nullable=True),
    Column("sent_by", Text, nullable=True),  # JSON object: the actor (J.4)
    Column("created_at", UTCDateTime, nullable=False),
    Column("status_at", UTCDateTime, nullable=False),
    Column("version", BigInteger, nullable=False),
    # Sending (outbound through a channel): the channel, the template asked for (JSON), the
    # attempts made, when the next is due, and when the one under way started.
    Column("channel_id", ID, nullable=True),
    Column("template", Text, nullable=True),
    Column("attempts", Integer, nullable=False, server_default=text("0")),
    Column("next_attempt_at", UTCDateTime, nullable=True),
    Column("attempt_started_at", UTCDateTime, nullable=True),
    # An inbound message whose read receipt is to be sent (best effort, one attempt).
    Column("receipt_due_at", UTCDateTime, nullable=True),
    PrimaryKeyConstraint("workspace_id", "id"),
    ForeignKeyConstraint(["workspace_id", "contact_id"], ["contacts.workspace_id", "contacts.id"]),
    Index("ix_messages_conversation", "workspace_id", "contact_id", "created_at", "id"),
    # A channel's message id names one message of the workspace: duplicates of Meta's
    # at-least-once deliveries (also racing ones) stop here.
    Index(
        "ix_messages_external_id",
        "workspace_id",
        "external_id",
        unique=True,
        sqlite_where=text("external_id IS NOT NULL"),
        postgresql_where=text("external_id IS NOT NULL"),
    ),
    Index(
        "ix_messages_sends_due",
        "next_attempt_at",
        sqlite_where=text("status = 'queued'"),
        postgresql_where=text("status = 'queued'"),
    ),
    # A contact's messages go out in the order they were queued (channels/send_claims.py).
    Index(
        "ix_messages_queued_by_contact",
        "workspace_id",
        "contact_id",
        "created_at",
        "id",
        sqlite_where=text("status = 'queued'"),
        postgresql_where=text("status = 'queued'"),
    ),
    Index(
        "ix_messages_receipts_due",
        "receipt_due_at",
        sqlite_where=text("receipt_due_at IS NOT NULL"),
        postgresql_where=text("receipt_due_at IS NOT NULL"),
    ),
)

# A status Meta reported for a wamid no message holds yet while a send of the workspace was
# under way: Meta's webhook may come before its answer to the send is recorded (K.2; every
# 200 means stored). Kept until that answer gives a message the wamid (channels/
# send_claims.py), and for EARLY_STATUSES_KEPT at most; created by migration 0015.
early_statuses = Table(
    "early_statuses",
    metadata,
    Column("workspace_id", ID, nullable=False),
    Column("external_id", String(200), nullable=False),
    Column("status", String(16), nullable=False),
    Column("status_at", UTCDateTime, nullable=False),
    Column("error", Text, nullable=True),  # JSON object {code, title}, as messages.error
    Column("received_at", UTCDateTime, nullable=False),
    # JSON: the channel whose delivery brought it, named by the event it makes (J.4;
    # migration 0016). NULL, kept before it: the system.
    Column("actor", Text, nullable=True),
    PrimaryKeyConstraint("workspace_id", "external_id", "status"),
    Index("ix_early_statuses_received_at", "received_at"),
)
