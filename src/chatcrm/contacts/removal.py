"""Deleting contacts (soft, in batches) and their activity log."""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import RowMapping

from chatcrm.api.bodyrules import check_create_body
from chatcrm.api.errors import ContactNotFound, ValidationFailed
from chatcrm.contacts import repository as repo
from chatcrm.core import values as v
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.pagination import TokenCodec
from chatcrm.core.timefmt import iso, utcnow
from chatcrm.core.values import FieldError
from chatcrm.db.engine import Database
from chatcrm.db.keyset import list_with_token
from chatcrm.db.schema import contact_activities

MAX_BATCH = 500


def _batch_ids(body: dict[str, Any]) -> list[str]:
    """The original's shape: `contactIds: [{"ids": "<id>"}, ...]` (a list under `ids` too)."""
    raw = body["contactIds"]
    if not isinstance(raw, list):
        raise ValidationFailed(
            [FieldError("contactIds", 'must be an array of {"ids": "<contact id>"}')]
        )
    ids: list[str] = []
    errors: list[FieldError] = []
    for i, item in enumerate(raw):
        value = item.get("ids") if isinstance(item, dict) else None
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(x, str) and x for x in values):
            errors.append(FieldError(f"contactIds[{i}].ids", "must be a contact id (a string)"))
            continue
        for contact_id in values:
            if contact_id not in ids:
                ids.append(contact_id)
    if errors:
        raise ValidationFailed(errors)
    if len(ids) > MAX_BATCH:
        raise ValidationFailed(
            [FieldError("contactIds", f"must name at most {MAX_BATCH} contacts per request")]
        )
    return ids


async def delete_batch(
    db: Database, *, workspace_id: str, key_id: str, body: dict[str, Any]
) -> dict[str, list[str]]:
    check_create_body(body, allowed=frozenset({"contactIds"}), required=("contactIds",))
    ids = _batch_ids(body)
    async with db.write() as conn:
        deleted = await repo.soft_delete(
            conn, workspace_id, [i for i in ids if is_id(i)], key_id=key_id, now=utcnow()
        )
    return {
        "deletedIds": [i for i in ids if i in deleted],
        "notFoundIds": [i for i in ids if i not in deleted],
    }


async def add_activity(
    db: Database, *, workspace_id: str, contact_id: str, key_id: str, body: dict[str, Any]
) -> None:
    check_create_body(body, allowed=frozenset({"content"}), required=("content",))
    try:
        content = v.required_text("content", body["content"], max_len=v.TEXT_MAX)
    except FieldError as exc:
        raise ValidationFailed([exc]) from exc
    if not is_id(contact_id):
        raise ContactNotFound(contact_id)
    now = utcnow()
    async with db.write() as conn:
        if not await repo.is_live(conn, workspace_id, contact_id):
            raise ContactNotFound(contact_id)
        await repo.insert_activity(
            conn,
            {
                "workspace_id": workspace_id,
                "id": new_id(),
                "contact_id": contact_id,
                "content": content,
                "created_by": key_id,
                "created_at": now,
            },
        )


def activity(row: RowMapping) -> dict[str, Any]:
    return {
        "id": row["id"],
        "content": row["content"],
        "date": iso(row["created_at"]),
        "createdBy": row["created_by"],
    }


async def list_activities(
    db: Database,
    codec: TokenCodec,
    *,
    workspace_id: str,
    contact_id: str,
    token: str | None,
    size: int,
) -> tuple[list[RowMapping], str | None]:
    """A contact's activities, oldest first (date order), in keyset pages."""
    if not is_id(contact_id):
        raise ContactNotFound(contact_id)
    async with db.read() as conn:
        if not await repo.is_live(conn, workspace_id, contact_id):
            raise ContactNotFound(contact_id)
    return await list_with_token(
        db,
        codec,
        repo.activities_statement(workspace_id, contact_id),
        scope=f"contact-activities:{workspace_id}:{contact_id}",
        digest="",
        token=token,
        size=size,
        created=contact_activities.c.created_at,
        ident=contact_activities.c.id,
        newest_first=False,
    )
