"""The ceiling: the smallest possible ASGI app, served by the same server as chatcrm."""

from typing import Any

_START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"text/plain"), (b"content-length", b"5")],
}
_BODY = {"type": "http.response.body", "body": b"hello"}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http":
        await send(_START)
        await send(_BODY)
