"""Pure ASGI middleware around every request: request id, body-size limit, last-resort errors.

Pure ASGI (not BaseHTTPMiddleware) so it adds no task or buffering per request.
"""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chatcrm.api.errors import PayloadTooLarge, ServiceUnavailable, internal_error, is_unavailable

log = logging.getLogger("chatcrm.request")

_CLIENT_REQUEST_ID = re.compile(r"^[\x21-\x7e]{1,200}$")


def _request_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            text = value.decode("latin-1")
            if _CLIENT_REQUEST_ID.match(text):
                return text
            break
    return uuid.uuid4().hex


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class RequestContextMiddleware:
    def __init__(self, app: ASGIApp, *, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _request_id(scope)
        scope.setdefault("state", {})["request_id"] = request_id
        id_header = (b"x-request-id", request_id.encode("latin-1"))
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = [*message.get("headers", []), id_header]
            await send(message)

        limit = self.max_body_bytes
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await PayloadTooLarge(limit).response()(scope, receive, send_with_id)
            return

        received = 0

        async def receive_limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise PayloadTooLarge(limit)
            return message

        try:
            await self.app(scope, receive_limited, send_with_id)
        except Exception as exc:
            if started:
                raise
            response: Any
            if is_unavailable(exc):
                log.warning("database unavailable: %s", type(exc).__name__)
                response = ServiceUnavailable().response()
            else:
                log.exception("unhandled error", extra={"request_id": request_id})
                response = internal_error()
            await response(scope, receive, send_with_id)
