"""PostgreSQL notifications between processes: a publisher's batch wakes the long polls
and dispatchers of every other process at once (SQLite has none: they poll)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextlib import suppress
from typing import Any

from chatcrm.db.database import Database
from chatcrm.db.errors import DatabaseError
from chatcrm.events.publisher import NOTIFY_CHANNEL

log = logging.getLogger("chatcrm.events")

RECONNECT_SECONDS = 2.0


async def listen_forever(db: Database, on_notify: Callable[[], None]) -> None:
    """LISTEN on the events channel until cancelled, reconnecting when the connection is
    lost (after which `on_notify` is called once: a notification may have been missed)."""
    while True:
        try:
            await _listen_once(db, on_notify)
            log.warning("lost the events notification connection; reconnecting")
        except (DatabaseError, OSError) as exc:
            log.warning("events notifications failed: %s", exc)
        await asyncio.sleep(RECONNECT_SECONDS)


async def _listen_once(db: Database, on_notify: Callable[[], None]) -> None:
    """Until the connection is lost."""
    conn = await db.dedicated()
    lost = asyncio.Event()

    def notified(*_: Any) -> None:
        on_notify()

    try:
        conn.add_termination_listener(lambda *_: lost.set())
        await conn.add_listener(NOTIFY_CHANNEL, notified)
        on_notify()
        await lost.wait()
    finally:
        with suppress(Exception):
            await asyncio.wait_for(conn.close(), 2)
