"""Opportunity lists: newest first, keyset pages, filters of contract C (one reusable
statement per combination of filters, as for contacts)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, or_

from chatcrm.core.pagination import TokenCodec, filters_digest
from chatcrm.db.database import Connection, Row
from chatcrm.db.keyset import list_with_token
from chatcrm.db.schema import opportunities
from chatcrm.db.textsearch import contains_ci, pattern_for
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

o = opportunities.c


def _condition(name: str, dialect: str) -> ColumnElement[bool]:
    if name == "q":
        return or_(*(contains_ci(col, "_q", dialect) for col in (o.name, o.description, o.code)))
    if name == "updated_since":
        return o.modified_at >= bindparam("_updated_since")
    column = {
        "stage_id": o.stage_id,
        "assigned_agent_id": o.assigned_agent_id,
        "contact_id": o.contact_id,
    }.get(name, o.win_loss_status)
    return column == bindparam(f"_{name}")


@cache
def list_statement(dialect: str, active: tuple[str, ...]) -> Select[Any]:
    return read_statement(dialect).where(
        o.workspace_id == bindparam("_ws"),
        o.deleted_at.is_(None),
        *(_condition(name, dialect) for name in active),
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
        return filters_digest(
            (
                self.q,
                self.stage_id,
                self.assigned_agent_id,
                self.contact_id,
                self.win_loss_status,
                self.updated_since,
            )
        )

    def bound(self, dialect: str) -> tuple[tuple[str, ...], dict[str, Any]]:
        """(the active filters, which make the statement's shape; their bound values)."""
        active: list[str] = []
        params: dict[str, Any] = {}
        if self.q:
            active.append("q")
            params["_q"] = pattern_for(self.q, dialect)
        for name in (
            "stage_id",
            "assigned_agent_id",
            "contact_id",
            "win_loss_status",
            "updated_since",
        ):
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
    filters: OpportunityFilters,
    token: str | None,
    size: int,
) -> tuple[list[Row], str | None]:
    active, params = filters.bound(conn.dialect)
    return await list_with_token(
        conn,
        codec,
        list_statement(conn.dialect, active),
        {"_ws": workspace_id, **params},
        scope=f"opportunities:{workspace_id}",
        digest=filters.digest(),
        token=token,
        size=size,
        created=o.created_at,
        ident=o.id,
    )
