"""Reading events: the feed of a workspace (contract D.2) and the history of one
record (D.3), oldest first, after a cursor that is an event id."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

import orjson
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    Select,
    and_,
    bindparam,
    exists,
    literal_column,
    or_,
    select,
    tuple_,
)

from chatcrm.core import messages as m
from chatcrm.core.errors import FieldError, ServiceError
from chatcrm.db.database import Connection
from chatcrm.db.schema import events
from chatcrm.events.outbox import IN_FEED
from chatcrm.events.types import EVERYTHING, FAMILIES, RECORD_TYPES, family
from chatcrm.records import visibility

MAX_WAIT_SECONDS = 30.0


class InvalidCursor(ServiceError):
    status, error_code = 400, m.INVALID_CURSOR

    def __init__(self, after: str, *, of_record: bool = False) -> None:
        whose, other = ("this record", "another record") if of_record else ("this workspace", "")
        others = f"of {other} or of another workspace" if other else "of another workspace"
        super().__init__(
            f"'after' ({after}) is not an event of {whose} that is still kept: pass "
            "back the `next` of a previous answer, or leave it out to start from the oldest "
            "retained event.",
            errors=[FieldError("after", f"is unknown, {others}, or expired")],
        )


def parse_types(text: str) -> tuple[str, ...]:
    """`types`: comma-separated types, families (`contact.*`) or `*` (every type, as in a
    webhook's `eventTypes`), as the exact types they stand for; a 422 naming every unknown
    one."""
    wanted: set[str] = set()
    unknown: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if part == EVERYTHING:
            wanted.update(RECORD_TYPES)
        elif part in RECORD_TYPES:
            wanted.add(part)
        elif part in FAMILIES:
            wanted.update(t for t in RECORD_TYPES if family(t) == part)
        elif part:
            unknown.append(part)
    if unknown or not wanted:
        names = ", ".join(unknown) or "(none)"
        raise FieldError("types", f"unknown event types: {names}; use types or families")
    return tuple(sorted(wanted))


# Seconds as written in decimal, ASCII digits only (as pageSize): no sign, exponent, `_`,
# spaces or other scripts' digits, which float() would all take.
_SECONDS = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")


def parse_wait(text: str) -> float:
    value = float(text) if _SECONDS.fullmatch(text) else -1.0
    if not 0 <= value <= MAX_WAIT_SECONDS:
        raise FieldError("wait", f"must be a number of seconds from 0 to {MAX_WAIT_SECONDS:g}")
    return value


@dataclass(frozen=True)
class Page:
    events: list[orjson.Fragment]  # each event object exactly as stored and sent
    next: str | None


# A place in the feed: (txid, seq). Events are read in that order, and only those whose
# txid is below every transaction still running (the gate, PostgreSQL): an event not yet
# committed has a txid at or above that bound (its trigger takes the transaction's own id,
# or a higher one), so it can never appear behind a place a reader has passed. The txid of
# an event is raised to its record's previous event's (migration 0008's trigger) so that a
# record's events keep their version order even when a transaction that took its id
# earlier wrote after another. SQLite's one writer makes `seq` commit order: no gate.
Place = tuple[int, int]
START: Place = (IN_FEED, 0)  # before the oldest event (seq starts at 1; -1 is never listed)

# The gate (migration 0014's chatcrm_feed_gate) is the oldest transaction the statement's
# snapshot sees running that may be of this database: one seen running, or prepared, in
# another database of the server (pg_stat_activity and pg_prepared_xacts name it, to any
# role) writes no event here, and its database never changes; one whose database cannot be
# told (it ended since the snapshot was taken) counts as this database's. Without
# that, a long write anywhere on a shared server (another application, a CREATE DATABASE)
# kept every feed and history behind it, and a client did not read its own writes.
_GATE = "chatcrm_feed_gate()"
_HORIZON = "pg_snapshot_xmax(pg_current_snapshot())::text::bigint"


def visible(dialect: str) -> list[ColumnElement[bool]]:
    """The gate: events every reader may pass (none needed on SQLite)."""
    if dialect == "sqlite":
        return []
    # Evaluated where the events are: on Citus a SELECT's functions run on the worker that
    # holds the workspace's shard, whose transaction ids the events carry.
    return [events.c.txid < literal_column(_GATE)]


def after_place(place_params: tuple[str, str] = ("_txid", "_seq")) -> ColumnElement[bool]:
    c = events.c
    return tuple_(c.txid, c.seq) > tuple_(bindparam(place_params[0]), bindparam(place_params[1]))


_CURSOR = select(events.c.txid, events.c.seq, events.c.record_id).where(
    events.c.workspace_id == bindparam("_ws"), events.c.id == bindparam("_id")
)


# `after=end`: the feed's current end, so a client that only wants what happens from now
# on does not page through every retained event first (the console's live updates).
END = "end"


@cache
def _end(dialect: str, restricted: bool = False) -> Select[Any]:
    c = events.c
    stmt = select(c.id, c.txid, c.seq).where(
        c.workspace_id == bindparam("_ws"), c.txid >= IN_FEED, *visible(dialect)
    )
    if restricted:
        stmt = stmt.where(_records_seen(dialect))
    return stmt.order_by(c.txid.desc(), c.seq.desc()).limit(1)


async def last_event(conn: Connection, workspace_id: str) -> str | None:
    """The id of the workspace's last event a reader may pass (None: it has none); for an
    assigned-only agent, the last it may see: `after=end`'s `next` names no event of a
    record hidden from it (J.2)."""
    restricted = visibility.current() is not None
    params = {"_ws": workspace_id, **visibility.params(conn.dialect)}
    row = await conn.fetchrow(_end(conn.dialect, restricted), params)
    return None if row is None else str(row["id"])


async def end_place(conn: Connection, workspace_id: str) -> Place:
    """The place of the workspace's last event a reader may pass (START: none yet). Any
    event committed later comes after it."""
    row = await conn.fetchrow(_end(conn.dialect), {"_ws": workspace_id})
    return START if row is None else (int(row["txid"]), int(row["seq"]))


# The snapshot's bounds, taken where the workspace's events are (on Citus, the worker of its
# shard): `xmax` at the start of a read names every transaction that had committed by then.
_SNAPSHOT = (
    select(
        literal_column(_GATE, BigInteger).label("xmin"),
        literal_column(_HORIZON, BigInteger).label("xmax"),
    )
    .select_from(events)
    .where(events.c.workspace_id == bindparam("_ws"))
    .limit(1)
)


async def snapshot(conn: Connection, workspace_id: str) -> tuple[int, int] | None:
    """(xmin, xmax) of a snapshot taken now (PostgreSQL; None on SQLite, or when the
    workspace has no events yet)."""
    if conn.dialect == "sqlite":
        return None
    row = await conn.fetchrow(_SNAPSHOT, {"_ws": workspace_id})
    return None if row is None else (int(row["xmin"]), int(row["xmax"]))


async def cursor_place(
    conn: Connection, workspace_id: str, after: str | None, *, record_id: str | None = None
) -> Place:
    """The feed place an `after` names (START: from the oldest retained event)."""
    if after is None:
        return START
    row = await conn.fetchrow(_CURSOR, {"_ws": workspace_id, "_id": after})
    if (
        row is None
        or row["txid"] < IN_FEED  # never in the feed (webhook.test)
        or (record_id is not None and row["record_id"] != record_id)
    ):
        raise InvalidCursor(after, of_record=record_id is not None)
    return int(row["txid"]), int(row["seq"])


def _type_filter(types: tuple[str, ...]) -> ColumnElement[bool]:
    # Literal: the types come from the closed list above, never from the request's text.
    return or_(*(events.c.type == literal_column(f"'{t}'") for t in types))


def _records_seen(dialect: str) -> ColumnElement[bool]:
    """An assigned-only agent's events (J.2): of no record, or of a record it sees."""
    from chatcrm.contacts.kind import CONTACT  # the record kinds sit above the feed
    from chatcrm.opportunities.kind import OPPORTUNITY

    c = events.c
    seen = []
    for kind in (CONTACT, OPPORTUNITY):
        r = kind.table.c
        seen.append(
            exists(
                select(r.id).where(
                    r.workspace_id == bindparam("_ws"),
                    r.id == c.record_id,
                    visibility.condition(kind, dialect),
                )
            )
        )
    # A message's events (K.1): seen with its contact.
    from chatcrm.messages.tables import messages

    m, k = messages.c, CONTACT.table.c
    seen.append(
        exists(
            select(m.id)
            .select_from(
                messages.join(
                    CONTACT.table, and_(k.workspace_id == m.workspace_id, k.id == m.contact_id)
                )
            )
            .where(
                m.workspace_id == bindparam("_ws"),
                m.id == c.record_id,
                visibility.condition(CONTACT, dialect),
            )
        )
    )
    return or_(c.record_id.is_(None), *seen)


@cache
def _page_statement(
    types: tuple[str, ...] | None, by_record: bool, dialect: str, restricted: bool = False
) -> Select[Any]:
    c = events.c
    stmt = select(c.id, c.body).where(
        c.workspace_id == bindparam("_ws"), after_place(), *visible(dialect)
    )
    if restricted:
        stmt = stmt.where(_records_seen(dialect))
    if by_record:
        stmt = stmt.where(c.record_id == bindparam("_record"))
    if types is not None:
        stmt = stmt.where(_type_filter(types))
    return stmt.order_by(c.txid, c.seq).limit(bindparam("_size"))


async def read_page(
    conn: Connection,
    workspace_id: str,
    *,
    after: str | None,
    place: Place,
    size: int,
    types: tuple[str, ...] | None = None,
    record_id: str | None = None,
) -> Page:
    """Up to `size` events after `place`, oldest first. `next` is the last one's id, or
    the `after` given when there is none (a client always passes `next` back)."""
    params: dict[str, Any] = {
        "_ws": workspace_id,
        "_txid": place[0],
        "_seq": place[1],
        "_size": size,
    }
    if record_id is not None:
        params["_record"] = record_id
    restricted = visibility.current() is not None
    params.update(visibility.params(conn.dialect))
    statement = _page_statement(types, record_id is not None, conn.dialect, restricted)
    rows = await conn.fetch(statement, params)
    found = [orjson.Fragment(row["body"]) for row in rows]
    return Page(events=found, next=rows[-1]["id"] if rows else after)
