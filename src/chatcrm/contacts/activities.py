"""A contact's activity log: its field table (the body of a new activity, and its shape)."""

from __future__ import annotations

from chatcrm.contacts.kind import CONTACT
from chatcrm.core.values import TEXT_MAX
from chatcrm.db.schema import contact_activities
from chatcrm.records import types as t
from chatcrm.records.activities import ActivityKind
from chatcrm.records.fields import CALLER, NOW, RECORD_ID, REQUIRED, Field, FieldTable

FIELDS = FieldTable(
    "contactActivity",
    [
        Field(wire="id", type=t.Identifier(), column="id", default=RECORD_ID),
        Field(
            wire="content",
            type=t.Text(TEXT_MAX, nonblank=True),
            column="content",
            create=REQUIRED,
        ),
        Field(wire="date", type=t.Timestamp(), column="created_at", default=NOW),
        Field(wire="createdBy", type=t.Identifier(), column="created_by", default=CALLER),
    ],
)

CONTACT_ACTIVITIES = ActivityKind(
    fields=FIELDS,
    table=contact_activities,
    owner=CONTACT,
    owner_column="contact_id",
    date_column="created_at",
)
