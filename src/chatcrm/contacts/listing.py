"""Contact lists (newest first, keyset pages, filters of contract C) and searches."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, exists, or_
from sqlalchemy.engine import RowMapping

from chatcrm.api.errors import ValidationFailed
from chatcrm.contacts.repository import read_statement
from chatcrm.core import values as v
from chatcrm.core.pagination import TokenCodec, filters_digest
from chatcrm.core.values import FieldError
from chatcrm.db.engine import Database
from chatcrm.db.keyset import list_with_token
from chatcrm.db.schema import contact_tags, contacts
from chatcrm.db.textsearch import contains, contains_ci

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


@dataclass(frozen=True)
class ContactFilters:
    q: str | None = None
    stage_id: str | None = None
    assigned_agent_id: str | None = None
    tag: str | None = None
    is_solved: bool | None = None
    updated_since: datetime | None = None

    def digest(self) -> str:
        return filters_digest(asdict(self))

    def conditions(self, dialect: str) -> list[ColumnElement[bool]]:
        c = contacts.c
        out: list[ColumnElement[bool]] = []
        if self.q:
            matches = [contains_ci(col, self.q, dialect) for col in (c.name, c.lastname, c.email)]
            digits = "".join(ch for ch in self.q if ch in "0123456789")
            if len(digits) >= 3:
                matches += [
                    contains(c.internal_whatsapp_number, digits),
                    contains(c.platform_sender_phone, digits),
                ]
            out.append(or_(*matches))
        if self.stage_id:
            out.append(c.stage_id == self.stage_id)
        if self.assigned_agent_id:
            out.append(c.assigned_agent_id == self.assigned_agent_id)
        if self.tag:
            out.append(
                exists().where(
                    contact_tags.c.workspace_id == c.workspace_id,
                    contact_tags.c.contact_id == c.id,
                    contact_tags.c.tag_id == self.tag,
                )
            )
        if self.is_solved is not None:
            out.append(c.is_solved == self.is_solved)
        if self.updated_since is not None:
            out.append(c.modified_at >= self.updated_since)
        return out


def read_statement_for(db: Database) -> Any:
    return read_statement(db.dialect)


async def list_page(
    db: Database,
    codec: TokenCodec,
    *,
    workspace_id: str,
    filters: ContactFilters,
    token: str | None,
    size: int,
) -> tuple[list[RowMapping], str | None]:
    stmt = read_statement_for(db).where(
        contacts.c.workspace_id == workspace_id,
        contacts.c.deleted_at.is_(None),
        *filters.conditions(db.dialect),
    )
    return await list_with_token(
        db,
        codec,
        stmt,
        scope=f"contacts:{workspace_id}",
        digest=filters.digest(),
        token=token,
        size=size,
        created=contacts.c.created_at,
        ident=contacts.c.id,
    )


async def search_by_email(db: Database, workspace_id: str, email: str | None) -> list[RowMapping]:
    try:
        address = v.email("email", email, nullable=False)
    except FieldError as exc:
        raise ValidationFailed([exc]) from exc
    assert address is not None
    stmt = read_statement_for(db).where(
        contacts.c.workspace_id == workspace_id,
        contacts.c.email_key == address.lower(),
        contacts.c.deleted_at.is_(None),
    )
    return await _search(db, stmt)


async def search_by_cellphone(db: Database, workspace_id: str, cellphone: str) -> list[RowMapping]:
    try:
        # A '+' in a query string that was not percent-encoded arrives as a space.
        digits = v.phone("cellphone", cellphone.strip(), allow_empty=False)
    except FieldError as exc:
        raise ValidationFailed([exc]) from exc
    c = contacts.c
    stmt = read_statement_for(db).where(
        c.workspace_id == workspace_id,
        c.deleted_at.is_(None),
        or_(c.internal_whatsapp_number == digits, c.platform_sender_phone == digits),
    )
    return await _search(db, stmt)


async def _search(db: Database, stmt: Any) -> list[RowMapping]:
    stmt = stmt.order_by(contacts.c.created_at.desc(), contacts.c.id.desc()).limit(100)
    async with db.read() as conn:
        return list((await conn.execute(stmt)).mappings())
