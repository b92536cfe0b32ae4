"""The opportunity field table (contract B.2): every field of an opportunity, described
once, in the record's key order."""

from __future__ import annotations

from chatcrm.core.values import TEXT_MAX
from chatcrm.opportunities.activities import Activities, activity_list
from chatcrm.opportunities.rules import (
    ACTIVE,
    CREATED_BY_API,
    CREATION_TYPES,
    FINAL_AMOUNT_SET,
    FOLLOW_AMOUNT,
    NEXT_CODE,
    OPEN,
    STATUS_OPEN,
    WIN_LOSS,
    WIN_LOSS_EFFECT,
)
from chatcrm.records import types as t
from chatcrm.records.fields import (
    CALLER,
    NOW,
    OPTIONAL,
    RECORD_ID,
    REQUIRED,
    WORKSPACE,
    Field,
    FieldTable,
    SameAs,
)
from chatcrm.records.stages import END_OF_COLUMN, FIRST_STAGE, STAGE_MOVE

FIELDS = FieldTable(
    "opportunity",
    [
        Field(wire="id", type=t.Identifier(), column="id", default=RECORD_ID),
        Field(
            wire="opportCode",
            type=t.Text(32),
            column="code",
            default=NEXT_CODE,
            description="OPP-<year>-<nnnn>, per workspace and year, without gaps.",
        ),
        Field(
            wire="opportStatus",
            type=t.Choice((1, 2), "1 open, 2 closed."),
            column="opport_status",
            default=STATUS_OPEN,
        ),
        Field(
            wire="winLossStatus",
            type=t.Choice(WIN_LOSS, "0 open, 1 won, 2 lost."),
            column="win_loss_status",
            update=True,
            default=OPEN,
            effect=WIN_LOSS_EFFECT,
        ),
        Field(wire="winLossDate", type=t.Timestamp(), column="win_loss_date", nullable=True),
        Field(
            wire="finalAmount",
            type=t.MoneyAmount(),
            column="final_amount",
            create=OPTIONAL,
            update=True,
            default=SameAs("amount"),
            effect=FINAL_AMOUNT_SET,
            description="Follows amount until it is set.",
        ),
        Field(wire="creationDate", type=t.Timestamp(), column="created_at", default=NOW),
        Field(
            wire="creationTypeId",
            type=t.Choice(CREATION_TYPES, "1 API, 2 import, 3 console."),
            column="creation_type_id",
            default=CREATED_BY_API,
        ),
        Field(wire="updatedDate", type=t.Timestamp(), column="updated_at", nullable=True),
        Field(wire="deletionDate", type=t.Timestamp(), column="deleted_at", nullable=True),
        Field(wire="userDeletion", type=t.Identifier(), column="deleted_by", nullable=True),
        Field(
            wire="statusId",
            type=t.Choice((1, 2), "1 active, 2 deleted."),
            column="status_id",
            default=ACTIVE,
        ),
        Field(
            wire="files", type=t.Files(), column="files", create=OPTIONAL, update=True, default=[]
        ),
        Field(
            wire="orderInCards",
            type=t.WholeNumber(),
            column="order_in_cards",
            update=True,
            default=END_OF_COLUMN,
            stamps=("orderInCardsLastUpdated",),
            description="Position in its stage column, from 0.",
        ),
        Field(
            wire="orderInCardsLastUpdated",
            type=t.Timestamp(),
            column="order_in_cards_updated_at",
            default=NOW,
        ),
        Field(wire="activities", type=Activities(), shown=activity_list),
        Field(
            wire="segmentationId",
            type=t.Reference("segmentation"),
            column="segmentation_id",
            nullable=True,
            create=OPTIONAL,
            update=True,
        ),
        Field(wire="workspaceId", type=t.Identifier(), column="workspace_id", default=WORKSPACE),
        Field(
            wire="name",
            type=t.Text(nonblank=True),
            column="name",
            create=REQUIRED,
            update=True,
        ),
        Field(
            wire="description",
            type=t.Text(TEXT_MAX),
            column="description",
            create=OPTIONAL,
            update=True,
            default="",
        ),
        Field(
            wire="amount",
            type=t.MoneyAmount(),
            column="amount",
            create=REQUIRED,
            update=True,
            effect=FOLLOW_AMOUNT,
        ),
        Field(wire="userCreation", type=t.Identifier(), column="created_by", default=CALLER),
        Field(
            wire="contactId",
            type=t.ContactLink(),
            column="contact_id",
            nullable=True,
            create=OPTIONAL,
            update=True,
            description='A live contact of the workspace; null or "" unlinks.',
        ),
        Field(
            wire="expirationDate",
            type=t.Timestamp(),
            column="expiration_date",
            nullable=True,
            create=OPTIONAL,
            update=True,
        ),
        Field(
            wire="assignedAgentId",
            type=t.Reference("agent"),
            column="assigned_agent_id",
            nullable=True,
            create=OPTIONAL,
            update=True,
            aliases=("assignedComercialId",),
        ),
        Field(
            wire="stageId",
            type=t.Reference("stage"),
            column="stage_id",
            create=OPTIONAL,
            update=True,
            default=FIRST_STAGE,
            effect=STAGE_MOVE,
        ),
    ],
)
