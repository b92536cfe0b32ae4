"""What a change of some opportunity fields sets beyond their own column (contract B.2),
and the opportunity code drawn on create."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Integer, bindparam, case, not_, text

from chatcrm.db.database import Connection
from chatcrm.db.types import Money
from chatcrm.records.changes import Change, Effect
from chatcrm.records.defaults import Creation, Default

# Ours (contract B.2): winLossStatus 0 open, 1 won, 2 lost; opportStatus 1 open, 2 closed;
# statusId 1 active, 2 deleted; creationTypeId 1 API, 2 import, 3 console.
OPEN, WON, LOST = 0, 1, 2
STATUS_OPEN, STATUS_CLOSED = 1, 2
ACTIVE, DELETED = 1, 2
CREATED_BY_API = 1


class _WinLoss(Effect):
    """Won or lost sets winLossDate (now) and closes the opportunity; open clears the date
    and opens it again."""

    direct = True
    sets = ("opportStatus", "winLossDate")

    async def apply(self, change: Change) -> None:
        if change.clean["winLossStatus"] == OPEN:
            change.columns.update(win_loss_date=None, opport_status=STATUS_OPEN)
        else:
            change.columns.update(win_loss_date=change.now, opport_status=STATUS_CLOSED)


class _FinalAmountSet(Effect):
    """Once named, finalAmount stops following amount."""

    direct = True

    async def apply(self, change: Change) -> None:
        change.columns["final_amount_set"] = True


def _followed_amount(c: Any) -> ColumnElement[Any]:
    # Decided by the stored flag inside the statement: no read of the record is needed.
    return case((c.final_amount_set, c.final_amount), else_=bindparam("_amount", type_=Money()))


def _follows(c: Any) -> ColumnElement[bool]:
    return not_(c.final_amount_set)


class _FollowAmount(Effect):
    """finalAmount follows amount until it is set explicitly."""

    direct = True
    sets = ("finalAmount",)
    statement_flag = staticmethod(_follows)

    async def apply(self, change: Change) -> None:
        if "finalAmount" not in change.clean:
            change.expressions["final_amount"] = _followed_amount
            change.params["_amount"] = change.clean["amount"]


_NEXT_CODE = text(
    "INSERT INTO opportunity_code_counters (workspace_id, year, last_value) "
    "VALUES (:_ws, :_year, 1) "
    "ON CONFLICT (workspace_id, year) "
    "DO UPDATE SET last_value = opportunity_code_counters.last_value + 1 "
    "RETURNING last_value"
).columns(last_value=Integer)


async def next_code_number(conn: Connection, workspace_id: str, year: int) -> int:
    """The next number of the workspace's yearly sequence, inside the caller's transaction.

    The upsert row-locks the counter until commit (PostgreSQL), or runs under the write
    lock (SQLite), so concurrent creates queue on it and draw distinct numbers; a rolled
    back create gives its number back, so the sequence has no gaps.
    """
    return int(await conn.fetchval(_NEXT_CODE, {"_ws": workspace_id, "_year": year}))


class _NextCode(Default):
    """`OPP-<year>-<nnnn>`: drawn last, after every check, so the counter row stays locked
    for the shortest time."""

    order = 2

    async def value(self, creation: Creation) -> Any:
        year = creation.now.year
        number = await next_code_number(creation.conn, creation.workspace_id, year)
        return f"OPP-{year}-{number:04d}"


WIN_LOSS_EFFECT = _WinLoss()
FINAL_AMOUNT_SET = _FinalAmountSet()
FOLLOW_AMOUNT = _FollowAmount()
NEXT_CODE = _NextCode()
