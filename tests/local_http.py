"""The tests' own HTTP servers (receivers, fakes of Meta's and of the service's API),
each served by a thread of the test process."""

from __future__ import annotations

import socketserver
import threading

# How often `serve_forever` looks whether `shutdown()` was asked: its default of 0.5 s
# made every test that stops a server wait up to half a second for nothing (about 400
# tests of the suite). A request is answered at once either way: it wakes the select.
STOP_POLL = 0.02


def serve_in_thread(server: socketserver.BaseServer) -> threading.Thread:
    """Serve `server` on a daemon thread until its `shutdown()`; the thread, started."""
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": STOP_POLL}, daemon=True
    )
    thread.start()
    return thread
