"""The pipeline (contract H): per opportunity stage the count and the total amount, and the
won and lost totals by month — what the console draws, computed where the records are.

Months are UTC calendar months of `winLossDate`; a closed opportunity counts with its
`finalAmount` (what was won or lost), an open one in its stage with its `amount`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from sqlalchemy import bindparam, or_, select

from chatcrm.core.money import money_text
from chatcrm.db.database import Connection
from chatcrm.opportunities.kind import OPPORTUNITY
from chatcrm.records import board, visibility
from chatcrm.records.listing import Filtering

WON, LOST = 1, 2
_c = OPPORTUNITY.table.c
_CLOSED = select(_c.win_loss_status, _c.win_loss_date, _c.final_amount).where(
    _c.workspace_id == bindparam("_ws"),
    _c.deleted_at.is_(None),
    or_(_c.win_loss_status == WON, _c.win_loss_status == LOST),
    _c.win_loss_date.is_not(None),
)
# An assigned-only agent's months (J.2): only the opportunities it sees.
_CLOSED_SEEN = {
    dialect: _CLOSED.where(visibility.condition(OPPORTUNITY, dialect))
    for dialect in ("postgresql", "sqlite")
}


@dataclass
class _Outcome:
    count: int = 0
    total: Decimal = field(default_factory=Decimal)

    def wire(self) -> dict[str, Any]:
        return {"count": self.count, "totalAmount": Decimal(money_text(self.total))}


def _filtering(dialect: str) -> Filtering:
    """No filters, but an assigned-only agent's restriction (J.2)."""
    if visibility.current() is None:
        return Filtering((), {}, "")
    return Filtering((visibility.ASSIGNED_ONLY,), visibility.params(dialect), "")


async def pipeline(conn: Connection, workspace_id: str) -> dict[str, Any]:
    columns = await board.read_board(
        conn,
        OPPORTUNITY,
        workspace_id=workspace_id,
        filters=(),
        filtering=_filtering(conn.dialect),
        stage_id=None,
        after=None,
        size=0,
        total="amount",
    )
    months: dict[str, dict[int, _Outcome]] = defaultdict(
        lambda: {WON: _Outcome(), LOST: _Outcome()}
    )
    restricted = visibility.current() is not None
    closed = _CLOSED_SEEN[conn.dialect] if restricted else _CLOSED
    params = {"_ws": workspace_id, **visibility.params(conn.dialect)}
    for row in await conn.fetch(closed, params):
        outcome = months[row["win_loss_date"].strftime("%Y-%m")][row["win_loss_status"]]
        outcome.count += 1
        outcome.total += row["final_amount"]
    return {
        "workspaceId": workspace_id,
        "stages": [
            {"stageId": c.stage_id, "name": c.name, "count": c.count, "totalAmount": c.total}
            for c in columns
        ],
        "months": [
            {"month": month, "won": months[month][WON].wire(), "lost": months[month][LOST].wire()}
            for month in sorted(months)
        ],
    }
