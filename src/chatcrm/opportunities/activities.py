"""An opportunity's activity log: its field table (the body of a new activity, and the
activity's shape, also inside the opportunity's `activities`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement

from chatcrm.db.schema import opportunity_activities
from chatcrm.records.activities import aggregated_list
from chatcrm.records.defaults import CALLER, NOW, RECORD_ID
from chatcrm.records.fields import FULL, OPTIONAL, REQUIRED, Field, FieldTable
from chatcrm.records.scalar_types import CONTENT, ID, TIMESTAMP, Word
from chatcrm.records.schemas import shape_schema
from chatcrm.records.types import Schema, ValueType

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


class Activities(ValueType):
    """The opportunity's activities, as the activity field table shows each."""

    def output_schema(self) -> Schema:
        return {"type": "array", "items": shape_schema(FIELDS, FULL)}


def activity_list(table: Any, dialect: str) -> ColumnElement[Any]:
    """An opportunity's activities, oldest first, inside its own SELECT."""
    result: ColumnElement[Any] = aggregated_list(
        FIELDS,
        opportunity_activities,
        owner_column="opportunity_id",
        date_column="date",
        parent=table,
        dialect=dialect,
    )
    return result
