"""Authentication and rate limiting at the door, before routing.

The key is verified here once (cached), so the rate limit applies to real keys only and a
stranger cannot drain someone else's bucket; the result is left in the request state for
the routes (api/call.py), which answer 401 only where a key is needed.
"""

from __future__ import annotations

import secrets
from http.cookies import CookieError, SimpleCookie
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from chatcrm.api import headers
from chatcrm.api.errors import render
from chatcrm.api.ratelimit import Limiter
from chatcrm.api.state import (
    STATE_ANSWER_HEADERS,
    STATE_AUTH_ERROR,
    STATE_CONNECTION,
    STATE_PRINCIPAL,
    STATE_SESSION,
)
from chatcrm.auth.service import Principal, authenticate
from chatcrm.config import Settings
from chatcrm.core.errors import RateLimited, ServiceError, Unauthorized
from chatcrm.db.database import Connection
from chatcrm.people import sessions
from chatcrm.people.errors import CsrfFailed

# Methods that may change state: a cookie-authenticated one needs the CSRF token (J.3).
_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def _header(scope: Scope, wanted: bytes) -> str | None:
    for name, value in scope["headers"]:
        if name == wanted:
            return value.decode("latin-1")
    return None


def _authorization(scope: Scope) -> str | None:
    return headers.one(scope, b"authorization")


def _session_token(scope: Scope) -> str | None:
    raw = _header(scope, b"cookie")
    if not raw:
        return None
    try:
        morsel = SimpleCookie(raw).get(sessions.COOKIE)
    except CookieError:
        return None
    return morsel.value if morsel is not None and morsel.value else None


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


WRONG_CSRF = (
    "The X-CSRF-Token is not the session's: a sign-in since (in another tab, say) replaced "
    "the session the cookie holds; GET /api/session gives its token."
)


def check_csrf(scope: Scope, settings: Settings, expected: str) -> None:
    """A cookie-authenticated change carries the session's token in X-CSRF-Token and, when
    the browser sends Origin, comes from this server's own origin (CSRF Cheat Sheet)."""
    token = _header(scope, sessions.CSRF_HEADER.encode())
    if token is None:
        raise CsrfFailed("A change made with the session cookie needs the header X-CSRF-Token.")
    if not secrets.compare_digest(token.encode(), expected.encode()):
        # Most often the cookie now holds another session: a sign-in since, in another tab.
        raise CsrfFailed(WRONG_CSRF)
    origin = _header(scope, b"origin")
    if origin is None:
        return
    own = {_origin(settings.base_url)}
    host = _header(scope, b"host")
    if host:
        own.add(f"{scope.get('scheme', 'http')}://{host}".lower())
    if origin.lower().rstrip("/") not in own:
        raise CsrfFailed("A change made with the session cookie must come from this server.")


# Where the session the cookie holds is read: it answers whoever holds it, token or not.
_SESSION_PATH = "/api/session"


def check_read_token(scope: Scope, expected: str) -> None:
    """A cookie-authenticated read needs no token (J.3), but one that carries it names the
    session it was sent for (the console's reads do): another one's token means the
    cookie changed hands since (a sign-in in another tab), and the answer would be that
    session's, another person's perhaps. Refused as a change would be."""
    token = _header(scope, sessions.CSRF_HEADER.encode())
    if not token or scope["path"] == _SESSION_PATH:  # an empty header carries no token
        return
    if not secrets.compare_digest(token.encode(), expected.encode()):
        raise CsrfFailed(WRONG_CSRF)


async def authenticate_again(scope: Scope, conn: Connection) -> Principal:
    """Who the request's credentials stand for now: an answer given after a wait (a long
    poll) must not reach a caller revoked, disabled or signed out meanwhile."""
    state = scope["app"].state
    header = _authorization(scope)
    if header is not None:
        return await authenticate(conn, state.auth_cache, header)
    cookie = _session_token(scope)
    if cookie is None:  # let in by neither: nothing to stand for
        raise Unauthorized("Missing API key: send the header 'Authorization: Bearer <api key>'.")
    return (await sessions.authenticate(conn, cookie, state.settings)).principal


class GateMiddleware:
    def __init__(self, app: ASGIApp, *, settings: Settings, limiter: Limiter) -> None:
        self.app = app
        self.settings = settings
        self.limiter = limiter

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # Only the API takes keys: a probe of /health or /ready that happens to send one
        # must not be rate limited or fail because the key store is unreachable.
        api = scope["type"] == "http" and scope["path"].startswith("/api/")
        try:
            header = _authorization(scope) if api else None
        except ServiceError as exc:  # two different credentials: refused as a bad one
            scope.setdefault("state", {})[STATE_AUTH_ERROR] = exc
            await self.app(scope, receive, send)
            return
        # Without an Authorization header, the console's session cookie (J.3).
        cookie = _session_token(scope) if api and header is None else None
        if header is None and cookie is None:
            await self.app(scope, receive, send)
            return
        state = scope["app"].state
        request_state = scope.setdefault("state", {})
        conn = request_state[STATE_CONNECTION]
        try:
            if header is not None:
                principal = await authenticate(conn, state.auth_cache, header)
            else:
                assert cookie is not None
                current = await sessions.authenticate(conn, cookie, self.settings)
                if scope["method"] in _CHANGING:
                    check_csrf(scope, self.settings, current.csrf_token)
                else:
                    check_read_token(scope, current.csrf_token)
                request_state[STATE_SESSION] = current
                principal = current.principal
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

        # Added to the answer by the request context (api/middleware.py), with its id.
        request_state[STATE_ANSWER_HEADERS] = headers
        await self.app(scope, receive, send)
