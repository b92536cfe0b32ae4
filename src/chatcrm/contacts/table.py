"""The contacts table: the field table's columns (contacts/fields.py), the hidden ones, and
the indexes. Changed only by the migrations (db/migrations), which build exactly this."""

from __future__ import annotations

from sqlalchemy import Column, Index, text

from chatcrm.contacts.fields import FIELDS
from chatcrm.db.schema import ID
from chatcrm.db.types import UTCDateTime
from chatcrm.records.kind import record_table

contacts = record_table(
    "contacts",
    FIELDS,
    Column("deleted_at", UTCDateTime, nullable=True),
    Column("deleted_by", ID, nullable=True),
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
    Index("ix_contacts_solved_list", "workspace_id", "is_solved", "created_at", "id"),
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
