"""Pure ASGI middleware around every request: request id, body-size limit, last-resort errors.

Pure ASGI (not BaseHTTPMiddleware) so it adds no task or buffering per request.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any

from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chatcrm.api.errors import internal_error, is_unavailable, render, unavailable
from chatcrm.api.routing import ApiRoute, Dispatch, api_routes
from chatcrm.api.state import STATE_ANSWER_HEADERS, STATE_CONNECTION
from chatcrm.core.errors import PayloadTooLarge, ServiceError
from chatcrm.db.database import Connection
from chatcrm.db.errors import Unavailable
from chatcrm.logs import REQUEST_LOGGER, log_fields

log = logging.getLogger(REQUEST_LOGGER)

# A client's id is echoed (contract 0) when it is printable ASCII, spaces included, and no
# longer than this: it goes into every log line of the request.
_CLIENT_REQUEST_ID = re.compile(r"^[\x20-\x7e]{1,1024}$")


def _request_id(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == b"x-request-id":
            text = value.decode("latin-1").strip()
            if _CLIENT_REQUEST_ID.fullmatch(text):
                return text
            break
    return os.urandom(16).hex()


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"


class RequestContextMiddleware:
    """Request id, body limit, last-resort errors, and per-request metrics and log line."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        access_log: bool = True,
        on_done: Callable[[Scope, int, float], None] | None = None,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.access_log = access_log
        self.on_done = on_done
        self._dispatch: Dispatch | None = None

    def _match(self, scope: Scope) -> None:
        """Find the request's route first of all, so that every answer, also one given
        before routing (429, an idempotent replay), is counted and logged by its route.
        The app's shortcut (app.py) has found it already."""
        if "route" in scope:
            return
        if self._dispatch is None:
            # Derived from the app's own routes, once they are all in place.
            self._dispatch = Dispatch(api_routes(scope["app"].router.routes))
        found = self._dispatch.match(scope["method"], scope["path"])
        if found is not None:
            scope["route"], scope["path_params"] = found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500
        try:
            status = await self._handle(scope, receive, send)
        finally:
            elapsed = time.perf_counter() - start
            if self.on_done is not None:
                self.on_done(scope, status, elapsed)
            if self.access_log:
                principal = scope.get("state", {}).get("principal")
                log_fields(
                    log,
                    logging.INFO,
                    "request",
                    {
                        "request_id": scope["state"]["request_id"],
                        "method": scope["method"],
                        "path": scope["path"],
                        "route": _route(scope),
                        "status": status,
                        "duration_ms": round(elapsed * 1000, 3),
                        "key_id": getattr(principal, "key_id", None),
                    },
                )

    async def _handle(self, scope: Scope, receive: Receive, send: Send) -> int:
        request_id = _request_id(scope)
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        # The request's one database connection: taken from the pool at its first
        # statement, committed (or rolled back) once, before the answer leaves.
        conn: Connection = scope["app"].state.db.connection()
        state[STATE_CONNECTION] = conn
        self._match(scope)
        id_header = (b"x-request-id", request_id.encode("latin-1"))
        started = False
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal started, status
            if message["type"] == "http.response.start":
                # A failed commit raises here, before anything is sent: the client then
                # hears the failure (503 or 500), never a 200 for a change that was lost.
                await conn.finish(commit=message["status"] == 200 or conn.commit_on_error)
                started = True
                status = message["status"]
                extra = state.get(STATE_ANSWER_HEADERS, ())
                message["headers"] = [*message.get("headers", []), *extra, id_header]
            await send(message)

        limit = self.max_body_bytes
        declared = _content_length(scope)
        received = 0

        async def receive_limited() -> Message:
            # Checked when the body is read, not before: routing, the API key and the rate
            # limit come first, so a 413 is answered like any other error of the route.
            nonlocal received
            if declared is not None and declared > limit:
                raise PayloadTooLarge(limit)
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise PayloadTooLarge(limit)
            return message

        try:
            await self.app(scope, receive_limited, send_with_id)
        except Exception as exc:
            await conn.finish(commit=False)
            if started:
                raise
            response: Any
            if isinstance(exc, ClientDisconnect):
                # The client hung up before its body arrived: nothing was done, and nobody
                # is there to answer. Not a server error (a load generator stopping, a
                # browser tab closed); the access line shows it as 499, as nginx does.
                log.info("client disconnected before its request body arrived")
                return 499
            if isinstance(exc, ServiceError):  # raised by an outer middleware (auth, body size)
                response = render(exc)
            elif is_unavailable(exc):
                # The driver's error names the cause (ConnectionRefusedError, …), not the
                # Unavailable the database layer wrapped it in.
                cause = exc.__cause__ if isinstance(exc, Unavailable) else None
                log.warning("database unavailable: %s", type(cause or exc).__name__)
                response = render(unavailable(exc))
            else:
                log.exception("unhandled error", extra={"request_id": request_id})
                response = internal_error()
            await response(scope, receive, send_with_id)
        finally:
            # Never keep a pooled connection past the request (a cancelled or broken one).
            await conn.finish(commit=False)
        return status


class DirectDispatch:
    """Innermost: a request whose route the table matched runs it directly, without the
    framework's router and dependency machinery (about 100 µs of a ~400 µs read, measured:
    docs/performance.md); anything else (docs, 404, 405) goes to the framework."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route = scope.get("route")
        if isinstance(route, ApiRoute):
            await route.handle_call(scope, receive, send)
        else:
            await self.app(scope, receive, send)
