"""Authentication and rate limiting at the door, before routing.

The key is verified here once (cached), so the rate limit applies to real keys only and a
stranger cannot drain someone else's bucket; the result is left in the request state for
the routes (api/call.py), which answer 401 only where a key is needed.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chatcrm.api.errors import render
from chatcrm.api.ratelimit import Limiter
from chatcrm.api.state import STATE_AUTH_ERROR, STATE_CONNECTION, STATE_PRINCIPAL
from chatcrm.auth.service import authenticate
from chatcrm.config import Settings
from chatcrm.core.errors import RateLimited, ServiceError


def _authorization(scope: Scope) -> str | None:
    for name, value in scope["headers"]:
        if name == b"authorization":
            return value.decode("latin-1")
    return None


class GateMiddleware:
    def __init__(self, app: ASGIApp, *, settings: Settings, limiter: Limiter) -> None:
        self.app = app
        self.settings = settings
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Only the API takes keys: a probe of /health or /ready that happens to send one
        # must not be rate limited or fail because the key store is unreachable.
        api = scope["type"] == "http" and scope["path"].startswith("/api/")
        header = _authorization(scope) if api else None
        if header is None:
            await self.app(scope, receive, send)
            return
        state = scope["app"].state
        request_state = scope.setdefault("state", {})
        conn = request_state[STATE_CONNECTION]
        try:
            principal = await authenticate(conn, state.auth_cache, header)
        except ServiceError as exc:
            request_state[STATE_AUTH_ERROR] = exc
            await self.app(scope, receive, send)
            return
        request_state[STATE_PRINCIPAL] = principal
        rate = self.settings.rate_limit if principal.rate_limit is None else principal.rate_limit
        burst = self.settings.default_burst if principal.rate_limit is None else 2 * rate
        decision = await self.limiter.take(conn, principal.key_id, rate=rate, burst=burst)
        if decision is None:
            await self.app(scope, receive, send)
            return
        headers = decision.headers()
        if not decision.allowed:
            refused = render(
                RateLimited(
                    f"Too many requests for this API key: the limit is {rate:g} per second "
                    f"(bursts of {burst:g}). Retry after {decision.retry_after} s."
                )
            )
            refused.raw_headers.extend(headers)
            await refused(scope, receive, send)
            return

        async def send_with_limits(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *headers]
            await send(message)

        await self.app(scope, receive, send_with_limits)
