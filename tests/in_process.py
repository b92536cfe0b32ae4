"""The app in-process, for the shared `http` fixture: Starlette's TestClient with one
thread hop a request.

Starlette's own transport streams each request and answer between the test's thread and
the app's event loop: about eight calls through the loop's portal a request, each a
wake-up of the other thread (2.5 ms a GET on SQLite, three times what the app spends).
This transport hands the whole request to the loop in one call, runs the app to the end
of its answer there, and gets the answer back whole: the same ASGI messages reach the
app, and the same status, headers and body come back.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote

import anyio
import httpx
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Message


class OneHopTransport(httpx.BaseTransport):
    def __init__(self, client: TestClient, app: ASGIApp) -> None:
        self.client = client
        self.app = app

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        headers = [
            (key.lower().encode(), value.encode()) for key, value in request.headers.multi_items()
        ]
        if "host" not in request.headers:
            headers.insert(0, (b"host", url.netloc))
        scope: dict[str, Any] = {
            "type": "http",
            "http_version": "1.1",
            "method": request.method,
            "path": unquote(url.path),
            "raw_path": url.raw_path.split(b"?", 1)[0],
            "root_path": "",
            "scheme": url.scheme,
            "query_string": url.query,
            "headers": headers,
            "client": ("testclient", 50000),
            "server": [url.host, url.port or {"https": 443}.get(url.scheme, 80)],
            "extensions": {},
            "state": self.client.app_state.copy(),
        }
        body = request.read()
        with self.client._portal_factory() as portal:
            status, response_headers, chunks = portal.call(self._run, scope, body)
        content = b"".join(chunks) if request.method != "HEAD" else b""
        return httpx.Response(status, headers=response_headers, content=content, request=request)

    async def _run(
        self, scope: dict[str, Any], body: bytes
    ) -> tuple[int, list[tuple[bytes, bytes]], list[bytes]]:
        answered = anyio.Event()
        read = False
        status = 500
        headers: list[tuple[bytes, bytes]] = []
        chunks: list[bytes] = []

        async def receive() -> Message:
            nonlocal read
            if not read:
                read = True
                return {"type": "http.request", "body": body, "more_body": False}
            await answered.wait()  # as a client that stays until its answer is complete
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            nonlocal status, headers
            if message["type"] == "http.response.start":
                status, headers = message["status"], list(message.get("headers", []))
            elif message["type"] == "http.response.body":
                chunks.append(bytes(message.get("body", b"")))
                if not message.get("more_body", False):
                    answered.set()

        try:
            await self.app(scope, receive, send)
        finally:
            answered.set()
        return status, headers, chunks


class InProcessClient(TestClient):
    """TestClient (its lifespan, portal and cookies) on the one-hop transport."""

    def __init__(self, app: ASGIApp, **options: Any) -> None:
        super().__init__(app, **options)
        # httpx.Client keeps its transport here; the TestClient's own one is replaced.
        self._transport = OneHopTransport(self, self.app)
