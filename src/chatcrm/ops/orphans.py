"""A worker of `chatcrm serve --workers N` stops when the process that started it is gone.

The supervisor stops its workers when it is asked to stop, but a supervisor killed outright
(SIGKILL, the out-of-memory killer) cannot: its workers would go on answering, sending
webhooks and messages, and holding the port against the restart. Each worker looks at its
parent once a second and, when it has changed, stops as it would on SIGTERM (requests in
flight are finished)."""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import os
import signal

log = logging.getLogger("chatcrm")

EVERY_SECONDS = 1.0


def _parent() -> int:
    """The pid of the process that started this one. A worker is started by
    multiprocessing, which hands it its parent's pid: `os.getppid()` read now would already
    name init if the parent died while this worker was still starting (seen on a slow
    machine), and the worker would then never stop."""
    started_by = multiprocessing.parent_process()
    return started_by.pid if started_by is not None and started_by.pid else os.getppid()


async def stop_when_orphaned(every: float = EVERY_SECONDS) -> None:
    parent = _parent()
    while True:
        await asyncio.sleep(every)
        if os.getppid() != parent:
            log.warning("the serve process that started this worker is gone; stopping")
            os.kill(os.getpid(), signal.SIGTERM)
            return
