"""The feed and history requests: read a page, and (feed) wait for the next event
without holding a database connection."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from chatcrm.db.database import Connection
from chatcrm.events import feed
from chatcrm.events.feed import Page
from chatcrm.events.publisher import Publisher
from chatcrm.events.signals import Broadcast

# While waiting, how often to look for events committed by another process: SQLite has no
# notifications; on PostgreSQL they wake this one at once (events/notifications.py), and
# this is the fallback while that connection is being re-opened.
POLL_SECONDS = {"sqlite": 0.25, "postgresql": 1.0}
# How long a read waits, at most, for the transactions that were running when it began to
# end, so that it shows everything committed before it (a client reads its own writes):
# usually milliseconds; a transaction left open elsewhere is not waited for longer.
SETTLE_SECONDS = 1.0
SETTLE_PAUSE = 0.005


@dataclass
class EventsRuntime:
    """A process's publisher, and the broadcast that wakes its waiting feed requests."""

    publisher: Publisher
    published: Broadcast
    # The process was asked to stop: a waiting read answers what it has at once, rather
    # than holding the stop for up to its `wait` (the server lets requests finish).
    stopping: bool = False

    def stop_waiting(self) -> None:
        self.stopping = True
        self.published.fire()


async def read(
    conn: Connection,
    runtime: EventsRuntime | None,
    workspace_id: str,
    *,
    after: str | None,
    size: int,
    types: tuple[str, ...] | None = None,
    record_id: str | None = None,
    history_of: str | None = None,
    wait: float = 0.0,
    gone: Callable[[], Awaitable[bool]] | None = None,
    still_allowed: Callable[[], Awaitable[None]] | None = None,
) -> Page:
    """A page of the feed (or of one record's history), waiting up to `wait` seconds for
    an event when there is none yet. After each wait, `still_allowed` raises when the
    caller lost its access meanwhile (a key revoked, a user disabled: I's 1 s)."""
    loop = asyncio.get_running_loop()
    bounds = await feed.snapshot(conn, workspace_id)
    horizon = None if bounds is None else bounds[1]
    settle_until = loop.time() + SETTLE_SECONDS
    if after == feed.END and history_of is None:
        after = await feed.last_event(conn, workspace_id)
    place = await feed.cursor_place(conn, workspace_id, after, record_id=history_of)
    deadline = loop.time() + wait
    while True:
        page = await feed.read_page(
            conn,
            workspace_id,
            after=after,
            place=place,
            size=size,
            types=types,
            record_id=history_of or record_id,
        )
        if len(page.events) < size and horizon is not None:
            if loop.time() < settle_until and await _unsettled(conn, workspace_id, horizon):
                await asyncio.sleep(SETTLE_PAUSE)
                continue
            # Settled now, but the page was read before: a transaction that ended between
            # that read and this look has its events after the page's. Read it again.
            horizon = None
            continue
        remaining = deadline - loop.time()
        if page.events or remaining <= 0 or (runtime is not None and runtime.stopping):
            return page
        # A client that left (a closed tab) no longer holds its poll open.
        if gone is not None and await gone():
            return page
        await conn.commit()  # wait without holding a connection
        pause = min(remaining, POLL_SECONDS[conn.dialect])
        if runtime is None:
            await asyncio.sleep(pause)
        else:
            await runtime.published.wait(pause)
        if still_allowed is not None:
            await still_allowed()


async def _unsettled(conn: Connection, workspace_id: str, horizon: int) -> bool:
    """Is a transaction that was running at `horizon` still running (its events, if it
    commits, are not shown yet)?"""
    bounds = await feed.snapshot(conn, workspace_id)
    return bounds is not None and bounds[0] < horizon
