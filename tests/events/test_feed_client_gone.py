"""A long poll of the events feed (D.2) whose client has gone — a closed console tab —
answers at once instead of holding its request, and a graceful shutdown of the server,
for the rest of its `wait`."""

from __future__ import annotations

import time
from typing import Any

from fastapi.testclient import TestClient

from tests.client import Api


def test_a_poll_whose_client_left_ends_at_once(http: TestClient, api: Api) -> None:
    sent: list[dict[str, Any]] = []

    async def poll() -> float:
        asked = False

        async def receive() -> dict[str, Any]:
            nonlocal asked
            if not asked:
                asked = True
                return {"type": "http.request", "body": b"", "more_body": False}
            return {"type": "http.disconnect"}  # the client closed its connection

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "GET",
            "scheme": "http",
            "path": "/api/events",
            "raw_path": b"/api/events",
            "root_path": "",
            "query_string": b"wait=20",
            "headers": [
                (b"host", b"testserver"),
                (b"authorization", f"Bearer {api.account.api_key}".encode()),
                (b"x-workspace-id", api.ws.encode()),
            ],
            "client": ("127.0.0.1", 50000),
            "server": ("testserver", 80),
        }
        started = time.monotonic()
        await http.app(scope, receive, send)
        return time.monotonic() - started

    assert http.portal is not None
    took = http.portal.call(poll)
    assert took < 5, took
    assert sent[0]["status"] == 200
