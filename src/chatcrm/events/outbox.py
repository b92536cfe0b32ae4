"""The outbox: an event row written on the change's own connection, in its transaction
(contract D.1), so an acknowledged change always has its event and a rolled-back one never.

The event object is serialised once, here: the feed, history and every delivery send these
bytes as they are.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Insert, func, insert, literal_column, select

from chatcrm.core.ids import new_id
from chatcrm.core.jsontext import dumps
from chatcrm.core.timestamps import iso
from chatcrm.db.database import Connection
from chatcrm.db.schema import events

EVENT_ID_PREFIX = "evt_"
# The `txid` of an event in the feed as written: PostgreSQL's trigger replaces it with the
# transaction's (migration 0008); SQLite keeps it. An event delivered to one endpoint and
# never listed (webhook.test) is written with NOT_IN_FEED, which no reader passes.
IN_FEED = 0
NOT_IN_FEED = -1


def new_event_id() -> str:
    # Time-ordered like every id we issue, without the dashes: evt_<32 hex digits>.
    return EVENT_ID_PREFIX + new_id().replace("-", "")


@cache
def _insert_statement(dialect: str) -> Insert:
    if dialect == "postgresql":
        seq: Any = func.nextval("events_seq")
    else:
        # SQLite writes one transaction at a time (its write lock), so max + 1 is never
        # drawn twice and insertion order is commit order. Of the rowid, not of `seq`: the
        # rowid's max is read from its b-tree's end, `seq`'s would scan every event. (The
        # new row takes that rowid, so seq and rowid agree.)
        rowid: Any = literal_column("rowid")
        seq = select(func.coalesce(func.max(rowid), 0) + 1).select_from(events).scalar_subquery()
    return insert(events).values(seq=seq)


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event about to be written (contract D.1's object, before its id)."""

    workspace_id: str
    type: str
    record_id: str | None
    record_version: int | None
    changed: list[str]
    data: dict[str, Any]
    now: datetime
    in_feed: bool = True


# J.4: what the service does by itself (retention, imports without a caller…).
SYSTEM_ACTOR = {"type": "system", "id": None, "name": "chatcrm"}


def _row(event: NewEvent, actor: dict[str, Any] | None) -> dict[str, Any]:
    event_id = new_event_id()
    body = dumps(
        {
            "id": event_id,
            "type": event.type,
            "workspaceId": event.workspace_id,
            "createdAt": iso(event.now),
            "recordId": event.record_id,
            "recordVersion": event.record_version,
            "changed": event.changed,
            "data": event.data,
            "actor": actor or SYSTEM_ACTOR,
        }
    )
    return {
        "workspace_id": event.workspace_id,
        "id": event_id,
        "txid": IN_FEED if event.in_feed else NOT_IN_FEED,
        "type": event.type,
        "record_id": event.record_id,
        "created_at": event.now,
        "body": body.decode(),
    }


async def write_event(
    conn: Connection,
    *,
    workspace_id: str,
    type: str,
    record_id: str | None,
    record_version: int | None,
    changed: list[str],
    data: dict[str, Any],
    now: datetime,
    in_feed: bool = True,
) -> str:
    """Write one event in the connection's transaction; returns its id. Its place in the
    feed is fixed here, by this one INSERT (events/feed.py)."""
    new = NewEvent(workspace_id, type, record_id, record_version, changed, data, now, in_feed)
    row = _row(new, conn.actor)
    await conn.begin()
    await conn.execute(_insert_statement(conn.dialect), row)
    conn.wrote_events = True
    return str(row["id"])


async def write_events(conn: Connection, events: list[NewEvent]) -> None:
    """Write events in the connection's transaction, in this order, with one statement
    sent many times (a batch's changes)."""
    if not events:
        return
    await conn.begin()
    await conn.executemany(_insert_statement(conn.dialect), [_row(e, conn.actor) for e in events])
    conn.wrote_events = True


__all__ = ["IN_FEED", "NOT_IN_FEED", "NewEvent", "new_event_id", "write_event", "write_events"]
