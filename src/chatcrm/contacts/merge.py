"""Merging duplicate contacts into one (contract E.2), all or nothing, in one transaction.

The duplicates are soft-deleted first, so that the primary can take over their phone or
email under the unique indexes of live contacts; then the primary fills its empty fields
from them, unites their tags and variables, and takes over their activities, messages and
live opportunities. Every change of a record has its event, in the same transaction (the
activities and messages moved are named by `contact.merged`'s mergedIds).
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, select, update

from chatcrm.contacts.fields import FIELDS
from chatcrm.contacts.kind import CONTACT
from chatcrm.contacts.rules import replace_tags
from chatcrm.core import values as v
from chatcrm.core.errors import FieldError, ValidationFailed, raise_any, require_valid
from chatcrm.core.ids import is_id
from chatcrm.core.jsontext import load_exact, to_text
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import contact_activities, contact_tags
from chatcrm.events.outbox import write_event
from chatcrm.opportunities.kind import OPPORTUNITY
from chatcrm.records import bodies, statements, writing
from chatcrm.records.conditional import check_if_match
from chatcrm.records.fields import REQUIRED, Field, FieldTable
from chatcrm.records.statements import Stored, View
from chatcrm.records.types import Schema, ValueType

MAX_DUPLICATES = 10
# United rather than filled (variables), or only meaningful with isSolved (its solver).
_NOT_FILLED = frozenset({"variables", "solvedByAgentId"})


class ContactId(ValueType):
    """A contact id, as a string (whether it names a live contact is the 404's business)."""

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if not isinstance(value, str) or not value or len(value) > 64:
            raise FieldError(field, "must be a contact id (a string)")
        return value

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "string", "minLength": 1, "maxLength": 64}


class ContactIds(ValueType):
    """1 to 10 contact ids; an id repeated counts once."""

    description = f"1 to {MAX_DUPLICATES} contact ids, merged in this order."

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if not isinstance(value, list) or not value:
            raise FieldError(field, f"must be an array of 1 to {MAX_DUPLICATES} contact ids")
        errors = [
            FieldError(f"{field}[{i}]", "must be a contact id (a string)")
            for i, item in enumerate(value)
            if not isinstance(item, str) or not item or len(item) > 64
        ]
        raise_any(errors)  # every bad element, with the body's other errors
        ids = list(dict.fromkeys(value))
        if len(ids) > MAX_DUPLICATES:  # counted once repeats are one
            raise FieldError(field, f"must be an array of 1 to {MAX_DUPLICATES} contact ids")
        return ids

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {
            "type": "array",
            "items": {"type": "string", "minLength": 1, "maxLength": 64},
            "minItems": 1,
            "maxItems": MAX_DUPLICATES,
        }


BODY = FieldTable(
    "mergeContacts",
    [
        Field("primaryId", ContactId(), None, REQUIRED, shapes=frozenset(),
              description="The contact that stays."),
        Field("duplicateIds", ContactIds(), None, REQUIRED, shapes=frozenset()),
    ],
)  # fmt: skip


def read_body(body: dict[str, Any]) -> tuple[str, list[str]]:
    """(primary, duplicates) of a merge body: 400 for unknown keys, 422 for bad values."""
    given = bodies.create_body(BODY, body)
    clean = given.clean
    if "duplicateIds" in clean and clean.get("primaryId") in clean["duplicateIds"]:
        given.errors.append(FieldError("duplicateIds", "must not contain primaryId"))
    require_valid(given.errors)
    return clean["primaryId"], clean["duplicateIds"]


def _is_empty(f: Field, value: Any) -> bool:
    """null, "", or an empty list (files): what a duplicate may fill in."""
    if value is None or value == "":
        return True
    if f.type.empty == () and isinstance(value, str):
        return load_exact(value) == []
    return False


def _column_names(f: Field) -> list[str]:
    assert f.column is not None
    return [c.name for c in f.type.sql_columns(f.column, nullable=f.nullable)]


def _filled(primary: Stored, duplicates: list[Stored]) -> dict[str, Any]:
    """The columns of the primary's empty fields, each from the first duplicate (in the
    order given) where it is not empty; a field's stamps come with it (lastMessageDate)."""
    columns: dict[str, Any] = {}
    for f in FIELDS:
        if f.column is None or f.wire in _NOT_FILLED or (f.create is None and not f.update):
            continue
        if not _is_empty(f, primary[f.column]):
            continue
        source = next((d for d in duplicates if not _is_empty(f, d[f.column])), None)
        if source is None:
            continue
        names = _column_names(f)
        names += [c for s in f.stamps for c in _column_names(FIELDS[s])]
        columns.update({name: source[name] for name in names})
    return columns


def _united_variables(primary: Stored, duplicates: list[Stored]) -> str:
    """The primary's variables, then each duplicate's whose name it lacks (in order)."""
    merged: dict[str, Any] = {}
    for stored in (primary, *duplicates):
        for item in load_exact(stored["variables"]):
            merged.setdefault(item["name"], item["value"])
    if len(merged) > v.VARIABLES_MAX:
        raise ValidationFailed(
            [FieldError("duplicateIds", f"the merged contact would hold more than "
                        f"{v.VARIABLES_MAX} variables")]
        )  # fmt: skip
    return to_text([{"name": name, "value": value} for name, value in merged.items()])


_ct = contact_tags.c


@cache
def _tags_statement(dialect: str) -> Select[Any]:
    return select(_ct.contact_id, _ct.tag_id, _ct.position, _ct.assigned_at).where(
        _ct.workspace_id == bindparam("_ws"), in_id_list(_ct.contact_id, "_ids", dialect)
    )


async def _united_tags(
    conn: Connection, workspace_id: str, ids: list[str]
) -> tuple[list[str], dict[str, datetime]]:
    """The tags of the contacts `ids` (primary first): each tag once, in the order the
    contacts hold them, with its earliest assignment date."""
    rows = await conn.fetch(
        _tags_statement(conn.dialect), {"_ws": workspace_id, "_ids": id_list(ids, conn.dialect)}
    )
    rows.sort(key=lambda row: (ids.index(row["contact_id"]), row["position"]))
    order: list[str] = []
    earliest: dict[str, datetime] = {}
    for row in rows:
        tag_id, at = row["tag_id"], row["assigned_at"]
        if tag_id not in earliest:
            order.append(tag_id)
            earliest[tag_id] = at
        elif at < earliest[tag_id]:
            earliest[tag_id] = at
    if len(order) > v.TAGS_MAX:
        raise ValidationFailed(
            [FieldError("duplicateIds", f"the merged contact would hold more than "
                        f"{v.TAGS_MAX} tags")]
        )  # fmt: skip
    return order, earliest


_ca = contact_activities.c


@cache
def _move_activities_statement(dialect: str) -> Any:
    return (
        update(contact_activities)
        .where(_ca.workspace_id == bindparam("_ws"), in_id_list(_ca.contact_id, "_ids", dialect))
        .values(contact_id=bindparam("_primary"))
    )


@cache
def _move_messages_statement(dialect: str) -> Any:
    """The duplicates' conversations join the primary's (contract K.1), as activities do."""
    from chatcrm.messages.tables import messages  # messages sit above contacts

    m = messages.c
    return (
        update(messages)
        .where(m.workspace_id == bindparam("_ws"), in_id_list(m.contact_id, "_ids", dialect))
        .values(contact_id=bindparam("_primary"))
    )


_oc = OPPORTUNITY.table.c


@cache
def _opportunities_statement(dialect: str) -> Select[Any]:
    return (
        select(_oc.id)
        .where(
            _oc.workspace_id == bindparam("_ws"),
            in_id_list(_oc.contact_id, "_ids", dialect),
            _oc.deleted_at.is_(None),
        )
        .order_by(_oc.id)
    )


async def _move_opportunities(
    conn: Connection, workspace_id: str, primary_id: str, duplicates: list[str], now: datetime
) -> None:
    """The duplicates' live opportunities now name the primary: each an update of its
    own, with its `opportunity.updated` event (changed contactId and updatedDate)."""
    params = {"_ws": workspace_id, "_ids": id_list(duplicates, conn.dialect)}
    ids = [row["id"] for row in await conn.fetch(_opportunities_statement(conn.dialect), params)]
    columns = {"contact_id": primary_id, "modified_at": now, "updated_at": now}
    changed = OPPORTUNITY.fields.changed({"contactId": primary_id}, columns=columns)
    for opportunity_id in ids:  # in id order: the same lock order as every merge
        # Locked, and read again as it is now: one moved to another contact or deleted
        # since it was listed (a request that held it while this merge waited) is left as
        # that request made it, not moved back (a lost update) nor the merge's 404.
        stored = await statements.lock(conn, OPPORTUNITY, workspace_id, opportunity_id)
        if stored is None or stored["contact_id"] not in duplicates:
            continue
        await statements.update_record(conn, OPPORTUNITY, workspace_id, opportunity_id, columns)
        view = await writing.get(conn, OPPORTUNITY, workspace_id, opportunity_id, shape="full")
        await writing.record_event(
            conn, OPPORTUNITY, "updated", workspace_id, view, now=now, changed=changed
        )


async def _lock_all(conn: Connection, workspace_id: str, ids: list[str]) -> dict[str, Stored]:
    """Row-lock every contact of the merge in id order (two merges sharing contacts queue
    instead of deadlocking); the first id given that is not a live contact is the 404."""
    for record_id in ids:
        if not is_id(record_id):
            raise CONTACT.not_found(record_id)
    locked: dict[str, Stored] = {}
    for record_id in sorted(ids):
        stored = await statements.lock(conn, CONTACT, workspace_id, record_id)
        if stored is not None:
            locked[record_id] = stored
    for record_id in ids:
        if record_id not in locked:
            raise CONTACT.not_found(record_id)
    return locked


async def merge(
    conn: Connection,
    *,
    workspace_id: str,
    key_id: str,
    body: dict[str, Any],
    if_match: str | None,
) -> View:
    """Merge the duplicates into the primary (all or nothing); the primary after it."""
    primary_id, duplicate_ids = read_body(body)
    await conn.begin()
    locked = await _lock_all(conn, workspace_id, [primary_id, *duplicate_ids])
    primary = locked[primary_id]
    check_if_match(if_match, primary["version"])
    duplicates = [locked[i] for i in duplicate_ids]
    now = utcnow()
    columns = {
        **_filled(primary, duplicates),
        "variables": _united_variables(primary, duplicates),
        "modified_at": now,
    }
    tag_ids, earliest = await _united_tags(conn, workspace_id, [primary_id, *duplicate_ids])
    # Deleted first: their phone and email are free for the primary to take.
    await writing.delete(
        conn, CONTACT, workspace_id=workspace_id, record_ids=duplicate_ids, key_id=key_id, now=now
    )
    await statements.update_record(conn, CONTACT, workspace_id, primary_id, columns)
    await replace_tags(conn, workspace_id, primary_id, tag_ids, kept=earliest, now=now)
    moved = {
        "_ws": workspace_id,
        "_ids": id_list(duplicate_ids, conn.dialect),
        "_primary": primary_id,
    }
    await conn.execute(_move_activities_statement(conn.dialect), moved)
    await conn.execute(_move_messages_statement(conn.dialect), moved)
    view = await writing.get(conn, CONTACT, workspace_id, primary_id, shape=CONTACT.written_shape)
    await write_event(
        conn,
        workspace_id=workspace_id,
        type="contact.merged",
        record_id=primary_id,
        record_version=view.version,
        changed=[],
        data={**view.record, "mergedIds": duplicate_ids},
        now=now,
    )
    await _move_opportunities(conn, workspace_id, primary_id, duplicate_ids, now)
    return view
