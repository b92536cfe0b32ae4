"""One attempt over HTTP (contract D.4): the address check, the signed POST, and what came
of it, as an `Outcome` with a short `last_error` a person can act on."""

from __future__ import annotations

import asyncio
import ssl
from datetime import UTC, datetime

import httpx
from httpx_aiohttp import AiohttpTransport

from chatcrm import __version__
from chatcrm.webhooks.addresses import check_at_send
from chatcrm.webhooks.claims import Claimed
from chatcrm.webhooks.outcomes import Outcome
from chatcrm.webhooks.schedule import RETRY_AFTER_STATUSES, parse_retry_after
from chatcrm.webhooks.signing import signature_header, signing_secrets

USER_AGENT = f"chatcrm-webhooks/{__version__}"
# Read at most this much of an answer: enough for the connection to be reused after a
# short body, never a large one into memory (the body itself is not used).
_MAX_ANSWER_BYTES = 64 * 1024
_MAX_ERROR_CHARS = 300


def new_client(*, timeout: float, max_connections: int) -> httpx.AsyncClient:
    """The one HTTP client of a dispatcher, shared by its sends (connections are reused).

    httpx, over aiohttp's HTTP/1.1 implementation (httpx-aiohttp, by an httpx maintainer):
    httpx's own pure-Python transport spends about 2 ms of CPU per request on this
    machine, so one process sends at most ~500/s; over aiohttp the same client sends
    ~3,800/s (docs/performance.md). The httpx API, timeouts and errors stay the same.
    """
    # No proxy, .netrc or certificates from the environment (aiohttp's trust_env is off
    # too): the address checked is the address connected to.
    transport = AiohttpTransport(
        trust_env=False,
        # Idle connections are closed before common servers close them (uvicorn after 5 s,
        # nginx 75 s): reusing one the receiver is closing fails the attempt.
        limits=httpx.Limits(max_connections=max_connections, keepalive_expiry=4),
    )
    return httpx.AsyncClient(
        transport=transport,
        timeout=httpx.Timeout(timeout),
        # A 3xx is a failed attempt: following it would also bypass the address check.
        follow_redirects=False,
        trust_env=False,
        headers={"user-agent": USER_AGENT},
    )


async def attempt(
    client: httpx.AsyncClient, c: Claimed, *, deadline: float, allow_private: bool
) -> Outcome:
    """Make one attempt within `deadline` seconds (CHATCRM_WEBHOOK_TIMEOUT); never raises
    for what the receiver or the network did."""
    status: int | None = None
    retry_after: float | None = None
    try:
        # The whole attempt, name resolution included, has `deadline` seconds: httpx's own
        # timeouts bound each read, not a receiver that answers one byte at a time.
        async with asyncio.timeout(deadline):
            refused = await check_at_send(c.url, allow_private=allow_private)
            if refused is not None:
                return Outcome(None, f"address refused: {refused}")
            now = datetime.now(UTC)
            timestamp = int(now.timestamp())
            secrets = signing_secrets(
                c.secret, c.previous_secret, c.previous_secret_expires_at, now
            )
            headers = {
                "content-type": "application/json",
                "webhook-id": c.event_id,
                "webhook-timestamp": str(timestamp),
                "webhook-signature": signature_header(
                    secrets, msg_id=c.event_id, timestamp=timestamp, body=c.body
                ),
            }
            async with client.stream("POST", c.url, content=c.body, headers=headers) as answer:
                status = answer.status_code
                if status in RETRY_AFTER_STATUSES:
                    retry_after = parse_retry_after(answer.headers.get("retry-after"), now)
                await _read_some(answer)
    except TimeoutError:
        if status is None:
            return Outcome(None, f"timeout after {deadline:g} s")
        # The status came in time; only the rest of the answer was slow.
    except httpx.TimeoutException as exc:
        if status is None:
            # The aiohttp transport reports some connection failures (refused, closed) as
            # connect timeouts: what actually happened is in the chain of causes.
            if _timed_out(exc):
                return Outcome(None, f"timeout after {deadline:g} s")
            return Outcome(None, describe(exc))
    except (httpx.HTTPError, httpx.InvalidURL, OSError, ssl.SSLError) as exc:
        if status is None:
            return Outcome(None, describe(exc))
    if status is not None and 200 <= status < 300:
        return Outcome(status)
    assert status is not None
    return Outcome(status, _status_error(status), retry_after)


async def _read_some(answer: httpx.Response) -> None:
    read = 0
    async for chunk in answer.aiter_raw():
        read += len(chunk)
        if read > _MAX_ANSWER_BYTES:
            break


def _status_error(status: int) -> str:
    if 300 <= status < 400:
        return f"HTTP {status} (redirects are not followed)"
    if status == 410:
        return "HTTP 410 (the endpoint is gone; it has been disabled)"
    return f"HTTP {status}"


def describe(exc: BaseException) -> str:
    """A short, stable text for a transport failure (`connection refused`, `TLS error: …`)."""
    causes = list(_chain(exc))
    if any(isinstance(e, ConnectionRefusedError) for e in causes):
        return "connection refused"
    if any(isinstance(e, ConnectionResetError) for e in causes):
        return "connection reset by the receiver"
    if any(type(e).__name__ == "ServerDisconnectedError" for e in causes):
        return "connection reset by the receiver (closed before answering)"
    for e in causes:
        if isinstance(e, ssl.SSLCertVerificationError):
            return _short(f"TLS certificate not accepted: {e.verify_message or e}")
        if isinstance(e, ssl.SSLError):
            return _short(f"TLS error: {e.reason or e}")
    if any(type(e).__name__ == "gaierror" for e in causes):
        return "host not found"
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return _short(f"the URL cannot be used: {exc}")
    if isinstance(exc, httpx.RemoteProtocolError):
        return _short(f"invalid HTTP answer: {exc}")
    if isinstance(exc, httpx.ConnectError):
        return _short(f"connection failed: {exc}")
    return _short(f"{type(exc).__name__}: {exc}")


def _timed_out(exc: BaseException) -> bool:
    causes = _chain(exc)
    return len(causes) == 1 or any(isinstance(e, TimeoutError) for e in causes[1:])


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_ERROR_CHARS else text[: _MAX_ERROR_CHARS - 1] + "…"
