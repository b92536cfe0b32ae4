"""Deleting contacts (soft, in batches) and their activity log."""

from __future__ import annotations

from typing import Any

from chatcrm.api.bodyrules import create_values, require_valid
from chatcrm.contacts import repository as repo
from chatcrm.contacts.errors import ContactNotFound
from chatcrm.core import values as v
from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.pagination import TokenCodec
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db.database import Connection, Row
from chatcrm.db.keyset import list_with_token
from chatcrm.db.schema import contact_activities

MAX_BATCH = 500


def _batch_ids(field: str, raw: object) -> list[str]:
    """The original's shape: `contactIds: [{"ids": "<id>"}, ...]` (a list under `ids` too)."""
    if not isinstance(raw, list):
        raise FieldError(field, 'must be an array of {"ids": "<contact id>"}')
    ids: dict[str, None] = {}  # ordered set
    errors: list[FieldError] = []
    for i, item in enumerate(raw):
        value = item.get("ids") if isinstance(item, dict) else None
        values = value if isinstance(value, list) else [value]
        if not values or not all(isinstance(x, str) and x for x in values):
            errors.append(FieldError(f"{field}[{i}].ids", "must be a contact id (a string)"))
            continue
        ids.update(dict.fromkeys(str(x) for x in values))
        if len(ids) > MAX_BATCH:
            raise FieldError(field, f"must name at most {MAX_BATCH} contacts per request")
    if errors:  # every bad element at once, not only the first
        raise ValidationFailed(errors)
    return list(ids)


async def delete_batch(
    conn: Connection, *, workspace_id: str, key_id: str, body: dict[str, Any]
) -> dict[str, list[str]]:
    clean, errors = create_values(
        body,
        allowed=frozenset({"contactIds"}),
        required=("contactIds",),
        validators={"contactIds": _batch_ids},
    )
    require_valid(errors)
    ids: list[str] = clean["contactIds"]
    await conn.begin()
    deleted = await repo.soft_delete(
        conn, workspace_id, [i for i in ids if is_id(i)], key_id=key_id, now=utcnow()
    )
    return {
        "deletedIds": [i for i in ids if i in deleted],
        "notFoundIds": [i for i in ids if i not in deleted],
    }


async def add_activity(
    conn: Connection, *, workspace_id: str, contact_id: str, key_id: str, body: dict[str, Any]
) -> None:
    clean, errors = create_values(
        body,
        allowed=frozenset({"content"}),
        required=("content",),
        validators={"content": lambda f, x: v.required_text(f, x, max_len=v.TEXT_MAX)},
    )
    require_valid(errors)
    content = clean["content"]
    if not is_id(contact_id):
        raise ContactNotFound(contact_id)
    now = utcnow()
    await conn.begin()
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


def activity(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "content": row["content"],
        "date": iso(row["created_at"]),
        "createdBy": row["created_by"],
    }


async def list_activities(
    conn: Connection,
    codec: TokenCodec,
    *,
    workspace_id: str,
    contact_id: str,
    token: str | None,
    size: int,
) -> tuple[list[Row], str | None]:
    """A contact's activities, oldest first (date order), in keyset pages."""
    if not is_id(contact_id):
        raise ContactNotFound(contact_id)
    if not await repo.is_live(conn, workspace_id, contact_id):
        raise ContactNotFound(contact_id)
    return await list_with_token(
        conn,
        codec,
        repo.activities_statement(),
        {"_ws": workspace_id, "_contact": contact_id},
        scope=f"contact-activities:{workspace_id}:{contact_id}",
        digest="",
        token=token,
        size=size,
        created=contact_activities.c.created_at,
        ident=contact_activities.c.id,
        newest_first=False,
    )
