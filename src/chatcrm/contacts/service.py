"""Contact rules (contract B.1): create, read, update. Services never commit; the write
block of the database does, before the response leaves."""

from __future__ import annotations

from datetime import datetime
from typing import Any, NoReturn

from chatcrm.api.bodyrules import create_values, fields_to_update, require_valid
from chatcrm.contacts import fields
from chatcrm.contacts import repository as repo
from chatcrm.contacts.errors import ContactNotFound, DuplicateContact
from chatcrm.core import values as v
from chatcrm.core.errors import BadRequest, FieldError, ValidationFailed
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.jsontext import load_exact, to_text
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection, Row
from chatcrm.db.errors import UniqueViolation
from chatcrm.records.conditional import check_if_match, etag, explain_unmatched, simple_if_match
from chatcrm.records.references import References
from chatcrm.workspaces import repository as workspaces


async def get(conn: Connection, workspace_id: str, contact_id: str) -> Row:
    if not is_id(contact_id):
        raise ContactNotFound(contact_id)
    row = await repo.get(conn, workspace_id, contact_id)
    if row is None:
        raise ContactNotFound(contact_id)
    return row


# --- duplicates ------------------------------------------------------------------------------


async def _check_unique(
    conn: Connection,
    workspace_id: str,
    *,
    phone: str | None,
    phone_field: str,
    email: str | None,
    exclude: str | None,
) -> None:
    if phone:
        existing = await repo.find_live_by_phone(conn, workspace_id, phone, exclude=exclude)
        if existing is not None:
            raise DuplicateContact(phone_field, existing)
    if email:
        existing = await repo.find_live_by_email_key(
            conn, workspace_id, email.lower(), exclude=exclude
        )
        if existing is not None:
            raise DuplicateContact("email", existing)


async def _raise_duplicate_after_race(
    conn: Connection,
    exc: UniqueViolation,
    workspace_id: str,
    *,
    phone: str | None,
    phone_field: str,
    email: str | None,
    exclude: str | None,
) -> NoReturn:
    """A concurrent writer took the phone or email between our check and our write (or a
    single-statement update hit the unique index): answer 409 naming the owner."""
    await conn.recover()
    await _check_unique(
        conn, workspace_id, phone=phone, phone_field=phone_field, email=email, exclude=exclude
    )
    raise exc


# --- create ----------------------------------------------------------------------------------


async def create(conn: Connection, *, workspace_id: str, body: dict[str, Any]) -> Row:
    clean, errors = create_values(
        body, allowed=fields.CREATE_FIELDS, required=("name",), validators=fields.VALIDATORS
    )
    # The number may come as internalWhatsappNumber or under its alias phone.
    numbers = [clean[k] for k in ("internalWhatsappNumber", "phone") if clean.get(k)]
    if len(set(numbers)) > 1:
        errors.append(FieldError("phone", "differs from internalWhatsappNumber"))
    phone = numbers[0] if numbers else ""
    phone_field = (
        "phone"
        if "phone" in body and "internalWhatsappNumber" not in body
        else ("internalWhatsappNumber")
    )
    platform_id = clean.get("platformId", fields.PLATFORM_API)
    email = clean.get("email")
    contact_fields = {"platformId", "email", "phone", "internalWhatsappNumber"}
    if not any(e.field in contact_fields for e in errors):
        # The original service's rule: WhatsApp contacts need the number, others an email.
        if platform_id == fields.PLATFORM_WHATSAPP and not phone:
            errors.append(
                FieldError(phone_field, "is required for WhatsApp contacts (platformId 2)")
            )
        elif platform_id != fields.PLATFORM_WHATSAPP and not email:
            errors.append(
                FieldError("email", f"is required for contacts of platformId {platform_id}")
            )
    require_valid(errors)

    now = utcnow()
    contact_id = new_id()
    try:
        await conn.begin()
        refs = References(conn, workspace_id)
        stage_id = clean.get("stageId")
        if stage_id is not None:
            await refs.stage("stageId", stage_id, "contact")
        await refs.segmentation("segmentationId", clean.get("segmentationId"))
        await refs.agent("assignedAgentId", clean.get("assignedAgentId"))
        tag_ids: list[str] = clean.get("tags", [])
        await refs.tags("tags", tag_ids)
        refs.check()
        if stage_id is None:
            stage_id = await workspaces.first_stage(conn, workspace_id, "contact")
            if stage_id is None:
                raise ValidationFailed(
                    [FieldError("stageId", "the workspace has no contact stage; create one")]
                )
        await _check_unique(
            conn, workspace_id, phone=phone, phone_field=phone_field, email=email, exclude=None
        )
        await repo.insert_contact(
            conn,
            {
                "workspace_id": workspace_id,
                "id": contact_id,
                "version": 1,
                "created_at": now,
                "modified_at": now,
                "assigned_agent_id": clean.get("assignedAgentId"),
                "segmentation_id": clean.get("segmentationId"),
                "last_message": clean.get("lastMessage"),
                "last_message_date": now,
                "platform_sender_id": clean.get("platformSenderId"),
                "platform_sender_name": clean.get("platformSenderName", ""),
                "platform_sender_phone": clean.get("platformSenderPhone"),
                "is_read": clean.get("isRead", False),
                "is_bot_enabled": clean.get("isBotEnabled", True),
                "is_manually_added": True,
                "avatar_color": clean.get("avatarColor"),
                "order_in_cards": await repo.next_card_position(conn, workspace_id, stage_id),
                "order_in_cards_updated_at": now,
                "files": to_text(clean.get("files", [])),
                "variables": to_text(clean.get("variables", [])),
                "is_solved": False,
                "solved_by_agent_id": None,
                "solved_date": None,
                "internal_whatsapp_number": phone,
                "name": clean["name"],
                "lastname": clean.get("lastname", ""),
                "email": email,
                "email_key": email.lower() if email else None,
                "platform_id": platform_id,
                "stage_id": stage_id,
            },
        )
        if tag_ids:
            await repo.replace_tags(conn, workspace_id, contact_id, tag_ids, kept={}, now=now)
        row = await repo.get(conn, workspace_id, contact_id)
    except UniqueViolation as exc:
        await _raise_duplicate_after_race(
            conn, exc, workspace_id, phone=phone, phone_field=phone_field, email=email, exclude=None
        )
    assert row is not None
    return row


# --- update ----------------------------------------------------------------------------------


async def update(
    conn: Connection,
    *,
    workspace_id: str,
    contact_id: str,
    body: dict[str, Any],
    if_match: str | None = None,
) -> Row:
    names = fields_to_update(
        body, updatable=fields.UPDATABLE, read_only=fields.READ_ONLY, record_id=contact_id
    )
    if "solvedByAgentId" in names and "isSolved" not in names:
        raise BadRequest.field(
            "solvedByAgentId",
            "'solvedByAgentId' can only be set together with isSolved, "
            'e.g. "paramToUpdate": "isSolved,solvedByAgentId".',
        )
    clean, errors = fields.validate(names, body)
    if clean.get("solvedByAgentId") is not None and clean.get("isSolved") is False:
        errors.append(FieldError("solvedByAgentId", "must be null when isSolved is false"))
    if errors:
        raise ValidationFailed(errors)
    if not is_id(contact_id):
        raise ContactNotFound(contact_id)

    phone = clean.get("internalWhatsappNumber")
    email = clean.get("email")
    now = utcnow()
    try:
        row = await _update_directly(conn, workspace_id, contact_id, names, clean, now, if_match)
        if row is None:
            row = await _update_under_lock(conn, workspace_id, contact_id, clean, now, if_match)
    except UniqueViolation as exc:
        await _raise_duplicate_after_race(
            conn,
            exc,
            workspace_id,
            phone=phone,
            phone_field="internalWhatsappNumber",
            email=email,
            exclude=contact_id,
        )
    return row


async def _update_directly(
    conn: Connection,
    workspace_id: str,
    contact_id: str,
    names: list[str],
    clean: dict[str, Any],
    now: datetime,
    if_match: str | None,
) -> Row | None:
    """The fields of most bot updates (name, isRead, lastMessage…) need nothing from the
    stored record: one UPDATE … RETURNING, atomic on its own, one round trip. None when
    the update needs the stored record (then it is done under a row lock)."""
    simple_condition, version = simple_if_match(if_match)
    if not simple_condition or not set(names) <= fields.DIRECT:
        return None
    changes = _direct_changes(clean, now)
    row = await repo.update_returning(conn, workspace_id, contact_id, changes, version=version)
    if row is None:
        current = await repo.get(conn, workspace_id, contact_id)
        explain_unmatched(current, if_match, ContactNotFound(contact_id))
    return row


async def _update_under_lock(
    conn: Connection,
    workspace_id: str,
    contact_id: str,
    clean: dict[str, Any],
    now: datetime,
    if_match: str | None,
) -> Row:
    await conn.begin()
    current = await repo.lock(conn, workspace_id, contact_id)
    if current is None:
        raise ContactNotFound(contact_id)
    check_if_match(if_match, etag(current))
    await _check_references(conn, workspace_id, clean)
    await _check_unique(
        conn,
        workspace_id,
        phone=clean.get("internalWhatsappNumber"),
        phone_field="internalWhatsappNumber",
        email=clean.get("email"),
        exclude=contact_id,
    )
    changes = await _changes(conn, workspace_id, current, clean, now)
    await repo.update_contact(conn, workspace_id, contact_id, changes)
    if "tags" in clean:
        kept = await repo.tag_assignments(conn, workspace_id, contact_id)
        await repo.replace_tags(conn, workspace_id, contact_id, clean["tags"], kept=kept, now=now)
    row = await repo.get(conn, workspace_id, contact_id)
    assert row is not None
    return row


async def _check_references(conn: Connection, workspace_id: str, clean: dict[str, Any]) -> None:
    refs = References(conn, workspace_id)
    if "stageId" in clean:
        await refs.stage("stageId", clean["stageId"], "contact")
    if "segmentationId" in clean:
        await refs.segmentation("segmentationId", clean["segmentationId"])
    if "assignedAgentId" in clean:
        await refs.agent("assignedAgentId", clean["assignedAgentId"])
    if "solvedByAgentId" in clean:
        await refs.agent("solvedByAgentId", clean["solvedByAgentId"])
    if "tags" in clean:
        await refs.tags("tags", clean["tags"])
    refs.check()


def _direct_changes(clean: dict[str, Any], now: datetime) -> dict[str, Any]:
    """Column values of the fields in `fields.DIRECT`: they follow from the request alone."""
    changes: dict[str, Any] = {"modified_at": now}
    simple = {
        "name": "name",
        "lastname": "lastname",
        "isBotEnabled": "is_bot_enabled",
        "isRead": "is_read",
        "avatarColor": "avatar_color",
        "internalWhatsappNumber": "internal_whatsapp_number",
    }
    for field, column in simple.items():
        if field in clean:
            changes[column] = clean[field]
    if "email" in clean:
        changes["email"] = clean["email"]
        changes["email_key"] = clean["email"].lower() if clean["email"] else None
    if "files" in clean:
        changes["files"] = to_text(clean["files"])
    if "lastMessage" in clean:
        changes["last_message"] = clean["lastMessage"]
        changes["last_message_date"] = now
    if "orderInCards" in clean:
        changes["order_in_cards"] = clean["orderInCards"]
        changes["order_in_cards_updated_at"] = now
    return changes


async def _changes(
    conn: Connection,
    workspace_id: str,
    current: Row,
    clean: dict[str, Any],
    now: datetime,
) -> dict[str, Any]:
    """Column values for the named fields only, with the rules that follow from them."""
    changes = {"version": current["version"] + 1, **_direct_changes(clean, now)}
    for field, column in (
        ("segmentationId", "segmentation_id"),
        ("assignedAgentId", "assigned_agent_id"),
    ):
        if field in clean:
            changes[column] = clean[field]
    if "variables" in clean:
        # Variables merge by name: concurrent clients setting different variables all win.
        merged = {item["name"]: item["value"] for item in load_exact(current["variables"])}
        for item in clean["variables"]:
            merged[item["name"]] = item["value"]
        if len(merged) > v.VARIABLES_MAX:
            raise ValidationFailed(
                [FieldError("variables", f"a contact can hold at most {v.VARIABLES_MAX} variables")]
            )
        changes["variables"] = to_text([{"name": k, "value": val} for k, val in merged.items()])
    if "stageId" in clean and clean["stageId"] != current["stage_id"]:
        # A moved card goes to the end of its new column (unless a position is named with
        # it); other cards keep their numbers.
        changes["stage_id"] = clean["stageId"]
        if "orderInCards" not in clean:
            changes["order_in_cards"] = await repo.next_card_position(
                conn, workspace_id, clean["stageId"]
            )
            changes["order_in_cards_updated_at"] = now
    if "isSolved" in clean:
        if clean["isSolved"]:
            solver = clean.get("solvedByAgentId")
            if solver is None:
                solver = clean.get("assignedAgentId", current["assigned_agent_id"])
            changes.update(is_solved=True, solved_date=now, solved_by_agent_id=solver)
        else:
            changes.update(is_solved=False, solved_date=None, solved_by_agent_id=None)
    return changes
