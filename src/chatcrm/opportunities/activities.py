"""An opportunity's activity log: its field table (the body of a new activity, and the
activity's shape, also inside the opportunity's `activities`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam

from chatcrm.db.schema import opportunity_activities
from chatcrm.records.defaults import CALLER, NOW, RECORD_ID
from chatcrm.records.fields import OPTIONAL, REQUIRED, Field, FieldTable
from chatcrm.records.scalar_types import CONTENT, ID, TIMESTAMP, Word

CATEGORIES = ("Calls", "Meeting", "Whatsapp", "Email")
CATEGORY = Word(CATEGORIES, f"must be one of {', '.join(CATEGORIES)}")

# fmt: off
FIELDS = FieldTable("opportunityActivity", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("categoryType", CATEGORY, "category", REQUIRED),
    Field("content", CONTENT, "content", REQUIRED),
    Field("date", TIMESTAMP, "date", OPTIONAL, default=NOW,
          description="When it happened (ISO 8601); default now."),
    Field("createdBy", ID, "created_by", default=CALLER),
])
# fmt: on


def activity_list(table: Any, dialect: str) -> ColumnElement[Any]:
    """An opportunity's activities, oldest first, inside its own SELECT."""
    c = opportunity_activities.c
    return FIELDS.aggregated(
        opportunity_activities,
        dialect,
        parent=table,
        # The request's workspace, not the outer row's: docs/scaling.md 3.4 (one shard).
        where=and_(c.workspace_id == bindparam("_ws"), c.opportunity_id == table.c.id),
        order_by=[c.date, c.id],
    )
