"""The publisher: gives committed events their feed positions, in commit order, and queues
their webhook deliveries.

Why positions are not drawn at insert: a number drawn inside a transaction is not commit
order. A writer that draws 10 and commits after another drew 11 and committed would make
10 appear behind a reader that has already passed 11: a gap. So an event is inserted
without a position, and positions are handed out after commit by one publisher at a time
(serialised by the row lock on `event_positions`), to the events it can see, in insertion
order. A reader sees a prefix of the positions: a publisher's batch becomes visible at its
commit, and the next publisher starts only after that commit. Events of one record are
written under its row lock, so insertion order is their version order.

Every worker process runs one; each publishes what any process committed (woken by its own
commits, by PostgreSQL notifications, or at least once a second).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, select, text, update
from sqlalchemy.dialects import postgresql, sqlite

from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection, Database
from chatcrm.db.errors import DatabaseError
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import event_positions, events, webhook_deliveries, webhooks
from chatcrm.events.types import matches

log = logging.getLogger("chatcrm.events")

BATCH = 500
NOTIFY_CHANNEL = "chatcrm_events"
IDLE_SECONDS = 1.0  # the longest an event committed by a crashed process waits

_LOCK = (
    update(event_positions)
    .where(event_positions.c.id == 1)
    .values(last_position=event_positions.c.last_position)
    .returning(event_positions.c.last_position)
)
_PENDING = (
    select(events.c.workspace_id, events.c.id, events.c.type)
    .where(events.c.position.is_(None))
    .order_by(events.c.seq)
    .limit(BATCH)
)
# In seq order: the partial index of unpublished events is then the plan, whatever the
# statistics say (taken while most events were still unpublished, they would make a scan
# of the whole table look cheaper).
_WORKSPACE_PENDING = (
    select(events.c.id)
    .where(events.c.position.is_(None), events.c.workspace_id == bindparam("_ws"))
    .order_by(events.c.seq)
    .limit(1)
)
_SET_POSITION = (
    update(events)
    .where(events.c.workspace_id == bindparam("_ws"), events.c.id == bindparam("_id"))
    .values(position=bindparam("_pos"))
)
_ADVANCE = (
    update(event_positions)
    .where(event_positions.c.id == 1)
    .values(last_position=bindparam("_last"))
)


@cache
def _insert_delivery(dialect: str) -> Any:
    # A delivery already queued (a replay that came first) stays as it is.
    if dialect == "postgresql":
        return postgresql.insert(webhook_deliveries).on_conflict_do_nothing()
    return sqlite.insert(webhook_deliveries).on_conflict_do_nothing()


_NOTIFY = text(f"SELECT pg_notify('{NOTIFY_CHANNEL}', '')")


@cache
def _subscribers(dialect: str) -> Select[Any]:
    c = webhooks.c
    return select(c.workspace_id, c.id, c.event_types).where(
        c.enabled.is_(True), in_id_list(c.workspace_id, "_wss", dialect)
    )


async def publish_batch(conn: Connection) -> int:
    """One publisher step in the connection's transaction: up to BATCH events positioned
    and their deliveries queued. Returns how many were published (commit follows)."""
    await conn.begin()
    last = int(await conn.fetchval(_LOCK))  # waits for any other publisher to commit
    pending = await conn.fetch(_PENDING)
    if not pending:
        return 0
    await conn.executemany(
        _SET_POSITION,
        [
            {"_ws": row["workspace_id"], "_id": row["id"], "_pos": last + i}
            for i, row in enumerate(pending, start=1)
        ],
    )
    await conn.execute(_ADVANCE, {"_last": last + len(pending)})
    await _queue_deliveries(conn, pending)
    if conn.dialect == "postgresql":
        await conn.execute(_NOTIFY)  # sent at commit: other processes' feeds and dispatchers
    return len(pending)


async def _queue_deliveries(conn: Connection, published: list[dict[str, Any]]) -> None:
    workspaces = sorted({row["workspace_id"] for row in published})
    endpoints: dict[str, list[tuple[str, list[str]]]] = {}
    rows = await conn.fetch(_subscribers(conn.dialect), {"_wss": id_list(workspaces, conn.dialect)})
    for row in rows:
        types = json.loads(row["event_types"])
        endpoints.setdefault(row["workspace_id"], []).append((row["id"], types))
    if not endpoints:
        return
    now = utcnow()
    await conn.executemany(
        _insert_delivery(conn.dialect),
        [
            {
                "workspace_id": event["workspace_id"],
                "webhook_id": webhook_id,
                "event_id": event["id"],
                "event_type": event["type"],
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now,
                "last_attempt_at": None,
                "last_response_status": None,
                "last_error": None,
                "created_at": now,
            }
            for event in published
            for webhook_id, types in endpoints.get(event["workspace_id"], ())
            if matches(types, event["type"])
        ],
    )


async def publish_pending(db: Database) -> int:
    """Publish everything committed so far; returns how many events were published."""
    total = 0
    while True:
        async with db.transaction() as conn:
            count = await publish_batch(conn)
        total += count
        if count < BATCH:
            return total


async def catch_up(conn: Connection, workspace_id: str) -> int:
    """Before a read of the feed or a history: publish the workspace's committed events,
    so a client reads its own writes (then the connection's work is committed). Returns
    how many events were published."""
    if await conn.fetchrow(_WORKSPACE_PENDING, {"_ws": workspace_id}) is None:
        return 0
    total = 0
    while True:
        count = await publish_batch(conn)
        await conn.commit()
        total += count
        if count < BATCH:
            return total


Hook = Callable[[], None]


class Publisher:
    """The publishing loop of a process; `wake()` after a commit that wrote events."""

    def __init__(self, db: Database, *, on_published: list[Hook]) -> None:
        self.db = db
        self.on_published = on_published
        self._wake = asyncio.Event()

    def wake(self) -> None:
        self._wake.set()

    def published(self) -> None:
        """Events were published (here or, told by a notification, elsewhere)."""
        for hook in self.on_published:
            hook()

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            self._wake.clear()
            try:
                if await publish_pending(self.db):
                    self.published()
            except (DatabaseError, OSError) as exc:
                log.warning("publishing events failed; retrying: %s", exc)
            except Exception:  # keep publishing whatever one batch did
                log.exception("publishing events failed; retrying")
            try:
                await asyncio.wait_for(self._wake.wait(), IDLE_SECONDS)
                # Let the commits of a burst gather into one batch.
                await asyncio.sleep(0.002)
            except TimeoutError:
                pass
