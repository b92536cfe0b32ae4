"""Opportunity rules (contract B.2): create with its code, read, update."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chatcrm.api.bodyrules import create_values, fields_to_update, require_valid
from chatcrm.core import values as v
from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.jsontext import to_text
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection, Row
from chatcrm.opportunities import fields
from chatcrm.opportunities import repository as repo
from chatcrm.opportunities.errors import OpportunityNotFound
from chatcrm.records.conditional import check_if_match, etag, explain_unmatched, simple_if_match
from chatcrm.records.references import References
from chatcrm.workspaces import repository as workspaces


async def get(conn: Connection, workspace_id: str, opportunity_id: str) -> Row:
    if not is_id(opportunity_id):
        raise OpportunityNotFound(opportunity_id)
    row = await repo.get(conn, workspace_id, opportunity_id)
    if row is None:
        raise OpportunityNotFound(opportunity_id)
    return row


async def _check_contact(refs: References, field: str, contact_id: str | None) -> None:
    if contact_id is None:
        return
    if not (
        is_id(contact_id)
        and await repo.live_contact_exists(refs.conn, refs.workspace_id, contact_id)
    ):
        refs.errors.append(FieldError(field, "is not a contact of this workspace"))


async def create(conn: Connection, *, workspace_id: str, key_id: str, body: dict[str, Any]) -> Row:
    clean, errors = create_values(
        body,
        allowed=fields.CREATE_FIELDS,
        required=("name", "amount"),
        validators=fields.VALIDATORS,
    )
    agent_field = "assignedComercialId" if "assignedComercialId" in clean else "assignedAgentId"
    if (
        "assignedComercialId" in clean
        and "assignedAgentId" in clean
        and clean["assignedComercialId"] != clean["assignedAgentId"]
    ):
        errors.append(FieldError("assignedAgentId", "differs from assignedComercialId"))
    require_valid(errors)
    agent_id = clean.get(agent_field)
    amount = clean["amount"]
    final_amount = clean.get("finalAmount")
    now = utcnow()
    opportunity_id = new_id()
    await conn.begin()
    refs = References(conn, workspace_id)
    stage_id = clean.get("stageId")
    if stage_id is not None:
        await refs.stage("stageId", stage_id, "opportunity")
    await refs.agent(agent_field, agent_id)
    await refs.segmentation("segmentationId", clean.get("segmentationId"))
    await _check_contact(refs, "contactId", clean.get("contactId"))
    refs.check()
    if stage_id is None:
        stage_id = await workspaces.first_stage(conn, workspace_id, "opportunity")
        if stage_id is None:
            raise ValidationFailed(
                [FieldError("stageId", "the workspace has no opportunity stage; create one")]
            )
    # Drawn last, after every check: the counter row stays locked for the shortest time.
    number = await repo.next_code_number(conn, workspace_id, now.year)
    await repo.insert_opportunity(
        conn,
        {
            "workspace_id": workspace_id,
            "id": opportunity_id,
            "version": 1,
            "code": f"OPP-{now.year}-{number:04d}",
            "opport_status": fields.STATUS_OPEN,
            "win_loss_status": fields.OPEN,
            "win_loss_date": None,
            "final_amount": final_amount if final_amount is not None else amount,
            "final_amount_set": final_amount is not None,
            "created_at": now,
            "creation_type_id": fields.CREATED_BY_API,
            "updated_at": None,
            "modified_at": now,
            "deleted_at": None,
            "deleted_by": None,
            "status_id": fields.ACTIVE,
            "files": to_text(clean.get("files", [])),
            "order_in_cards": await repo.next_card_position(conn, workspace_id, stage_id),
            "order_in_cards_updated_at": now,
            "segmentation_id": clean.get("segmentationId"),
            "name": clean["name"],
            "description": clean.get("description", ""),
            "amount": amount,
            "created_by": key_id,
            "contact_id": clean.get("contactId"),
            "expiration_date": clean.get("expirationDate"),
            "assigned_agent_id": agent_id,
            "stage_id": stage_id,
        },
    )
    row = await repo.get(conn, workspace_id, opportunity_id)
    assert row is not None
    return row


async def update(
    conn: Connection,
    *,
    workspace_id: str,
    opportunity_id: str,
    body: dict[str, Any],
    if_match: str | None = None,
) -> Row:
    names = fields_to_update(
        body, updatable=fields.UPDATABLE, read_only=fields.READ_ONLY, record_id=opportunity_id
    )
    clean, errors = fields.validate(names, body)
    if errors:
        raise ValidationFailed(errors)
    if not is_id(opportunity_id):
        raise OpportunityNotFound(opportunity_id)
    now = utcnow()
    row = await _update_directly(conn, workspace_id, opportunity_id, names, clean, now, if_match)
    if row is not None:
        return row
    await conn.begin()
    current = await repo.lock(conn, workspace_id, opportunity_id)
    if current is None:
        raise OpportunityNotFound(opportunity_id)
    check_if_match(if_match, etag(current))
    refs = References(conn, workspace_id)
    if "stageId" in clean:
        await refs.stage("stageId", clean["stageId"], "opportunity")
    if "assignedAgentId" in clean:
        await refs.agent("assignedAgentId", clean["assignedAgentId"])
    if "segmentationId" in clean:
        await refs.segmentation("segmentationId", clean["segmentationId"])
    if "contactId" in clean:
        await _check_contact(refs, "contactId", clean["contactId"])
    refs.check()
    changes = await _changes(conn, workspace_id, current, clean, now)
    await repo.update_opportunity(conn, workspace_id, opportunity_id, changes)
    row = await repo.get(conn, workspace_id, opportunity_id)
    assert row is not None
    return row


async def _update_directly(
    conn: Connection,
    workspace_id: str,
    opportunity_id: str,
    names: list[str],
    clean: dict[str, Any],
    now: datetime,
    if_match: str | None,
) -> Row | None:
    """Fields that follow from the request alone (amount, name, winLossStatus…): one
    UPDATE … RETURNING, atomic on its own. None when the stored record is needed."""
    simple_condition, version = simple_if_match(if_match)
    if not simple_condition or not set(names) <= fields.DIRECT:
        return None
    changes = _direct_changes(clean, now)
    # finalAmount follows amount until set: decided by the stored flag, in the statement.
    follow = "amount" in clean and "finalAmount" not in clean
    row = await repo.update_returning(
        conn, workspace_id, opportunity_id, changes, version=version, follow_amount=follow
    )
    if row is None:
        current = await repo.get(conn, workspace_id, opportunity_id)
        explain_unmatched(current, if_match, OpportunityNotFound(opportunity_id))
    return row


def _direct_changes(clean: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Column values of the fields in `fields.DIRECT` (the amount rule aside)."""
    changes: dict[str, Any] = {"updated_at": now, "modified_at": now}
    for field, column in (
        ("name", "name"),
        ("description", "description"),
        ("expirationDate", "expiration_date"),
        ("amount", "amount"),
    ):
        if field in clean:
            changes[column] = clean[field]
    if "finalAmount" in clean:
        changes["final_amount"] = clean["finalAmount"]
        changes["final_amount_set"] = True
    if "files" in clean:
        changes["files"] = to_text(clean["files"])
    if "orderInCards" in clean:
        changes["order_in_cards"] = clean["orderInCards"]
        changes["order_in_cards_updated_at"] = now
    if "winLossStatus" in clean:
        status = clean["winLossStatus"]
        changes["win_loss_status"] = status
        if status == fields.OPEN:
            changes.update(win_loss_date=None, opport_status=fields.STATUS_OPEN)
        else:
            changes.update(win_loss_date=now, opport_status=fields.STATUS_CLOSED)
    return changes


async def _changes(
    conn: Connection,
    workspace_id: str,
    current: Row,
    clean: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    changes = {"version": current["version"] + 1, **_direct_changes(clean, now)}
    for field, column in (
        ("assignedAgentId", "assigned_agent_id"),
        ("segmentationId", "segmentation_id"),
        ("contactId", "contact_id"),
    ):
        if field in clean:
            changes[column] = clean[field]
    if "amount" in clean and "finalAmount" not in clean and not current["final_amount_set"]:
        changes["final_amount"] = clean["amount"]  # finalAmount follows amount until set
    if "stageId" in clean and clean["stageId"] != current["stage_id"]:
        changes["stage_id"] = clean["stageId"]
        if "orderInCards" not in clean:
            changes["order_in_cards"] = await repo.next_card_position(
                conn, workspace_id, clean["stageId"]
            )
            changes["order_in_cards_updated_at"] = now
    return changes


async def delete(
    conn: Connection,
    *,
    workspace_id: str,
    opportunity_id: str,
    key_id: str,
    if_match: str | None = None,
) -> None:
    """Soft delete: the row stays (nothing is lost) but leaves every read and list."""
    if not is_id(opportunity_id):
        raise OpportunityNotFound(opportunity_id)
    now = utcnow()
    await conn.begin()
    current = await repo.lock(conn, workspace_id, opportunity_id)
    if current is None:
        raise OpportunityNotFound(opportunity_id)
    check_if_match(if_match, etag(current))
    await repo.update_opportunity(
        conn,
        workspace_id,
        opportunity_id,
        {
            "deleted_at": now,
            "deleted_by": key_id,
            "status_id": fields.DELETED,
            "version": current["version"] + 1,
            "modified_at": now,
        },
    )


def _category(field: str, value: object) -> str:
    if value not in fields.ACTIVITY_CATEGORIES:
        raise FieldError(field, f"must be one of {', '.join(fields.ACTIVITY_CATEGORIES)}")
    assert isinstance(value, str)
    return value


ACTIVITY_VALIDATORS = {
    "content": lambda f, x: v.required_text(f, x, max_len=v.TEXT_MAX),
    "categoryType": _category,
    "date": lambda f, x: v.timestamp(f, x),
}


async def add_activity(
    conn: Connection,
    *,
    workspace_id: str,
    opportunity_id: str,
    key_id: str,
    body: dict[str, Any],
) -> None:
    clean, errors = create_values(
        body,
        allowed=frozenset({"content", "date", "categoryType"}),
        required=("content", "categoryType"),
        validators=ACTIVITY_VALIDATORS,
    )
    require_valid(errors)
    now = utcnow()
    content = clean["content"]
    category = clean["categoryType"]
    date = clean.get("date") or now
    if not is_id(opportunity_id):
        raise OpportunityNotFound(opportunity_id)
    await conn.begin()
    current = await repo.lock(conn, workspace_id, opportunity_id)
    if current is None:
        raise OpportunityNotFound(opportunity_id)
    await repo.insert_activity(
        conn,
        {
            "workspace_id": workspace_id,
            "id": new_id(),
            "opportunity_id": opportunity_id,
            "category": category,
            "content": content,
            "date": date,
            "created_by": key_id,
            "created_at": now,
        },
    )
    # A new activity is a change of the opportunity: version and updatedDate move.
    await repo.mark_updated(conn, workspace_id, opportunity_id, now)
