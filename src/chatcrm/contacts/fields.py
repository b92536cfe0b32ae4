"""The contact field table (contract B.1): every field of a contact, described once.

In the update shape's key order. `shapes=FULL_ONLY`: shown by creates and updates only,
not by gets, lists and searches (the read shape).
"""

from __future__ import annotations

from chatcrm.contacts.rules import MERGE_VARIABLES, SOLVED, TAGS, agent_name, tag_list
from chatcrm.core.values import TEXT_MAX
from chatcrm.records import types as t
from chatcrm.records.fields import (
    FULL,
    NOW,
    OPTIONAL,
    RECORD_ID,
    REQUIRED,
    WORKSPACE,
    Field,
    FieldTable,
)
from chatcrm.records.stages import END_OF_COLUMN, FIRST_STAGE, STAGE_MOVE

# The original service's channels: Webchat, WhatsApp, Messenger, Instagram, Telegram,
# Portal, API.
PLATFORMS = (1, 2, 3, 4, 5, 6, 7)
PLATFORM_WHATSAPP = 2
PLATFORM_API = 7
FULL_ONLY = frozenset({FULL})

FIELDS = FieldTable(
    "contact",
    [
        Field(wire="id", type=t.Identifier(), column="id", default=RECORD_ID),
        Field(wire="creationDate", type=t.Timestamp(), column="created_at", default=NOW),
        Field(
            wire="assignedAgentId",
            type=t.Reference("agent"),
            column="assigned_agent_id",
            nullable=True,
            create=OPTIONAL,
            update=True,
            filter=True,
            description="An agent of the workspace; null unassigns.",
        ),
        Field(wire="assignedAgentName", type=t.Text(), nullable=True, shown=agent_name),
        Field(
            wire="segmentationId",
            type=t.Reference("segmentation"),
            column="segmentation_id",
            nullable=True,
            create=OPTIONAL,
            update=True,
        ),
        Field(
            wire="lastMessage",
            type=t.Text(TEXT_MAX),
            column="last_message",
            nullable=True,
            create=OPTIONAL,
            update=True,
            stamps=("lastMessageDate",),
        ),
        Field(wire="lastMessageDate", type=t.Timestamp(), column="last_message_date", default=NOW),
        Field(
            wire="platformSenderId",
            type=t.Text(),
            column="platform_sender_id",
            nullable=True,
            create=OPTIONAL,
        ),
        Field(
            wire="platformSenderName",
            type=t.Text(),
            column="platform_sender_name",
            create=OPTIONAL,
            default="",
        ),
        Field(
            wire="platformSenderPhone",
            type=t.Phone(empty_is_null=True),
            column="platform_sender_phone",
            nullable=True,
            create=OPTIONAL,
        ),
        Field(
            wire="isRead",
            type=t.Boolean(),
            column="is_read",
            create=OPTIONAL,
            update=True,
            default=False,
        ),
        Field(
            wire="isBotEnabled",
            type=t.Boolean(),
            column="is_bot_enabled",
            create=OPTIONAL,
            update=True,
            default=True,
        ),
        Field(wire="isManuallyAdded", type=t.Boolean(), column="is_manually_added", default=True),
        Field(
            wire="avatarColor",
            type=t.Text(),
            column="avatar_color",
            nullable=True,
            create=OPTIONAL,
            update=True,
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
        Field(
            wire="tags",
            type=t.TagIds(),
            create=OPTIONAL,
            update=True,
            default=[],
            shown=tag_list,
            after=TAGS,
        ),
        Field(
            wire="files", type=t.Files(), column="files", create=OPTIONAL, update=True, default=[]
        ),
        Field(
            wire="variables",
            type=t.Variables(),
            column="variables",
            create=OPTIONAL,
            update=True,
            default=[],
            shapes=FULL_ONLY,
            effect=MERGE_VARIABLES,
        ),
        Field(
            wire="isSolved",
            type=t.Boolean(),
            column="is_solved",
            update=True,
            default=False,
            effect=SOLVED,
            filter=True,
        ),
        Field(
            wire="solvedByAgentId",
            type=t.Reference("agent"),
            column="solved_by_agent_id",
            nullable=True,
            update=True,
            shapes=FULL_ONLY,
            description="Only together with isSolved.",
        ),
        Field(
            wire="solvedDate",
            type=t.Timestamp(),
            column="solved_date",
            nullable=True,
            shapes=FULL_ONLY,
        ),
        Field(wire="workspaceId", type=t.Identifier(), column="workspace_id", default=WORKSPACE),
        Field(
            wire="internalWhatsappNumber",
            type=t.Phone(),
            column="internal_whatsapp_number",
            create=OPTIONAL,
            update=True,
            aliases=("phone",),
            default="",
            shapes=FULL_ONLY,
        ),
        Field(
            wire="name",
            type=t.Text(nonblank=True),
            column="name",
            create=REQUIRED,
            update=True,
        ),
        Field(
            wire="lastname",
            type=t.Text(),
            column="lastname",
            create=OPTIONAL,
            update=True,
            default="",
        ),
        Field(
            wire="email",
            type=t.Email(key_column="email_key"),
            column="email",
            nullable=True,
            create=OPTIONAL,
            update=True,
        ),
        Field(
            wire="platformId",
            type=t.Choice(
                PLATFORMS,
                "1 Webchat, 2 WhatsApp, 3 Messenger, 4 Instagram, 5 Telegram, 6 Portal, 7 API.",
            ),
            column="platform_id",
            create=OPTIONAL,
            default=PLATFORM_API,
        ),
        Field(
            wire="stageId",
            type=t.Reference("stage"),
            column="stage_id",
            create=OPTIONAL,
            update=True,
            default=FIRST_STAGE,
            effect=STAGE_MOVE,
            filter=True,
        ),
    ],
)
