"""A dispatcher and a channel sender running as background tasks, on a database pool of
their own: inside every `chatcrm serve` worker (app lifespan) and in `chatcrm dispatch`."""

from __future__ import annotations

import asyncio
from contextlib import suppress

from chatcrm.channels.sending import Sender
from chatcrm.config import Settings
from chatcrm.db.database import Database
from chatcrm.webhooks.dispatcher import SHUTDOWN_GRACE_SECONDS, Dispatcher

# A small pool of its own: dispatching never waits for, or takes, a request's connection,
# and the service's pool figures count requests only. Claims and outcomes are short
# transactions; two connections keep a claim from waiting behind a burst of outcomes
# (docs/operations.md 3.3 counts them).
POOL_SIZE = 1
POOL_OVERFLOW = 1


class RunningDispatcher:
    def __init__(self, settings: Settings) -> None:
        pool = {"db_pool_size": POOL_SIZE, "db_max_overflow": POOL_OVERFLOW}
        self.db = Database(settings.model_copy(update=pool))
        # Raises ScheduleError on a malformed CHATCRM_WEBHOOK_RETRY_SCHEDULE.
        self.dispatcher = Dispatcher(self.db, settings)
        # Raises ScheduleError on a malformed CHATCRM_CHANNEL_RETRY_SCHEDULE.
        self.sender = Sender(self.db, settings)
        self._stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.sender_task: asyncio.Task[None] | None = None

    def wake(self) -> None:
        """Events were published: deliveries or messages may be waiting."""
        self.dispatcher.wake()
        self.sender.wake()

    def start(self) -> None:
        self.task = asyncio.create_task(self.dispatcher.run(self._stop), name="webhook dispatch")
        self.sender_task = asyncio.create_task(self.sender.run(self._stop), name="channel sender")

    async def stop(self) -> None:
        """Stop claiming, give attempts under way a few seconds, release the pool."""
        self._stop.set()
        tasks = {t for t in (self.task, self.sender_task) if t is not None}
        if tasks:
            # run() cuts attempts short after the grace period; this bound is a safety net.
            _, late = await asyncio.wait(tasks, timeout=3 * SHUTDOWN_GRACE_SECONDS)
            for task in late:
                task.cancel()
                with suppress(asyncio.CancelledError, Exception):
                    await task
        await self.db.dispose()
