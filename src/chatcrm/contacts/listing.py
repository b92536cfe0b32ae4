"""Contact lists (filters of contract C) and the searches by email and by phone."""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, bindparam, exists, or_

from chatcrm.contacts.fields import FIELDS
from chatcrm.contacts.kind import CONTACT
from chatcrm.contacts.table import contacts
from chatcrm.core import values as v
from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.db.database import Connection
from chatcrm.db.schema import contact_tags
from chatcrm.records import phones, statements, visibility
from chatcrm.records.kind import RecordKind
from chatcrm.records.listing import ChangedSince, FieldEquals, Filter, TextSearch
from chatcrm.records.statements import View

c = contacts.c


class _Tagged(Filter):
    """`?tag=<tag id>`: contacts that carry the tag."""

    name = "tag"
    description = "Only contacts with this tag id."

    def condition(self, kind: RecordKind, variant: str, dialect: str) -> ColumnElement[bool]:
        return exists().where(
            contact_tags.c.workspace_id == bindparam("_ws"),
            contact_tags.c.contact_id == c.id,
            contact_tags.c.tag_id == bindparam("_tag"),
        )


# In this order: the digest a continuation token binds is taken over them in this order.
FILTERS: tuple[Filter, ...] = (
    TextSearch(
        "Substring of name, lastname, email, or phone digits.",
        ("name", "lastname", "email"),
        ("internal_whatsapp_number", "platform_sender_phone"),
        aliases=("search",),  # the newer form of the original API (contract E.1)
    ),
    FieldEquals(FIELDS, "stageId", "Only contacts in this stage."),
    FieldEquals(FIELDS, "assignedAgentId", "Only contacts assigned to this agent."),
    _Tagged(),
    FieldEquals(FIELDS, "isSolved", "true or false."),
    ChangedSince(),
)

SEARCH_LIMIT = 100
# No ORDER BY in the search: with one, SQLite walks the list index in date order instead of
# looking the value up. Matches are few; they are sorted in Python.
_SEARCH_SCAN_LIMIT = 1000


@cache
def _search_statement(dialect: str, by: str, restricted: bool = False) -> Select[Any]:
    workspace = c.workspace_id == bindparam("_ws")
    if by == "email":
        match = and_(workspace, c.email_key == bindparam("_value"))
    else:
        # The workspace inside each branch, so each can use its own (workspace, phone)
        # index: SQLite would otherwise scan the workspace's contacts.
        match = or_(
            and_(workspace, c.internal_whatsapp_number == bindparam("_value")),
            and_(workspace, c.platform_sender_phone == bindparam("_value")),
        )
    base = statements.shape_statement(CONTACT, CONTACT.read_shape, dialect)
    seen = [visibility.condition(CONTACT, dialect)] if restricted else []
    return base.where(match, c.deleted_at.is_(None), *seen).limit(_SEARCH_SCAN_LIMIT)


async def _search(conn: Connection, by: str, workspace_id: str, value: str) -> list[View]:
    restricted = visibility.current() is not None  # an assigned-only agent (J.2)
    rows = await conn.fetch(
        _search_statement(conn.dialect, by, restricted),
        {"_ws": workspace_id, "_value": value, **visibility.params(conn.dialect)},
    )
    # Newest first, as lists: creation time (wire text sorts as time), then id.
    rows.sort(key=lambda row: (row["creationDate"], row["id"]), reverse=True)
    return [View(version=row.pop("_version"), record=row) for row in rows[:SEARCH_LIMIT]]


async def search_by_email(conn: Connection, workspace_id: str, email: str) -> list[View]:
    try:
        address = v.email("email", email, nullable=False)
    except FieldError as exc:
        raise ValidationFailed([exc]) from exc
    assert address is not None
    return await _search(conn, "email", workspace_id, address.lower())


async def search_by_cellphone(conn: Connection, workspace_id: str, cellphone: str) -> list[View]:
    await phones.read_in_workspace(conn, workspace_id, [cellphone])
    try:
        digits = FIELDS["internalWhatsappNumber"].type.parse_query("cellphone", cellphone)
    except FieldError as exc:
        raise ValidationFailed([exc]) from exc
    return await _search(conn, "phone", workspace_id, digits)
