"""A contact's activity log: its field table (the body of a new activity, and its shape)."""

from __future__ import annotations

from chatcrm.contacts.kind import CONTACT
from chatcrm.db.schema import contact_activities
from chatcrm.records.activities import ActivityKind
from chatcrm.records.defaults import CALLER, NOW, RECORD_ID
from chatcrm.records.fields import REQUIRED, Field, FieldTable
from chatcrm.records.scalar_types import CONTENT, ID, TIMESTAMP

# fmt: off
FIELDS = FieldTable("contactActivity", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("content", CONTENT, "content", REQUIRED),
    Field("date", TIMESTAMP, "created_at", default=NOW),
    Field("createdBy", ID, "created_by", default=CALLER),
])
# fmt: on

CONTACT_ACTIVITIES = ActivityKind(
    fields=FIELDS,
    table=contact_activities,
    owner=CONTACT,
    owner_column="contact_id",
    date_column="created_at",
)
