"""The contact field table (contract B.1): every field of a contact, described once, in the
update shape's key order. READ_HIDDEN: shown by creates and updates, not by gets, lists and
searches (the read shape)."""

from __future__ import annotations

from chatcrm.contacts.rules import MERGE_VARIABLES, SOLVED, TAGS, agent_name, tag_list
from chatcrm.records.array_types import FILES, TAG_IDS, VARIABLES
from chatcrm.records.defaults import NOW, RECORD_ID, WORKSPACE
from chatcrm.records.fields import NULL, OPTIONAL, READ_HIDDEN, REQUIRED, UPDATE, Field, FieldTable
from chatcrm.records.scalar_types import (
    AGENT,
    BOOLEAN,
    ID,
    LONG_TEXT,
    NAME,
    POSITION,
    SEGMENTATION,
    STAGE,
    TEXT,
    TIMESTAMP,
    Choice,
    Email,
    Phone,
)
from chatcrm.records.stages import END_OF_COLUMN, FIRST_STAGE, STAGE_MOVE

# The original service's channels.
PLATFORM = Choice(
    (1, 2, 3, 4, 5, 6, 7),
    "1 Webchat, 2 WhatsApp, 3 Messenger, 4 Instagram, 5 Telegram, 6 Portal, 7 API.",
)
PLATFORM_WHATSAPP = 2
PLATFORM_API = 7
# Lower-cased in a second column, so both databases compare it the same way.
CONTACT_EMAIL = Email(key_column="email_key")

# fmt: off
FIELDS = FieldTable("contact", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("creationDate", TIMESTAMP, "created_at", default=NOW),
    Field("assignedAgentId", AGENT, "assigned_agent_id", NULL, OPTIONAL, UPDATE,
          derives="assignedAgentName"),
    Field("assignedAgentName", TEXT, None, NULL, shown=agent_name),
    Field("segmentationId", SEGMENTATION, "segmentation_id", NULL, OPTIONAL, UPDATE),
    Field("lastMessage", LONG_TEXT, "last_message", NULL, OPTIONAL, UPDATE,
          stamps="lastMessageDate"),
    Field("lastMessageDate", TIMESTAMP, "last_message_date", default=NOW),
    Field("platformSenderId", TEXT, "platform_sender_id", NULL, OPTIONAL),
    Field("platformSenderName", TEXT, "platform_sender_name", OPTIONAL),
    Field("platformSenderPhone", Phone(empty_is_null=True), "platform_sender_phone", NULL,
          OPTIONAL),
    Field("isRead", BOOLEAN, "is_read", OPTIONAL, UPDATE, default=False),
    Field("isBotEnabled", BOOLEAN, "is_bot_enabled", OPTIONAL, UPDATE, default=True),
    Field("isManuallyAdded", BOOLEAN, "is_manually_added", default=True),
    Field("avatarColor", TEXT, "avatar_color", NULL, OPTIONAL, UPDATE),
    Field("orderInCards", POSITION, "order_in_cards", UPDATE, default=END_OF_COLUMN,
          stamps="orderInCardsLastUpdated"),
    Field("orderInCardsLastUpdated", TIMESTAMP, "order_in_cards_updated_at", default=NOW),
    Field("tags", TAG_IDS, None, OPTIONAL, UPDATE, shown=tag_list, after=TAGS),
    Field("files", FILES, "files", OPTIONAL, UPDATE),
    Field("variables", VARIABLES, "variables", OPTIONAL, UPDATE, READ_HIDDEN,
          effect=MERGE_VARIABLES, aliases="customFields"),
    Field("isSolved", BOOLEAN, "is_solved", UPDATE, default=False, effect=SOLVED),
    Field("solvedByAgentId", AGENT, "solved_by_agent_id", NULL, UPDATE, READ_HIDDEN,
          description="Only together with isSolved."),
    Field("solvedDate", TIMESTAMP, "solved_date", NULL, READ_HIDDEN),
    Field("workspaceId", ID, "workspace_id", default=WORKSPACE),
    Field("internalWhatsappNumber", Phone(), "internal_whatsapp_number", OPTIONAL, UPDATE,
          READ_HIDDEN, aliases="phone"),
    Field("name", NAME, "name", REQUIRED, UPDATE),
    Field("lastname", TEXT, "lastname", OPTIONAL, UPDATE),
    Field("email", CONTACT_EMAIL, "email", NULL, OPTIONAL, UPDATE),
    Field("platformId", PLATFORM, "platform_id", OPTIONAL, default=PLATFORM_API),
    Field("stageId", STAGE, "stage_id", OPTIONAL, UPDATE, default=FIRST_STAGE, effect=STAGE_MOVE),
])
# fmt: on
