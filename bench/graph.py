"""A fake Graph API for the benchmark: answers every POST at once as Meta answers a send
(`{"messages": [{"id": "wamid…"}]}`) and keeps when the first and the last came;
`GET /stats` tells `{count, first, last}` (epoch seconds). Run with one worker."""

import time
from typing import Any

import orjson

_stats: dict[str, Any] = {"count": 0, "first": None, "last": None}


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    if scope["method"] == "POST":
        more = True
        while more:
            message = await receive()
            more = message.get("more_body", False)
        now = time.time()
        _stats["count"] += 1
        _stats["first"] = _stats["first"] or now
        _stats["last"] = now
        body = orjson.dumps(
            {"messaging_product": "whatsapp", "messages": [{"id": f"wamid.b{_stats['count']}"}]}
        )
    elif scope["path"] == "/reset":
        _stats.update(count=0, first=None, last=None)
        body = b"{}"
    else:
        body = orjson.dumps(_stats)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
