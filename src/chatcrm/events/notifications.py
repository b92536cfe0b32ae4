"""PostgreSQL notifications between processes, on one LISTEN connection per process: a
publisher's batch wakes the long polls and dispatchers of every other process at once, and
a changed API key is dropped from every process's cache (SQLite has none: they poll)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

from chatcrm.db.database import Database
from chatcrm.db.errors import DatabaseError

log = logging.getLogger("chatcrm.events")

RECONNECT_SECONDS = 2.0

# A channel's handler gets each notification's payload, and None once the connection is
# (re)opened: a notification may have been missed meanwhile.
Handler = Callable[[str | None], None]


def _nothing() -> None:
    pass


async def listen_forever(
    db: Database, handlers: Mapping[str, Handler], *, on_lost: Callable[[], None] = _nothing
) -> None:
    """LISTEN on the handlers' channels until cancelled, reconnecting when the connection
    is lost. `on_lost` is called as soon as it is (or could not be opened): until the
    handlers get their None, nothing is heard from other processes, and what must not wait
    for the reconnection (a revoked key, refused within 1 s) has to be read otherwise."""
    while True:
        try:
            await _listen_once(db, handlers)
            log.warning("lost the notification connection; reconnecting")
        except (DatabaseError, OSError) as exc:
            log.warning("notifications failed: %s", exc)
        on_lost()
        await asyncio.sleep(RECONNECT_SECONDS)


async def _listen_once(db: Database, handlers: Mapping[str, Handler]) -> None:
    """Until the connection is lost."""
    conn = await db.dedicated()
    lost = asyncio.Event()

    def notified(_conn: Any, _pid: int, channel: str, payload: str) -> None:
        handlers[channel](payload)

    try:
        conn.add_termination_listener(lambda *_: lost.set())
        for channel in handlers:
            await conn.add_listener(channel, notified)
        for handler in handlers.values():
            handler(None)
        await lost.wait()
    finally:
        with suppress(Exception):
            await asyncio.wait_for(conn.close(), 2)
