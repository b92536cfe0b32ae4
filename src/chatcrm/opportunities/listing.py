"""Opportunity lists: newest first, keyset pages, filters of contract C."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, or_
from sqlalchemy.engine import RowMapping

from chatcrm.core.pagination import TokenCodec, filters_digest
from chatcrm.db.engine import Database
from chatcrm.db.keyset import list_with_token
from chatcrm.db.schema import opportunities
from chatcrm.db.textsearch import contains_ci
from chatcrm.opportunities.repository import read_statement

LIST_PARAMS = (
    "workspaceId",
    "continuationToken",
    "pageSize",
    "q",
    "stageId",
    "assignedAgentId",
    "contactId",
    "winLossStatus",
    "updatedSince",
)


@dataclass(frozen=True)
class OpportunityFilters:
    q: str | None = None
    stage_id: str | None = None
    assigned_agent_id: str | None = None
    contact_id: str | None = None
    win_loss_status: int | None = None
    updated_since: datetime | None = None

    def digest(self) -> str:
        return filters_digest(asdict(self))

    def conditions(self, dialect: str) -> list[ColumnElement[bool]]:
        c = opportunities.c
        out: list[ColumnElement[bool]] = []
        if self.q:
            out.append(
                or_(*(contains_ci(col, self.q, dialect) for col in (c.name, c.description, c.code)))
            )
        if self.stage_id:
            out.append(c.stage_id == self.stage_id)
        if self.assigned_agent_id:
            out.append(c.assigned_agent_id == self.assigned_agent_id)
        if self.contact_id:
            out.append(c.contact_id == self.contact_id)
        if self.win_loss_status is not None:
            out.append(c.win_loss_status == self.win_loss_status)
        if self.updated_since is not None:
            out.append(c.modified_at >= self.updated_since)
        return out


async def list_page(
    db: Database,
    codec: TokenCodec,
    *,
    workspace_id: str,
    filters: OpportunityFilters,
    token: str | None,
    size: int,
) -> tuple[list[RowMapping], str | None]:
    stmt = read_statement(db.dialect).where(
        opportunities.c.workspace_id == workspace_id,
        opportunities.c.deleted_at.is_(None),
        *filters.conditions(db.dialect),
    )
    return await list_with_token(
        db,
        codec,
        stmt,
        scope=f"opportunities:{workspace_id}",
        digest=filters.digest(),
        token=token,
        size=size,
        created=opportunities.c.created_at,
        ident=opportunities.c.id,
    )
