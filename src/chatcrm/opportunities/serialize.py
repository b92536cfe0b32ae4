"""Opportunity wire shape, keys in contract order (B.2)."""

from __future__ import annotations

from typing import Any

from chatcrm.core.jsontext import aggregated, raw
from chatcrm.core.money import money_json
from chatcrm.core.timefmt import iso
from chatcrm.db.database import Row


def opportunity(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "opportCode": row["code"],
        "opportStatus": row["opport_status"],
        "winLossStatus": row["win_loss_status"],
        "winLossDate": iso(row["win_loss_date"]),
        "finalAmount": money_json(row["final_amount"]),
        "creationDate": iso(row["created_at"]),
        "creationTypeId": row["creation_type_id"],
        "updatedDate": iso(row["updated_at"]),
        "deletionDate": iso(row["deleted_at"]),
        "userDeletion": row["deleted_by"],
        "statusId": row["status_id"],
        "files": raw(row["files"]),
        "orderInCards": row["order_in_cards"],
        "orderInCardsLastUpdated": iso(row["order_in_cards_updated_at"]),
        "activities": aggregated(row["activities_json"]),
        "segmentationId": row["segmentation_id"],
        "workspaceId": row["workspace_id"],
        "name": row["name"],
        "description": row["description"],
        "amount": money_json(row["amount"]),
        "userCreation": row["created_by"],
        "contactId": row["contact_id"] or "",
        "expirationDate": iso(row["expiration_date"]),
        "assignedAgentId": row["assigned_agent_id"],
        "stageId": row["stage_id"],
    }
