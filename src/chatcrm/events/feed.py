"""Reading published events: the feed of a workspace (contract D.2) and the history of one
record (D.3), oldest first, after a cursor that is an event id."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson
from sqlalchemy import ColumnElement, Select, bindparam, literal_column, or_, select

from chatcrm.core import messages as m
from chatcrm.core.errors import FieldError, ServiceError
from chatcrm.db.database import Connection
from chatcrm.db.schema import events
from chatcrm.events.types import FAMILIES, RECORD_TYPES, family

MAX_WAIT_SECONDS = 30.0


class InvalidCursor(ServiceError):
    status, error_code = 400, m.INVALID_CURSOR

    def __init__(self, after: str) -> None:
        super().__init__(
            f"'after' ({after}) is not an event of this workspace that is still kept: pass "
            "back the `next` of a previous answer, or leave it out to start from the oldest "
            "retained event.",
            errors=[FieldError("after", "is unknown, of another workspace, or expired")],
        )


def parse_types(text: str) -> tuple[str, ...]:
    """`types`: comma-separated types or families (`contact.*`), as the exact types they
    stand for; a 422 naming every unknown one."""
    wanted: set[str] = set()
    unknown: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if part in RECORD_TYPES:
            wanted.add(part)
        elif part in FAMILIES:
            wanted.update(t for t in RECORD_TYPES if family(t) == part)
        elif part:
            unknown.append(part)
    if unknown or not wanted:
        names = ", ".join(unknown) or "(none)"
        raise FieldError("types", f"unknown event types: {names}; use types or families")
    return tuple(sorted(wanted))


def parse_wait(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0 <= value <= MAX_WAIT_SECONDS) or text.strip().lower() in ("nan", "inf"):
        raise FieldError("wait", f"must be a number of seconds from 0 to {MAX_WAIT_SECONDS:g}")
    return value


@dataclass(frozen=True)
class Page:
    events: list[orjson.Fragment]  # each event object exactly as stored and sent
    next: str | None


# By the primary key alone (the position is judged below): with `position > 0` in the
# WHERE a planner whose statistics date from before the events were published may walk
# the workspace's feed index instead.
_CURSOR = select(events.c.position, events.c.record_id).where(
    events.c.workspace_id == bindparam("_ws"), events.c.id == bindparam("_id")
)


# `after=end`: the feed's current end, so a client that only wants what happens from now
# on does not page through every retained event first (the console's live updates).
END = "end"
_LAST = (
    select(events.c.id)
    .where(events.c.workspace_id == bindparam("_ws"), events.c.position > 0)
    .order_by(events.c.position.desc())
    .limit(1)
)


async def last_event(conn: Connection, workspace_id: str) -> str | None:
    """The id of the workspace's last published event (None: it has none)."""
    found: str | None = await conn.fetchval(_LAST, {"_ws": workspace_id})
    return found


async def cursor_position(
    conn: Connection, workspace_id: str, after: str | None, *, record_id: str | None = None
) -> int:
    """The feed position an `after` names (0: from the oldest retained event)."""
    if after is None:
        return 0
    row = await conn.fetchrow(_CURSOR, {"_ws": workspace_id, "_id": after})
    if (
        row is None
        or not row["position"]  # not published yet, or never in the feed (webhook.test)
        or (record_id is not None and row["record_id"] != record_id)
    ):
        raise InvalidCursor(after)
    return int(row["position"])


def _type_filter(types: tuple[str, ...]) -> ColumnElement[bool]:
    # Literal: the types come from the closed list above, never from the request's text.
    return or_(*(events.c.type == literal_column(f"'{t}'") for t in types))


@cache
def _page_statement(types: tuple[str, ...] | None, by_record: bool) -> Select[Any]:
    c = events.c
    stmt = select(c.id, c.body).where(
        c.workspace_id == bindparam("_ws"), c.position > bindparam("_after")
    )
    if by_record:
        stmt = stmt.where(c.record_id == bindparam("_record"))
    if types is not None:
        stmt = stmt.where(_type_filter(types))
    return stmt.order_by(c.position).limit(bindparam("_size"))


async def read_page(
    conn: Connection,
    workspace_id: str,
    *,
    after: str | None,
    position: int,
    size: int,
    types: tuple[str, ...] | None = None,
    record_id: str | None = None,
) -> Page:
    """Up to `size` events after `position`, oldest first. `next` is the last one's id, or
    the `after` given when there is none (a client always passes `next` back)."""
    rows = await conn.fetch(
        _page_statement(types, record_id is not None),
        {"_ws": workspace_id, "_after": position, "_record": record_id, "_size": size}
        if record_id is not None
        else {"_ws": workspace_id, "_after": position, "_size": size},
    )
    found = [orjson.Fragment(row["body"]) for row in rows]
    return Page(events=found, next=rows[-1]["id"] if rows else after)
