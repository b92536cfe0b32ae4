"""The outbox: an event row written on the change's own connection, in its transaction
(contract D.1), so an acknowledged change always has its event and a rolled-back one never.

The event object is serialised once, here: the feed, history and every delivery send these
bytes as they are.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Insert, func, insert, select

from chatcrm.core.ids import new_id
from chatcrm.core.jsontext import dumps
from chatcrm.core.timestamps import iso
from chatcrm.db.database import Connection
from chatcrm.db.schema import events

EVENT_ID_PREFIX = "evt_"
NOT_IN_FEED = 0  # the position of an event delivered to one endpoint and never listed


def new_event_id() -> str:
    # Time-ordered like every id we issue, without the dashes: evt_<32 hex digits>.
    return EVENT_ID_PREFIX + new_id().replace("-", "")


@cache
def _insert_statement(dialect: str) -> Insert:
    if dialect == "postgresql":
        seq: Any = func.nextval("events_seq")
    else:
        # SQLite writes one transaction at a time (its write lock), so max + 1 is never
        # drawn twice and insertion order is commit order.
        seq = select(func.coalesce(func.max(events.c.seq), 0) + 1).scalar_subquery()
    return insert(events).values(seq=seq)


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
    """Write one event in the connection's transaction; returns its id. The publisher
    (events/publisher.py) gives it its feed position once it is committed."""
    event_id = new_event_id()
    body = dumps(
        {
            "id": event_id,
            "type": type,
            "workspaceId": workspace_id,
            "createdAt": iso(now),
            "recordId": record_id,
            "recordVersion": record_version,
            "changed": changed,
            "data": data,
        }
    )
    await conn.begin()
    await conn.execute(
        _insert_statement(conn.dialect),
        {
            "workspace_id": workspace_id,
            "id": event_id,
            "position": None if in_feed else NOT_IN_FEED,
            "type": type,
            "record_id": record_id,
            "created_at": now,
            "body": body.decode(),
        },
    )
    conn.wrote_events = True
    return event_id


__all__ = ["NOT_IN_FEED", "new_event_id", "write_event"]
