"""The opportunity field table (contract B.2): every field of an opportunity, described
once, in the record's key order."""

from __future__ import annotations

from chatcrm.opportunities.activities import FIELDS as ACTIVITY_FIELDS
from chatcrm.opportunities.activities import activity_list
from chatcrm.opportunities.rules import (
    ACTIVE,
    CREATED_BY_API,
    FINAL_AMOUNT_SET,
    FOLLOW_AMOUNT,
    NEXT_CODE,
    OPEN,
    STATUS_OPEN,
    WIN_LOSS_EFFECT,
)
from chatcrm.records.array_types import FILES, Rows
from chatcrm.records.defaults import CALLER, NOW, RECORD_ID, WORKSPACE, SameAs
from chatcrm.records.fields import NULL, OPTIONAL, REQUIRED, UPDATE, Field, FieldTable
from chatcrm.records.scalar_types import (
    AGENT,
    ID,
    LONG_TEXT,
    MONEY,
    NAME,
    POSITION,
    SEGMENTATION,
    STAGE,
    TIMESTAMP,
    Choice,
    ContactLink,
    Text,
)
from chatcrm.records.stages import END_OF_COLUMN, FIRST_STAGE, STAGE_MOVE

# Ours (contract B.2).
OPPORT_STATUS = Choice((1, 2), "1 open, 2 closed.")
WIN_LOSS = Choice((0, 1, 2), "0 open, 1 won, 2 lost.")
CREATION_TYPE = Choice((1, 2, 3), "1 API, 2 import, 3 console.")
STATUS = Choice((1, 2), "1 active, 2 deleted.")

# fmt: off
FIELDS = FieldTable("opportunity", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("opportCode", Text(32), "code", default=NEXT_CODE,
          description="OPP-<year>-<nnnn>, per workspace and year, without gaps."),
    Field("opportStatus", OPPORT_STATUS, "opport_status", default=STATUS_OPEN),
    Field("winLossStatus", WIN_LOSS, "win_loss_status", UPDATE, default=OPEN,
          effect=WIN_LOSS_EFFECT),
    Field("winLossDate", TIMESTAMP, "win_loss_date", NULL),
    Field("finalAmount", MONEY, "final_amount", OPTIONAL, UPDATE, default=SameAs("amount"),
          effect=FINAL_AMOUNT_SET, description="Follows amount until it is set."),
    Field("creationDate", TIMESTAMP, "created_at", default=NOW),
    Field("creationTypeId", CREATION_TYPE, "creation_type_id", OPTIONAL, default=CREATED_BY_API,
          description="How it was created; `chatcrm import` sends 2."),
    Field("updatedDate", TIMESTAMP, "updated_at", NULL),
    Field("deletionDate", TIMESTAMP, "deleted_at", NULL),
    Field("userDeletion", ID, "deleted_by", NULL),
    Field("statusId", STATUS, "status_id", default=ACTIVE),
    Field("files", FILES, "files", OPTIONAL, UPDATE),
    Field("orderInCards", POSITION, "order_in_cards", UPDATE, default=END_OF_COLUMN,
          stamps="orderInCardsLastUpdated"),
    Field("orderInCardsLastUpdated", TIMESTAMP, "order_in_cards_updated_at", default=NOW),
    Field("activities", Rows(ACTIVITY_FIELDS), None, shown=activity_list),
    Field("segmentationId", SEGMENTATION, "segmentation_id", NULL, OPTIONAL, UPDATE),
    Field("workspaceId", ID, "workspace_id", default=WORKSPACE),
    Field("name", NAME, "name", REQUIRED, UPDATE),
    Field("description", LONG_TEXT, "description", OPTIONAL, UPDATE),
    Field("amount", MONEY, "amount", REQUIRED, UPDATE, effect=FOLLOW_AMOUNT),
    Field("userCreation", ID, "created_by", default=CALLER),
    Field("contactId", ContactLink(), "contact_id", NULL, OPTIONAL, UPDATE,
          description='A live contact of the workspace; null or "" unlinks.'),
    Field("expirationDate", TIMESTAMP, "expiration_date", NULL, OPTIONAL, UPDATE),
    Field("assignedAgentId", AGENT, "assigned_agent_id", NULL, OPTIONAL, UPDATE,
          aliases="assignedComercialId"),
    Field("stageId", STAGE, "stage_id", OPTIONAL, UPDATE, default=FIRST_STAGE, effect=STAGE_MOVE),
])
# fmt: on
