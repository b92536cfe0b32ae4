"""Contact lists (newest first, keyset pages, filters of contract C) and searches.

Each combination of filters gets one statement, built on first use and then reused with
new bound values, so its compiled SQL comes from SQLAlchemy's cache.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, bindparam, exists, or_

from chatcrm.contacts.repository import read_statement
from chatcrm.core import values as v
from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.pagination import TokenCodec, filters_digest
from chatcrm.db.database import Connection, Row
from chatcrm.db.keyset import list_with_token
from chatcrm.db.schema import contact_tags, contacts
from chatcrm.db.textsearch import contains, contains_ci, like_pattern, pattern_for

LIST_PARAMS = (
    "workspaceId",
    "continuationToken",
    "pageSize",
    "q",
    "stageId",
    "assignedAgentId",
    "tag",
    "isSolved",
    "updatedSince",
)
SEARCH_LIMIT = 100

c = contacts.c


def _condition(name: str, dialect: str) -> ColumnElement[bool]:
    """The condition of one filter, reading its value from bound parameter `_<name>`."""
    if name in ("q", "q_with_digits"):
        matches = [contains_ci(col, "_q", dialect) for col in (c.name, c.lastname, c.email)]
        if name == "q_with_digits":
            matches += [
                contains(c.internal_whatsapp_number, "_q_digits"),
                contains(c.platform_sender_phone, "_q_digits"),
            ]
        return or_(*matches)
    if name == "tag":
        return exists().where(
            contact_tags.c.workspace_id == c.workspace_id,
            contact_tags.c.contact_id == c.id,
            contact_tags.c.tag_id == bindparam("_tag"),
        )
    if name == "updated_since":
        return c.modified_at >= bindparam("_updated_since")
    column = {"stage_id": c.stage_id, "assigned_agent_id": c.assigned_agent_id}.get(
        name, c.is_solved
    )
    return column == bindparam(f"_{name}")


@cache
def list_statement(dialect: str, active: tuple[str, ...]) -> Select[Any]:
    return read_statement(dialect).where(
        c.workspace_id == bindparam("_ws"),
        c.deleted_at.is_(None),
        *(_condition(name, dialect) for name in active),
    )


@dataclass(frozen=True)
class ContactFilters:
    q: str | None = None
    stage_id: str | None = None
    assigned_agent_id: str | None = None
    tag: str | None = None
    is_solved: bool | None = None
    updated_since: datetime | None = None

    def digest(self) -> str:
        return filters_digest(
            (
                self.q,
                self.stage_id,
                self.assigned_agent_id,
                self.tag,
                self.is_solved,
                self.updated_since,
            )
        )

    def bound(self, dialect: str) -> tuple[tuple[str, ...], dict[str, Any]]:
        """(the active filters, which make the statement's shape; their bound values)."""
        active: list[str] = []
        params: dict[str, Any] = {}
        if self.q:
            params["_q"] = pattern_for(self.q, dialect)
            digits = "".join(ch for ch in self.q if ch in "0123456789")
            if len(digits) >= 3:  # fewer digits would match almost every phone number
                active.append("q_with_digits")
                params["_q_digits"] = like_pattern(digits)
            else:
                active.append("q")
        for name in ("stage_id", "assigned_agent_id", "tag", "is_solved", "updated_since"):
            value = getattr(self, name)
            if value is not None:
                active.append(name)
                params[f"_{name}"] = value
        return tuple(active), params


async def list_page(
    conn: Connection,
    codec: TokenCodec,
    *,
    workspace_id: str,
    filters: ContactFilters,
    token: str | None,
    size: int,
) -> tuple[list[Row], str | None]:
    active, params = filters.bound(conn.dialect)
    return await list_with_token(
        conn,
        codec,
        list_statement(conn.dialect, active),
        {"_ws": workspace_id, **params},
        scope=f"contacts:{workspace_id}",
        digest=filters.digest(),
        token=token,
        size=size,
        created=c.created_at,
        ident=c.id,
    )


@cache
def _search_statement(dialect: str, by: str) -> Select[Any]:
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
    # No ORDER BY: with one, SQLite walks the list index in date order instead of looking
    # the value up. Matches are few; they are sorted below.
    return read_statement(dialect).where(match, c.deleted_at.is_(None)).limit(_SEARCH_SCAN_LIMIT)


_SEARCH_SCAN_LIMIT = 1000


async def _search(conn: Connection, by: str, workspace_id: str, value: str) -> list[Row]:
    rows = await conn.fetch(
        _search_statement(conn.dialect, by), {"_ws": workspace_id, "_value": value}
    )
    # Newest first, as lists: creation time (wire text sorts as time), then id.
    rows.sort(key=lambda row: (row["created_at"], row["id"]), reverse=True)
    return rows[:SEARCH_LIMIT]


async def search_by_email(conn: Connection, workspace_id: str, email: str | None) -> list[Row]:
    try:
        address = v.email("email", email, nullable=False)
    except FieldError as exc:
        raise ValidationFailed([exc]) from exc
    assert address is not None
    return await _search(conn, "email", workspace_id, address.lower())


async def search_by_cellphone(conn: Connection, workspace_id: str, cellphone: str) -> list[Row]:
    try:
        # A '+' in a query string that was not percent-encoded arrives as a space.
        digits = v.phone("cellphone", cellphone.strip(), allow_empty=False)
    except FieldError as exc:
        raise ValidationFailed([exc]) from exc
    return await _search(conn, "phone", workspace_id, digits)
