"""Opportunities as a record kind: the shared machinery (records/) over their field table,
linked to live contacts, with `updatedDate` moved by every change."""

from __future__ import annotations

from chatcrm.contacts.table import contacts
from chatcrm.db.schema import opportunity_activities
from chatcrm.opportunities import activities
from chatcrm.opportunities.errors import OpportunityNotFound
from chatcrm.opportunities.fields import FIELDS
from chatcrm.opportunities.rules import ACTIVE, DELETED, OPEN
from chatcrm.opportunities.table import opportunities
from chatcrm.records.activities import ActivityKind
from chatcrm.records.kind import RecordKind

OPPORTUNITY = RecordKind(
    name="opportunity",
    fields=FIELDS,
    table=opportunities,
    not_found=OpportunityNotFound,
    touch=("updated_at",),
    hidden_defaults=lambda given: {"final_amount_set": "finalAmount" in given.clean},
    deleted={"status_id": DELETED},
    restored={"status_id": ACTIVE},
    linked={"contact": contacts},
    # Stage counts and totals are the open pipeline (docs/api.md, the board and pipeline).
    counted=lambda table: table.c.win_loss_status == OPEN,
    # An opportunity has one shape: updates and creates answer with it too.
    written_shape="full",
    read_shape="full",
)

OPPORTUNITY_ACTIVITIES = ActivityKind(
    fields=activities.FIELDS,
    table=opportunity_activities,
    owner=OPPORTUNITY,
    owner_column="opportunity_id",
    date_column="date",
    changes_owner=True,
)
