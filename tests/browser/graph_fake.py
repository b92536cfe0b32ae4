"""A tiny fake of Meta's Graph API on 127.0.0.1 for the console's conversation tests: it
takes sends (`POST /{phoneNumberId}/messages`) and answers each with a new wamid, or with
the answer a test scripted; it gives media (`GET /{mediaId}`, then the URL it names)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.local_http import serve_in_thread

# A media's bytes: a PNG's signature, then anything (the console never looks inside).
PNG = b"\x89PNG\r\n\x1a\n" + b"not really an image"


@dataclass
class Sent:
    path: str
    authorization: str
    body: dict[str, Any]


@dataclass
class Graph:
    base_url: str = ""
    sent: list[Sent] = field(default_factory=list)
    scripted: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    media: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer_next(self, status: int, body: dict[str, Any]) -> None:
        """The next send is answered so (then sends succeed again)."""
        with self.lock:
            self.scripted.append((status, body))

    def texts(self) -> list[str]:
        with self.lock:
            return [s.body.get("text", {}).get("body", "") for s in self.sent]

    def _send(self, sent: Sent) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.sent.append(sent)
            if self.scripted:
                return self.scripted.pop(0)
            return 200, {
                "messaging_product": "whatsapp",
                "contacts": [{"input": sent.body.get("to"), "wa_id": sent.body.get("to")}],
                "messages": [{"id": f"wamid.FAKE{len(self.sent)}"}],
            }


def _handler(graph: Graph) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: bytes, kind: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if not self.path.endswith("/messages"):
                return self._answer(404, b"{}")
            body = json.loads(raw or b"{}")
            if body.get("status") == "read":  # a read receipt
                return self._answer(200, b'{"success": true}')
            sent = Sent(self.path, self.headers.get("Authorization", ""), body)
            status, answer = graph._send(sent)
            self._answer(status, json.dumps(answer).encode())

        def do_GET(self) -> None:
            name = self.path.rsplit("/", 1)[-1]
            if self.path.startswith("/files/") and name in graph.media:
                kind, data = graph.media[name]
                return self._answer(200, data, kind)
            if name in graph.media:
                kind, _ = graph.media[name]
                info = {"url": f"{graph.base_url}/files/{name}", "mime_type": kind, "id": name}
                return self._answer(200, json.dumps(info).encode())
            self._answer(404, b'{"error": {"code": 100, "message": "Unknown media"}}')

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Handler


@contextmanager
def fake_graph() -> Iterator[Graph]:
    graph = Graph()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(graph))
    graph.base_url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = serve_in_thread(httpd)
    try:
        yield graph
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
