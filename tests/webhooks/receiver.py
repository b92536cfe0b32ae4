"""A real webhook receiver on 127.0.0.1, in the test process: it records every request and
answers with scripted statuses, delays and headers."""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.local_http import serve_in_thread


@dataclass(frozen=True)
class Reply:
    status: int = 200
    delay: float = 0.0  # seconds before answering
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    at: float  # time.monotonic() when the request was read


class Receiver:
    def __init__(self) -> None:
        self.received: list[Received] = []
        self._scripts: dict[str, deque[Reply]] = {}
        self._defaults: dict[str, Reply] = {}
        self._changed = threading.Condition()
        self._released = threading.Event()  # cuts every delay short (closing)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                got = Received(
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    time.monotonic(),
                )
                reply = receiver._record(got)
                if reply.delay:
                    receiver._released.wait(reply.delay)
                try:
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)
                except OSError:  # the dispatcher gave up waiting (a timeout test)
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            # The default backlog of 5 drops connections when dispatchers send many at
            # once; the dropped ones time out and the test would blame the dispatcher.
            request_queue_size = 256

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = serve_in_thread(self._server)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def script(self, path: str, *replies: Reply, then: Reply | None = None) -> None:
        """Answer the next requests to `path` with `replies`, then with `then` (200)."""
        with self._changed:
            self._scripts[path] = deque(replies)
            self._defaults[path] = then or Reply()

    def _record(self, got: Received) -> Reply:
        with self._changed:
            self.received.append(got)
            self._changed.notify_all()
            queue = self._scripts.get(got.path)
            if queue:
                return queue.popleft()
            return self._defaults.get(got.path, Reply())

    def requests(self, path: str | None = None) -> list[Received]:
        with self._changed:
            return [r for r in self.received if path is None or r.path == path]

    def wait_for(
        self, count: int, path: str | None = None, timeout: float = 15.0
    ) -> list[Received]:
        """The first `count` requests (to `path`), waiting up to `timeout` seconds."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                got = [r for r in self.received if path is None or r.path == path]
                if len(got) >= count:
                    return got
                left = deadline - time.monotonic()
                assert left > 0, f"{len(got)} of {count} requests to {path or 'any path'}"
                self._changed.wait(left)

    async def arrived(
        self, count: int, path: str | None = None, within: float = 15.0
    ) -> list[Received]:
        """`wait_for` for tests running the dispatcher on their own event loop."""
        deadline = time.monotonic() + within
        while True:
            got = self.requests(path)
            if len(got) >= count:
                return got
            assert time.monotonic() < deadline, f"{len(got)} of {count} requests to {path}"
            await asyncio.sleep(0.005)

    def release(self) -> None:
        """Answer every delayed reply now, and the later ones without their delay."""
        self._released.set()

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
