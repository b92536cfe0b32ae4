"""Running a dispatcher's loop in the background of a test, and waiting on a delivery."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from chatcrm.db.database import Database
from chatcrm.webhooks.dispatcher import Dispatcher
from tests.webhooks import rows


@asynccontextmanager
async def running(*dispatchers: Dispatcher) -> AsyncIterator[asyncio.Event]:
    """`Dispatcher.run` of each until the block ends; yields the stop event."""
    stop = asyncio.Event()
    tasks = [asyncio.create_task(d.run(stop)) for d in dispatchers]
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout=30)


async def until(
    db: Database, endpoint: rows.Endpoint, event_id: str, status: str, within: float = 15.0
) -> dict[str, Any]:
    """The delivery's row once it has `status`."""
    deadline = time.monotonic() + within
    while True:
        row = await rows.delivery(db, endpoint, event_id)
        if row["status"] == status:
            return row
        assert time.monotonic() < deadline, f"still {row['status']}: {row}"
        await asyncio.sleep(0.02)
