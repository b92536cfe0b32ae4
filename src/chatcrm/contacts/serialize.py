"""Contact wire shapes, keys in contract order (B.1). One function per shape.

Rows come from `repository.read_columns`: timestamps are wire text already."""

from __future__ import annotations

from typing import Any

from chatcrm.core.jsontext import aggregated, raw
from chatcrm.db.database import Row


def contact_read(row: Row) -> dict[str, Any]:
    """Read shape: Get by id, lists, searches."""
    return {
        "id": row["id"],
        "creationDate": row["created_at"],
        "assignedAgentId": row["assigned_agent_id"],
        "assignedAgentName": row["agent_name"],
        "segmentationId": row["segmentation_id"],
        "lastMessage": row["last_message"],
        "lastMessageDate": row["last_message_date"],
        "platformSenderId": row["platform_sender_id"],
        "platformSenderName": row["platform_sender_name"],
        "platformSenderPhone": row["platform_sender_phone"],
        "isRead": row["is_read"],
        "isBotEnabled": row["is_bot_enabled"],
        "isManuallyAdded": row["is_manually_added"],
        "avatarColor": row["avatar_color"],
        "orderInCards": row["order_in_cards"],
        "orderInCardsLastUpdated": row["order_in_cards_updated_at"],
        "tags": aggregated(row["tags_json"]),
        "files": raw(row["files"]),
        "isSolved": row["is_solved"],
        "workspaceId": row["workspace_id"],
        "name": row["name"],
        "lastname": row["lastname"],
        "email": row["email"],
        "platformId": row["platform_id"],
        "stageId": row["stage_id"],
    }


def contact_full(row: Row) -> dict[str, Any]:
    """Update shape: Update Contact, Create Contact."""
    return {
        "id": row["id"],
        "creationDate": row["created_at"],
        "assignedAgentId": row["assigned_agent_id"],
        "assignedAgentName": row["agent_name"],
        "segmentationId": row["segmentation_id"],
        "lastMessage": row["last_message"],
        "lastMessageDate": row["last_message_date"],
        "platformSenderId": row["platform_sender_id"],
        "platformSenderName": row["platform_sender_name"],
        "platformSenderPhone": row["platform_sender_phone"],
        "isRead": row["is_read"],
        "isBotEnabled": row["is_bot_enabled"],
        "isManuallyAdded": row["is_manually_added"],
        "avatarColor": row["avatar_color"],
        "orderInCards": row["order_in_cards"],
        "orderInCardsLastUpdated": row["order_in_cards_updated_at"],
        "tags": aggregated(row["tags_json"]),
        "files": raw(row["files"]),
        "variables": raw(row["variables"]),
        "isSolved": row["is_solved"],
        "solvedByAgentId": row["solved_by_agent_id"],
        "solvedDate": row["solved_date"],
        "workspaceId": row["workspace_id"],
        "internalWhatsappNumber": row["internal_whatsapp_number"],
        "name": row["name"],
        "lastname": row["lastname"],
        "email": row["email"],
        "platformId": row["platform_id"],
        "stageId": row["stage_id"],
    }
