"""An opportunity's activity log: its field table (the body of a new activity, and the
activity's shape, also inside the opportunity's `activities`)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement

from chatcrm.core.values import TEXT_MAX
from chatcrm.db.schema import opportunity_activities
from chatcrm.records import types as t
from chatcrm.records.activities import aggregated_list
from chatcrm.records.fields import (
    CALLER,
    FULL,
    NOW,
    OPTIONAL,
    RECORD_ID,
    REQUIRED,
    Field,
    FieldTable,
)
from chatcrm.records.schemas import shape_schema

CATEGORIES = ("Calls", "Meeting", "Whatsapp", "Email")

FIELDS = FieldTable(
    "opportunityActivity",
    [
        Field(wire="id", type=t.Identifier(), column="id", default=RECORD_ID),
        Field(
            wire="categoryType",
            type=t.Word(CATEGORIES, f"must be one of {', '.join(CATEGORIES)}"),
            column="category",
            create=REQUIRED,
        ),
        Field(
            wire="content",
            type=t.Text(TEXT_MAX, nonblank=True),
            column="content",
            create=REQUIRED,
        ),
        Field(
            wire="date",
            type=t.Timestamp(),
            column="date",
            create=OPTIONAL,
            default=NOW,
            description="When it happened (ISO 8601); default now.",
        ),
        Field(wire="createdBy", type=t.Identifier(), column="created_by", default=CALLER),
    ],
)


class Activities(t.ValueType):
    """The opportunity's activities, as the activity field table shows each."""

    def output_schema(self) -> t.Schema:
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
