"""The opportunities table: the field table's columns (opportunities/fields.py), the hidden
ones, and the indexes. Changed only by the migrations (db/migrations)."""

from __future__ import annotations

from sqlalchemy import Boolean, Column, Index, text

from chatcrm.opportunities.fields import FIELDS
from chatcrm.records.kind import record_table

opportunities = record_table(
    "opportunities",
    FIELDS,
    # False while finalAmount follows amount; set once a client names finalAmount.
    Column("final_amount_set", Boolean, nullable=False),
    Index("uq_opportunities_code", "workspace_id", "code", unique=True),
    Index(
        "ix_opportunities_contact",
        "workspace_id",
        "contact_id",
        sqlite_where=text("contact_id IS NOT NULL"),
        postgresql_where=text("contact_id IS NOT NULL"),
    ),
    Index("ix_opportunities_status_list", "workspace_id", "win_loss_status", "created_at", "id"),
)
