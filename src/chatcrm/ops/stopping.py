"""A process asked to stop ends its long polls at once.

On SIGTERM or SIGINT the server stops taking connections and lets the requests in flight
finish; a feed read waiting for events (`GET /api/events?wait=30`) would hold the stop for
up to its `wait`, past a service manager's patience. The server's own handler is kept and
called: this one first tells the waiting reads to answer what they have (an empty page, as
when the wait runs out), which the client then asks again, of the next node."""

from __future__ import annotations

import asyncio
import signal
import threading
from collections.abc import Callable
from types import FrameType

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def on_stop_signals(stop_waiting: Callable[[], None]) -> None:
    """Call `stop_waiting` (in this event loop) when the process is asked to stop, then
    the handler that was there (uvicorn's). Only where the server itself handles the
    signals: in the main thread, over a handler of its own (not in a test client's
    thread, nor over the default handler)."""
    if threading.current_thread() is not threading.main_thread():
        return
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        previous = signal.getsignal(signum)
        if not callable(previous):
            continue

        def handler(
            sig: int,
            frame: FrameType | None,
            previous: Callable[[int, FrameType | None], object] = previous,
        ) -> None:
            loop.call_soon_threadsafe(stop_waiting)
            previous(sig, frame)

        signal.signal(signum, handler)
