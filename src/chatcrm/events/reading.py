"""The feed and history requests: catch up, read a page, and (feed) wait for the next event
without holding a database connection."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from chatcrm.db.database import Connection
from chatcrm.events import feed
from chatcrm.events.feed import Page
from chatcrm.events.publisher import Publisher, catch_up
from chatcrm.events.signals import Broadcast

# While waiting, how often to look for events published by another process: SQLite has no
# notifications; on PostgreSQL they wake this one at once (events/notifications.py), and
# this is the fallback while that connection is being re-opened.
POLL_SECONDS = {"sqlite": 0.25, "postgresql": 1.0}


@dataclass
class EventsRuntime:
    """A process's publisher, and the broadcast that wakes its waiting feed requests."""

    publisher: Publisher
    published: Broadcast


async def _caught_up(conn: Connection, runtime: EventsRuntime | None, workspace_id: str) -> None:
    if await catch_up(conn, workspace_id) and runtime is not None:
        runtime.publisher.published()


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
) -> Page:
    """A page of the feed (or of one record's history), waiting up to `wait` seconds for
    an event when there is none yet."""
    await _caught_up(conn, runtime, workspace_id)
    if after == feed.END and history_of is None:
        after = await feed.last_event(conn, workspace_id)
    position = await feed.cursor_position(conn, workspace_id, after, record_id=history_of)
    deadline = asyncio.get_running_loop().time() + wait
    while True:
        page = await feed.read_page(
            conn,
            workspace_id,
            after=after,
            position=position,
            size=size,
            types=types,
            record_id=history_of or record_id,
        )
        remaining = deadline - asyncio.get_running_loop().time()
        if page.events or remaining <= 0:
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
        await _caught_up(conn, runtime, workspace_id)
