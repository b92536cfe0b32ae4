"""A worker of `chatcrm serve --workers N` stops when the process that started it is gone.

The supervisor stops its workers when it is asked to stop, but a supervisor killed outright
(SIGKILL, the out-of-memory killer) cannot: its workers would go on answering, sending
webhooks and messages, and holding the port against the restart. Each worker looks at its
parent once a second and, when it has changed, stops as it would on SIGTERM (requests in
flight are finished)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal

log = logging.getLogger("chatcrm")

EVERY_SECONDS = 1.0


async def stop_when_orphaned(every: float = EVERY_SECONDS) -> None:
    parent = os.getppid()
    while True:
        await asyncio.sleep(every)
        if os.getppid() != parent:
            log.warning("the serve process that started this worker is gone; stopping")
            os.kill(os.getpid(), signal.SIGTERM)
            return
