"""The publisher: queues the webhook deliveries of committed events, and tells waiting feed
requests and dispatchers, here and in other processes, that events were committed.

An event's place in the feed is fixed when it is written (events/feed.py), so nothing is
written to it afterwards. Each enabled endpoint keeps the feed place through which its
deliveries are queued (`webhooks.feed_txid, feed_seq`); a step reads the events after it
that every reader may pass (the feed's own gate: none is skipped), queues those its
`eventTypes` take, and moves the place, in one transaction that holds the endpoint's row
(`FOR UPDATE SKIP LOCKED`: the processes that publish at once share the endpoints
instead of waiting for each other). Every statement names one workspace, so on Citus each
step runs on the one node of that workspace's shards.

Every worker process runs one, woken by its own commits, by PostgreSQL notifications from
the others, or at least every IDLE_SECONDS; a round that a wake-up started is followed by
another AGAIN_SECONDS later.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, select, text, true, update
from sqlalchemy.dialects import postgresql, sqlite

from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection, Database
from chatcrm.db.errors import DatabaseError
from chatcrm.db.schema import events, webhook_deliveries, webhooks
from chatcrm.events import feed
from chatcrm.events.types import matches

log = logging.getLogger("chatcrm.events")

BATCH = 500
NOTIFY_CHANNEL = "chatcrm_events"
# The longest a committed event waits for its deliveries when no wake-up reached this
# process (another process crashed before telling, or its notification was missed).
IDLE_SECONDS = 0.5
# After a round that a commit woke, the next comes this soon: an event held behind an
# older transaction still running (the feed's gate) is taken then, not a second later.
AGAIN_SECONDS = 0.05

_w, _e = webhooks.c, events.c

_ENABLED = select(_w.workspace_id, _w.id, _w.feed_txid, _w.feed_seq).where(_w.enabled.is_(true()))
_ENABLED_ENDPOINT = select(_w.event_types, _w.feed_txid, _w.feed_seq).where(
    _w.workspace_id == bindparam("_ws"), _w.id == bindparam("_wh"), _w.enabled.is_(true())
)
_HOLD = _ENABLED_ENDPOINT.with_for_update(skip_locked=True)
# An endpoint about to be disabled: its step waits for a publisher holding it.
_HOLD_WAITING = _ENABLED_ENDPOINT.with_for_update()
_MOVE = (
    update(webhooks)
    .where(_w.workspace_id == bindparam("_ws"), _w.id == bindparam("_wh"))
    .values(feed_txid=bindparam("_to_txid"), feed_seq=bindparam("_to_seq"))
)


@cache
def _after(dialect: str, limit: int) -> Select[Any]:
    """The events after an endpoint's place that every reader may pass, in feed order."""
    return (
        select(_e.id, _e.type, _e.txid, _e.seq)
        .where(_e.workspace_id == bindparam("_ws"), feed.after_place(), *feed.visible(dialect))
        .order_by(_e.txid, _e.seq)
        .limit(limit)
    )


@cache
def _insert_delivery(dialect: str) -> Any:
    # A delivery already queued (a replay that came first) stays as it is.
    if dialect == "postgresql":
        return postgresql.insert(webhook_deliveries).on_conflict_do_nothing()
    return sqlite.insert(webhook_deliveries).on_conflict_do_nothing()


_NOTIFY = text(f"SELECT pg_notify('{NOTIFY_CHANNEL}', '')")


@dataclass(frozen=True, slots=True)
class Endpoint:
    workspace_id: str
    id: str
    place: feed.Place


async def _enabled(db: Database) -> list[Endpoint]:
    async with db.session() as conn:
        rows = await conn.fetch(_ENABLED)
    return [
        Endpoint(r["workspace_id"], r["id"], (int(r["feed_txid"]), int(r["feed_seq"])))
        for r in rows
    ]


def _place_params(place: feed.Place) -> dict[str, int]:
    return {"_txid": place[0], "_seq": place[1]}


async def _has_new(db: Database, endpoint: Endpoint) -> bool:
    """A read without locks first: an endpoint with nothing new costs one index probe."""
    async with db.session() as conn:
        row = await conn.fetchrow(
            _after(conn.dialect, 1), {"_ws": endpoint.workspace_id, **_place_params(endpoint.place)}
        )
    return row is not None


async def queue_step(
    conn: Connection, workspace_id: str, webhook_id: str, *, wait: bool = False
) -> int | None:
    """One step for one endpoint in the connection's transaction: up to BATCH events after
    its place looked at, its deliveries queued, its place moved. Returns how many events
    were looked at (None: another process holds the endpoint, or it is not enabled;
    `wait`: wait for that process instead)."""
    await conn.begin()
    key = {"_ws": workspace_id, "_wh": webhook_id}
    held = await conn.fetchrow(_HOLD_WAITING if wait else _HOLD, key)
    if held is None:
        return None
    place = (int(held["feed_txid"]), int(held["feed_seq"]))
    rows = await conn.fetch(
        _after(conn.dialect, BATCH), {"_ws": workspace_id, **_place_params(place)}
    )
    if not rows:
        return 0
    types = json.loads(held["event_types"])
    now = utcnow()
    await conn.executemany(
        _insert_delivery(conn.dialect),
        [
            {
                "workspace_id": workspace_id,
                "webhook_id": webhook_id,
                "event_id": row["id"],
                "event_type": row["type"],
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": now,
                "last_attempt_at": None,
                "last_response_status": None,
                "last_error": None,
                "created_at": now,
            }
            for row in rows
            if matches(types, row["type"])
        ],
    )
    last = rows[-1]
    await conn.execute(_MOVE, {**key, "_to_txid": last["txid"], "_to_seq": last["seq"]})
    return len(rows)


async def queue_before_disabling(conn: Connection, workspace_id: str, webhook_id: str) -> None:
    """In the transaction that disables an endpoint, before it does: queue its deliveries
    of every event committed so far that readers may pass. They matched an enabled
    endpoint, so they are delivered (D.4: at least once) once it is enabled again, however
    soon after their commit the disable came; the publisher only serves enabled ones."""
    while True:
        count = await queue_step(conn, workspace_id, webhook_id, wait=True)
        if count is None or count < BATCH:
            return


async def publish_pending(db: Database) -> int:
    """Queue the deliveries of every event committed so far that readers may pass; returns
    how many events were looked at."""
    total = 0
    for endpoint in await _enabled(db):
        if not await _has_new(db, endpoint):
            continue
        while True:
            async with db.transaction() as conn:
                count = await queue_step(conn, endpoint.workspace_id, endpoint.id)
            total += count or 0
            if count is None or count < BATCH:
                break
    return total


async def publish_everything(settings: Settings) -> None:
    """`publish_pending` on a pool of its own: before the event table moves to Citus's
    workers, where every event gets another transaction id (db/citus.py)."""
    db = Database(settings)
    try:
        await publish_pending(db)
    finally:
        await db.dispose()


Hook = Callable[[], None]


class Publisher:
    """The publishing loop of a process; `wake()` after a commit that wrote events."""

    def __init__(self, db: Database, *, on_published: list[Hook]) -> None:
        self.db = db
        self.on_published = on_published
        self._wake = asyncio.Event()
        self._committed = False  # events were committed here since the last round

    def wake(self) -> None:
        self._committed = True
        self._wake.set()

    def published(self) -> None:
        """Events were committed, or deliveries queued: wake who waits for them here."""
        for hook in self.on_published:
            hook()

    def notified(self) -> None:
        """Another process committed events (its notification, or None when the listening
        connection was opened again and one may have been missed)."""
        self.published()
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        woken = follow_up = False  # this round: after a wake-up / AGAIN_SECONDS after one
        while not stop.is_set():
            self._wake.clear()
            try:
                if self._committed:
                    self._committed = False
                    await self._tell_others()
                queued = await publish_pending(self.db)
                if queued or woken or follow_up:
                    # The dispatcher (deliveries were queued) and this process's waiting
                    # feed requests (events were committed: now, or held a moment ago).
                    self.published()
            except (DatabaseError, OSError) as exc:
                log.warning("queueing webhook deliveries failed; retrying: %s", exc)
            except Exception:  # keep publishing whatever one step did
                log.exception("queueing webhook deliveries failed; retrying")
            try:
                await asyncio.wait_for(self._wake.wait(), AGAIN_SECONDS if woken else IDLE_SECONDS)
                # Let the commits of a burst gather into one round.
                await asyncio.sleep(0.002)
                woken, follow_up = True, False
            except TimeoutError:
                woken, follow_up = False, woken

    async def _tell_others(self) -> None:
        """Other processes' feed requests and publishers (PostgreSQL): one notification a
        round, outside the writers' transactions."""
        if self.db.is_postgres:
            async with self.db.session() as conn:
                await conn.execute(_NOTIFY)
