"""HTTP servers in the test process for the client's failure paths: one that answers from a
script (statuses, Retry-After, dropped connections), and a proxy in front of the real
service that can drop the client's connection after the service has answered."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from tests.local_http import serve_in_thread

DROP = "drop"  # close the connection without answering


@dataclass(frozen=True)
class Answer:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    data: Any = None
    error_code: str | None = None
    message: str = "ok"
    raw: bytes | None = None  # a body that is no envelope (a proxy's error page)

    def body(self) -> bytes:
        if self.raw is not None:
            return self.raw
        ok = self.status < 400
        return json.dumps(
            {
                "success": ok,
                "code": self.status,
                "errorCode": None if ok else (self.error_code or "ERROR"),
                "message": self.message,
                "data": self.data,
            }
        ).encode()


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    at: float  # time.monotonic()


def _drop(handler: BaseHTTPRequestHandler) -> None:
    """Close the client's connection at once, with nothing written."""
    handler.close_connection = True
    handler.connection.shutdown(socket.SHUT_RDWR)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 64


class _Base:
    def __init__(self) -> None:
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                headers = {k.lower(): v for k, v in self.headers.items()}
                seen = Seen(self.command, self.path, headers, body, time.monotonic())
                with owner._lock:
                    owner.seen.append(seen)
                owner.handle(self, seen)

            do_GET = do_POST = do_PUT = do_DELETE = _any

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = _Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = serve_in_thread(self._server)

    def handle(self, handler: BaseHTTPRequestHandler, seen: Seen) -> None:
        raise NotImplementedError

    @staticmethod
    def reply(
        handler: BaseHTTPRequestHandler, status: int, headers: dict[str, str], body: bytes
    ) -> None:
        handler.send_response(status)
        for name, value in headers.items():
            handler.send_header(name, value)
        handler.send_header("content-length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class ScriptedServer(_Base):
    """Answers each request with the next answer of its script (then 200 with no data)."""

    def __init__(self) -> None:
        self._script: deque[Answer | str] = deque()
        super().__init__()

    def script(self, *answers: Answer | str) -> None:
        self._script = deque(answers)
        self.seen.clear()

    def handle(self, handler: BaseHTTPRequestHandler, seen: Seen) -> None:
        with self._lock:
            answer = self._script.popleft() if self._script else Answer()
        if answer == DROP:
            _drop(handler)
            return
        assert isinstance(answer, Answer)
        headers = {"content-type": "application/json", "x-request-id": "req-1", **answer.headers}
        self.reply(handler, answer.status, headers, answer.body())


class DroppingProxy(_Base):
    """Forwards every request to `target`; the first `drops` requests of `method` to `path`
    (its query aside) are forwarded and answered by the service, and then the client's
    connection is closed instead of passing the answer on (the answer is kept in
    `dropped`)."""

    def __init__(self, target: str, path: str, drops: int = 1, method: str = "POST") -> None:
        self.target = target
        self.path = path
        self.drops = drops
        self.method = method
        self.dropped: list[httpx.Response] = []
        super().__init__()

    def handle(self, handler: BaseHTTPRequestHandler, seen: Seen) -> None:
        skip = {"host", "content-length", "connection", "accept-encoding"}
        response = httpx.request(
            seen.method,
            self.target + seen.path,
            headers={k: v for k, v in seen.headers.items() if k not in skip},
            content=seen.body,
            timeout=30,
        )
        with self._lock:
            at = seen.path.split("?")[0]
            drop = seen.method == self.method and at == self.path and self.drops > 0
            if drop:
                self.drops -= 1
                self.dropped.append(response)
        if drop:
            _drop(handler)
            return
        headers = {
            k: v
            for k, v in response.headers.items()
            if k.lower() not in ("content-length", "content-encoding", "transfer-encoding")
        }
        self.reply(handler, response.status_code, headers, response.content)
