"""A fake of Meta's Graph API on 127.0.0.1 (real HTTP, in the test process): it records
every request and answers with scripted replies — a success with a new wamid, an error
object (131047), 429 with Retry-After, 500, a slow answer, a closed connection — and
serves media (`GET /{media-id}` gives a URL, that URL gives the bytes)."""

from __future__ import annotations

import contextlib
import gzip
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.local_http import serve_in_thread

TOKEN = "EAAG-test-access-token"


@dataclass(frozen=True)
class Reply:
    status: int = 200
    body: dict[str, Any] | None = None  # None with 200: a success with a new wamid
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang_up: bool = False  # close the connection without answering
    # Called before answering (Meta's webhook of a status racing its answer to the send).
    before: Callable[[], None] | None = None


def error_reply(code: int, title: str, status: int = 400) -> Reply:
    error = {"message": title, "type": "OAuthException", "code": code, "error_user_title": title}
    return Reply(status, {"error": error})


WINDOW_CLOSED = error_reply(131047, "Re-engagement message")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    at: float


class FakeGraph:
    def __init__(self) -> None:
        self.requests: list[Request] = []
        self._script: deque[Reply] = deque()
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self.media: dict[str, tuple[str, bytes]] = {}
        # Media ids the lookup answers with this status instead (a failing Graph API).
        self.media_status: dict[str, int] = {}
        # Media ids whose file is sent gzip-compressed (Content-Encoding: gzip), and media
        # ids whose lookup answers this `url` instead of the file's (a malformed one).
        self.media_gzip: set[str] = set()
        self.media_url: dict[str, str] = {}
        self._released = threading.Event()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _answer(self, status: int, body: bytes, kind: str, headers: dict[str, str]) -> None:
                self.send_response(status)
                self.send_header("content-type", kind)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                fake._record(
                    Request("GET", self.path, dict(self.headers.items()), None, time.monotonic())
                )
                if self.headers.get("authorization") != f"Bearer {TOKEN}":
                    self._answer(401, b'{"error":{"code":190}}', "application/json", {})
                    return
                parts = self.path.strip("/").split("/")
                if parts[-1] in fake.media_status:
                    self._answer(fake.media_status[parts[-1]], b"{}", "application/json", {})
                elif parts[0] == "files" and parts[1] in fake.media:
                    kind, data = fake.media[parts[1]]
                    if parts[1] in fake.media_gzip:
                        self._answer(200, gzip.compress(data), kind, {"content-encoding": "gzip"})
                    else:
                        self._answer(200, data, kind, {})
                elif parts[-1] in fake.media:
                    kind, _ = fake.media[parts[-1]]
                    url = fake.media_url.get(
                        parts[-1], f"http://127.0.0.1:{fake.port}/files/{parts[-1]}"
                    )
                    body = json.dumps({"url": url, "mime_type": kind, "id": parts[-1]}).encode()
                    self._answer(200, body, "application/json", {})
                else:
                    self._answer(404, b'{"error":{"code":100}}', "application/json", {})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                body = json.loads(raw) if raw else None
                got = Request(
                    "POST",
                    self.path,
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                    time.monotonic(),
                )
                reply = fake._record(got)
                if reply.delay:
                    fake._released.wait(reply.delay)
                if reply.before is not None:
                    reply.before()
                if reply.hang_up:
                    self.close_connection = True
                    self.connection.close()
                    return
                answer = reply.body
                if answer is None and reply.status == 200:
                    if body and body.get("status") == "read":
                        answer = {"success": True}
                    else:
                        wamid = f"wamid.fake{next(fake._ids)}"
                        answer = {
                            "messaging_product": "whatsapp",
                            "contacts": [{"input": body.get("to"), "wa_id": body.get("to")}],
                            "messages": [{"id": wamid}],
                        }
                with contextlib.suppress(OSError):
                    self._answer(
                        reply.status,
                        json.dumps(answer or {}).encode(),
                        "application/json",
                        reply.headers,
                    )

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 512
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        self.port: int = self._server.server_address[1]
        self._thread = serve_in_thread(self._server)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v21.0"

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    def _record(self, got: Request) -> Reply:
        with self._lock:
            self.requests.append(got)
            self._lock.notify_all()
            if got.method == "POST" and self._script:
                return self._script.popleft()
        return Reply()

    def sends(self) -> list[Request]:
        """The messages POSTed (read receipts left out)."""
        return [r for r in self.requests if r.method == "POST" and r.body.get("status") != "read"]

    def receipts(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST" and r.body.get("status") == "read"]

    def wait_for(self, count: int, timeout: float = 5.0) -> list[Request]:
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.sends()) < count and time.monotonic() < deadline:
                self._lock.wait(0.05)
        return self.sends()

    def close(self) -> None:
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
