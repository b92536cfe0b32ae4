"""A webhook receiver for the benchmark: answers every POST 200 at once and counts them
(but a POST to `/hang`, never answered); `GET /count` tells how many it has received. Run
with one worker so the count is whole."""

import asyncio
from typing import Any

_received = 0
_OK = {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"0")]}
_EMPTY = {"type": "http.response.body", "body": b""}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    global _received
    if scope["type"] != "http":
        return
    if scope["method"] == "POST":
        more = True
        while more:
            message = await receive()
            more = message.get("more_body", False)
        if scope["path"] == "/hang":  # a receiver that never answers: not counted
            await asyncio.sleep(3600)
            return
        _received += 1
        await send(_OK)
        await send(_EMPTY)
        return
    body = str(_received).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})
