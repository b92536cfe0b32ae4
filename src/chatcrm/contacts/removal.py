"""Deleting contacts in batches (the original's body shape, exact: contract B.3)."""

from __future__ import annotations

from typing import Any

from chatcrm.contacts.kind import CONTACT
from chatcrm.core.errors import FieldError, raise_any, require_valid
from chatcrm.db.database import Connection
from chatcrm.records import bodies, writing
from chatcrm.records.fields import REQUIRED, Field, FieldTable
from chatcrm.records.types import Schema, ValueType

MAX_BATCH = 500


class BatchIds(ValueType):
    """`[{"ids": "<id>"}, ...]` (a list under `ids` too); every bad element named at once."""

    description = f'At most {MAX_BATCH} contacts, each as {{"ids": "<contact id>"}}.'

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if not isinstance(value, list):
            raise FieldError(field, 'must be an array of {"ids": "<contact id>"}')
        ids: dict[str, None] = {}  # ordered set
        errors: list[FieldError] = []
        for i, item in enumerate(value):
            inner = item.get("ids") if isinstance(item, dict) else None
            values = inner if isinstance(inner, list) else [inner]
            if not values or not all(isinstance(x, str) and x for x in values):
                errors.append(FieldError(f"{field}[{i}].ids", "must be a contact id (a string)"))
                continue
            ids.update(dict.fromkeys(str(x) for x in values))
            if len(ids) > MAX_BATCH:
                raise FieldError(field, f"must name at most {MAX_BATCH} contacts per request")
        # Every bad element at once, with the body's other errors (records/bodies.py).
        raise_any(errors)
        return list(ids)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        one = {"type": "string", "minLength": 1}
        return {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "ids": {"anyOf": [one, {"type": "array", "items": one, "minItems": 1}]}
                },
                "required": ["ids"],
            },
        }


BODY = FieldTable(
    "deleteContacts",
    [Field("contactIds", BatchIds(), None, REQUIRED, shapes=frozenset())],
)


async def delete_batch(
    conn: Connection, *, workspace_id: str, key_id: str, body: dict[str, Any]
) -> dict[str, list[str]]:
    given = bodies.create_body(BODY, body)
    require_valid(given.errors)
    ids: list[str] = given.clean["contactIds"]
    await conn.begin()
    deleted = await writing.delete(
        conn, CONTACT, workspace_id=workspace_id, record_ids=ids, key_id=key_id
    )
    return {
        "deletedIds": [i for i in ids if i in deleted],
        "notFoundIds": [i for i in ids if i not in deleted],
    }
