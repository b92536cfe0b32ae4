"""One attempt over HTTP (contract D.4): the address check, the signed POST, and what came
of it, as an `Outcome` with a short `last_error` a person can act on.

Sent with aiohttp's client directly. design.md names httpx for outgoing calls, and the
Graph API calls keep it (channels/graph.py); but a webhook is sent for every event, and on
this machine httpx's own layers over the same aiohttp connection (its URL and header
models, its request and response objects) cost about three times what aiohttp's send
itself does: 800 against 230 µs of CPU per delivery, measured with a local receiver
(docs/performance.md section 6). On the two cores the API shares, that CPU is taken from
the requests.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from datetime import UTC, datetime

import aiohttp
import certifi
from yarl import URL

from chatcrm import __version__
from chatcrm.core.transport_errors import chain, describe, short
from chatcrm.webhooks.addresses import CheckingResolver, check_at_send, host_of
from chatcrm.webhooks.claims import Claimed
from chatcrm.webhooks.outcomes import Outcome
from chatcrm.webhooks.schedule import RETRY_AFTER_STATUSES, parse_retry_after
from chatcrm.webhooks.signing import signature_header, signing_secrets

USER_AGENT = f"chatcrm-webhooks/{__version__}"
# Read at most this much of an answer: enough for the connection to be reused after a
# short body, never a large one into memory (the body itself is not used).
_MAX_ANSWER_BYTES = 64 * 1024


def new_client(*, max_connections: int, allow_private: bool = False) -> aiohttp.ClientSession:
    """The one HTTP client of a dispatcher, shared by its sends (connections are reused).
    Make it on the event loop that uses it."""
    connector = aiohttp.TCPConnector(
        limit=max_connections,
        # Connects only to addresses that pass the rules of addresses.py, as resolved for
        # this very connection (the check before each attempt resolves on its own).
        resolver=CheckingResolver(check=not allow_private),
        # Idle connections are closed before common servers close them (uvicorn after 5 s,
        # nginx 75 s): reusing one the receiver is closing fails the attempt.
        keepalive_timeout=4,
        # The same certificate authorities as the Graph API's client (httpx's).
        ssl=ssl.create_default_context(cafile=certifi.where()),
    )
    return aiohttp.ClientSession(
        connector=connector,
        # No proxy or .netrc from the environment: the address checked is the address
        # connected to.
        trust_env=False,
        # A receiver's cookies are never sent back, to it or to another endpoint.
        cookie_jar=aiohttp.DummyCookieJar(),
        headers={"user-agent": USER_AGENT},
        # The attempt's deadline bounds it all (`attempt`); the body is not decoded.
        timeout=aiohttp.ClientTimeout(total=None),
        auto_decompress=False,
    )


async def attempt(
    client: aiohttp.ClientSession, c: Claimed, *, deadline: float, allow_private: bool
) -> Outcome:
    """Make one attempt within `deadline` seconds (CHATCRM_WEBHOOK_TIMEOUT); never raises
    for what the receiver or the network did."""
    status: int | None = None
    retry_after: float | None = None
    try:
        target = _target(c.url)
    except ValueError as exc:
        return Outcome(None, short(f"the URL cannot be used: {exc}"))
    try:
        # The whole attempt, name resolution included, has `deadline` seconds, however
        # slowly the receiver answers.
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
            async with client.post(
                target, data=c.body, headers=headers, allow_redirects=False
            ) as answer:
                status = answer.status
                if status in RETRY_AFTER_STATUSES:
                    retry_after = parse_retry_after(answer.headers.get("retry-after"), now)
                await _read_some(answer)
    except TimeoutError:
        if status is None:
            return Outcome(None, f"timeout after {deadline:g} s")
        # The status came in time; only the rest of the answer was slow.
    except (aiohttp.ClientError, OSError, ssl.SSLError) as exc:
        if status is None:
            if any(isinstance(e, TimeoutError) for e in chain(exc)):
                return Outcome(None, f"timeout after {deadline:g} s")
            return Outcome(None, describe(exc))
    if status is not None and 200 <= status < 300:
        return Outcome(status)
    assert status is not None
    return Outcome(status, _status_error(status), retry_after)


# An endpoint's URL is read once, not at each of its deliveries.
@functools.lru_cache(maxsize=4096)
def _target(url: str) -> URL:
    """The URL as it will be sent, refused (ValueError) when it is not plainly an http(s)
    URL or when it could name another host than the one the address check reads."""
    if any(ch <= " " or ch == "\x7f" for ch in url):
        raise ValueError("it holds a space or a control character")
    target = URL(url)
    if target.scheme not in ("http", "https"):
        raise ValueError(f"{target.scheme or 'no'} scheme, not http or https")
    checked = host_of(url)  # the host the address check reads
    if checked is None or target.raw_host != URL.build(scheme="http", host=checked).raw_host:
        raise ValueError("it names no host, or its host cannot be read one way only")
    return target


async def _read_some(answer: aiohttp.ClientResponse) -> None:
    read = 0
    async for chunk in answer.content.iter_any():
        read += len(chunk)
        if read > _MAX_ANSWER_BYTES:
            break


def _status_error(status: int) -> str:
    if 300 <= status < 400:
        return f"HTTP {status} (redirects are not followed)"
    if status == 410:
        return "HTTP 410 (the endpoint is gone; it has been disabled)"
    return f"HTTP {status}"
