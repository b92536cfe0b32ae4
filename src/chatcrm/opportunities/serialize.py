"""Opportunity wire shape, keys in contract order (B.2).

Rows come from `repository.read_columns`: timestamps and money are wire text already."""

from __future__ import annotations

from typing import Any

from chatcrm.core.jsontext import aggregated, number, raw
from chatcrm.db.database import Row


def opportunity(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "opportCode": row["code"],
        "opportStatus": row["opport_status"],
        "winLossStatus": row["win_loss_status"],
        "winLossDate": row["win_loss_date"],
        "finalAmount": number(row["final_amount"]),
        "creationDate": row["created_at"],
        "creationTypeId": row["creation_type_id"],
        "updatedDate": row["updated_at"],
        "deletionDate": row["deleted_at"],
        "userDeletion": row["deleted_by"],
        "statusId": row["status_id"],
        "files": raw(row["files"]),
        "orderInCards": row["order_in_cards"],
        "orderInCardsLastUpdated": row["order_in_cards_updated_at"],
        "activities": aggregated(row["activities_json"]),
        "segmentationId": row["segmentation_id"],
        "workspaceId": row["workspace_id"],
        "name": row["name"],
        "description": row["description"],
        "amount": number(row["amount"]),
        "userCreation": row["created_by"],
        "contactId": row["contact_id"] or "",
        "expirationDate": row["expiration_date"],
        "assignedAgentId": row["assigned_agent_id"],
        "stageId": row["stage_id"],
    }
