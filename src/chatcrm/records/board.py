"""A board (contract H): a column per stage of a record kind, in stage order, with its count
(and for opportunities the total of their amounts) and its first cards in `orderInCards`
order — what the console shows, in one request, whatever the size of the workspace.

The counts are one GROUP BY over the list filters; the cards are one indexed statement per
column (`ix_<table>_stage_order`), so a column costs its page, not the workspace's size.
A column's `next` names the last card shown (`<orderInCards>:<id>`), for "Load more".
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import Any

from sqlalchemy import Integer, Select, String, bindparam, func, select, tuple_

from chatcrm.core.errors import BadRequest, FieldError, ValidationFailed
from chatcrm.core.ids import is_id
from chatcrm.core.money import money_text
from chatcrm.core.values import INT32_MAX
from chatcrm.db.database import Connection
from chatcrm.db.schema import stages
from chatcrm.records import statements
from chatcrm.records.kind import RecordKind
from chatcrm.records.listing import Filter, Filtering, conditions, plan_searches
from chatcrm.records.statements import View

DEFAULT_CARDS = 50  # per column, as the console shows them

_STAGES = (
    select(stages.c.id, stages.c.name)
    .where(stages.c.workspace_id == bindparam("_ws"), stages.c.kind == bindparam("_kind"))
    .order_by(stages.c.position, stages.c.id)
)


@dataclass(frozen=True)
class Column:
    stage_id: str
    name: str
    count: int
    total: Decimal | None  # of `amount`, for the kinds that have one
    cards: list[View]
    next: str | None


@dataclass(frozen=True)
class Position:
    """The last card a column showed."""

    order: int
    id: str

    def text(self) -> str:
        return f"{self.order}:{self.id}"


def read_position(text: str) -> Position:
    """A column's `next`, as the board answered it; anything else is a 400."""
    order, _, ident = text.partition(":")
    # A position is orderInCards, 0 to 2,147,483,647: ten digits at most.
    if not (
        order.isascii()
        and order.isdigit()
        and len(order) <= 10
        and int(order) <= INT32_MAX
        and is_id(ident)
    ):
        raise BadRequest.field(
            "after", "'after' is not a column's 'next': pass it back exactly as received."
        )
    return Position(int(order), ident)


@cache
def _counts_statement(
    kind: RecordKind,
    filters: tuple[Filter, ...],
    variants: tuple[str, ...],
    dialect: str,
    total: str | None,
    one_stage: bool,
) -> Select[Any]:
    c = kind.table.c
    columns: list[Any] = [c.stage_id, func.count().label("count")]
    if total is not None and dialect == "postgresql":
        columns.append(func.sum(c[total]).label("total"))
    where = [*conditions(kind, filters, variants, dialect), *_counted(kind)]
    if one_stage:
        where.append(c.stage_id == bindparam("_stage"))
    return select(*columns).where(*where).group_by(c.stage_id)


def _counted(kind: RecordKind) -> list[Any]:
    return [] if kind.counted is None else [kind.counted(kind.table)]


@cache
def _amounts_statement(
    kind: RecordKind,
    filters: tuple[Filter, ...],
    variants: tuple[str, ...],
    dialect: str,
    total: str,
    one_stage: bool,
) -> Select[Any]:
    # SQLite keeps money as exact text and would sum it as floats: it is summed here instead.
    c = kind.table.c
    where = [*conditions(kind, filters, variants, dialect), *_counted(kind)]
    if one_stage:
        where.append(c.stage_id == bindparam("_stage"))
    return select(c.stage_id, c[total].label("amount")).where(*where)


@cache
def _cards_statement(
    kind: RecordKind,
    filters: tuple[Filter, ...],
    variants: tuple[str, ...],
    dialect: str,
    after: bool,
) -> Select[Any]:
    c = kind.table.c
    where = [*conditions(kind, filters, variants, dialect), c.stage_id == bindparam("_stage")]
    if after:
        position = tuple_(
            bindparam("_after_order", type_=Integer), bindparam("_after_id", type_=String)
        )
        where.append(tuple_(c.order_in_cards, c.id) > position)
    return (
        statements.shape_statement(kind, kind.written_shape, dialect)
        .where(*where)
        .order_by(c.order_in_cards, c.id)
        .limit(bindparam("_limit"))
    )


async def _totals(
    conn: Connection,
    kind: RecordKind,
    filters: tuple[Filter, ...],
    filtering: Filtering,
    params: dict[str, Any],
    total: str | None,
    one_stage: bool,
) -> dict[str, tuple[int, Decimal | None]]:
    """Per stage: how many records pass the filters, and the total of their `total` column."""
    dialect = conn.dialect
    rows = await conn.fetch(
        _counts_statement(kind, filters, filtering.variants, dialect, total, one_stage), params
    )
    if total is None:
        return {row["stage_id"]: (row["count"], None) for row in rows}
    if dialect == "postgresql":
        return {row["stage_id"]: (row["count"], row["total"] or Decimal(0)) for row in rows}
    sums: dict[str, Decimal] = defaultdict(Decimal)
    statement = _amounts_statement(kind, filters, filtering.variants, dialect, total, one_stage)
    for row in await conn.fetch(statement, params):
        sums[row["stage_id"]] += row["amount"]
    return {row["stage_id"]: (row["count"], sums[row["stage_id"]]) for row in rows}


async def stage_rows(conn: Connection, workspace_id: str, kind: str) -> list[tuple[str, str]]:
    """The workspace's stages of a kind, in stage order: (id, name)."""
    rows = await conn.fetch(_STAGES, {"_ws": workspace_id, "_kind": kind})
    return [(row["id"], row["name"]) for row in rows]


async def read_board(
    conn: Connection,
    kind: RecordKind,
    *,
    workspace_id: str,
    filters: tuple[Filter, ...],
    filtering: Filtering,
    stage_id: str | None,
    after: Position | None,
    size: int,
    total: str | None,
) -> list[Column]:
    """The board's columns (only `stage_id`'s when given), each with its first `size` cards
    after `after`."""
    stage_list = await stage_rows(conn, workspace_id, kind.name)
    if stage_id is not None:
        stage_list = [stage for stage in stage_list if stage[0] == stage_id]
        if not stage_list:
            stage = f"{'an' if kind.name[0] in 'aeiou' else 'a'} {kind.name} stage"
            raise ValidationFailed([FieldError("stageId", f"must be {stage} of the workspace")])
    params: dict[str, Any] = {"_ws": workspace_id, **filtering.params}
    if stage_id is not None:
        params["_stage"] = stage_id
    await plan_searches(conn, filtering)
    totals = await _totals(conn, kind, filters, filtering, params, total, stage_id is not None)
    cards = _cards_statement(kind, filters, filtering.variants, conn.dialect, after is not None)
    columns = []
    for ident, name in stage_list:
        values = {**params, "_stage": ident, "_limit": size + 1}
        if after is not None:
            values.update(_after_order=after.order, _after_id=after.id)
        rows = await conn.fetch(cards, values) if size else []  # size 0: totals only
        views = [statements.view_of(row) for row in rows[:size]]
        last = views[-1].record if len(rows) > size else None
        count, amount = totals.get(ident, (0, Decimal(0) if total else None))
        columns.append(
            Column(
                stage_id=ident,
                name=name,
                count=count,
                total=None if amount is None else Decimal(money_text(amount)),
                cards=views,
                next=None if last is None else Position(last["orderInCards"], last["id"]).text(),
            )
        )
    return columns
