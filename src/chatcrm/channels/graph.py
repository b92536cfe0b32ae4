"""Meta's Graph API, the calls a CRM needs (contract K.2): send a message, send a read
receipt, fetch a media's bytes. Thin httpx calls (../notes: pywa and the like add nothing a
database-backed sender needs).

A send's outcome decides whether it may be tried again: only when surely nothing was sent
(the connection was refused or never made, the name did not resolve, 429). Anything after
the request may have been written (a timeout, a reset, a 5xx) is an unknown outcome: the
message fails with UNKNOWN_OUTCOME and is never sent again by itself.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp
import httpx
import orjson
from httpx_aiohttp import AiohttpTransport

from chatcrm import __version__
from chatcrm.core.transport_errors import describe
from chatcrm.messages.record import UNKNOWN_OUTCOME
from chatcrm.webhooks.addresses import CheckingResolver, check_at_send
from chatcrm.webhooks.schedule import parse_retry_after

SENT, FAILED, RETRY = "sent", "failed", "retry"
_MAX_ANSWER_BYTES = 64 * 1024
# Failures of the transport that mean no request reached the server.
_NOTHING_SENT = ("connection refused", "connect timeout", "host not found")
# The share of a call's time given to making its connection: a connection not made by then
# is a "connect timeout", surely nothing sent (retried), where the call's own deadline
# running out may come after the request was written (an unknown outcome).
_CONNECT_SHARE = 0.5
# The service itself calls Meta (webhook deliveries say chatcrm-webhooks/, webhooks/sender.py).
USER_AGENT = f"chatcrm/{__version__}"


def new_client(
    *, timeout: float, max_connections: int, allow_private: bool = False
) -> httpx.AsyncClient:
    """The one HTTP client of a channel sender (or of a media download), shared by its calls.

    httpx, over aiohttp's HTTP/1.1 implementation (httpx-aiohttp, by an httpx maintainer):
    httpx's own pure-Python transport spends about 2 ms of CPU per request on this
    machine. The Graph API is called once per message, so httpx's own layers (about half
    a millisecond a call, docs/performance.md) are not worth leaving its API for here;
    webhooks, sent once per event, use aiohttp directly (webhooks/sender.py).
    """

    def session() -> aiohttp.ClientSession:
        # Made by the transport at its first call, on the event loop that uses it.
        connector = aiohttp.TCPConnector(
            limit=max_connections,
            # Connects only to addresses that pass the rules of webhooks/addresses.py, as
            # resolved for this very connection: the check before each call resolves on its
            # own, and DNS may answer otherwise the second time (DNS rebinding).
            resolver=CheckingResolver(check=not allow_private),
            # Idle connections are closed before common servers close them (uvicorn after
            # 5 s, nginx 75 s): reusing one the server is closing fails the call.
            keepalive_timeout=4,
            ssl=httpx.create_ssl_context(trust_env=False),
        )
        # No proxy or .netrc from the environment: the address checked is the address
        # connected to. Meta's cookies are never sent back.
        return aiohttp.ClientSession(
            connector=connector, trust_env=False, cookie_jar=aiohttp.DummyCookieJar()
        )

    return httpx.AsyncClient(
        transport=AiohttpTransport(client=session),
        timeout=httpx.Timeout(timeout, connect=timeout * _CONNECT_SHARE),
        # A 3xx is a failed call: following it would also bypass the address check.
        follow_redirects=False,
        trust_env=False,
        headers={"user-agent": USER_AGENT},
    )


@dataclass(frozen=True)
class Access:
    """What calling the Graph API for one channel needs (its token stays in memory only)."""

    api_base_url: str
    phone_number_id: str
    access_token: str

    @classmethod
    def of(cls, channel: Mapping[str, Any]) -> Access:
        return cls(channel["api_base_url"], channel["phone_number_id"], channel["access_token"])

    def url(self, *parts: str) -> str:
        return "/".join([self.api_base_url.rstrip("/"), *parts])

    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.access_token}"}

    def sendable(self) -> bool:
        """Whether the token can go in an HTTP header (channels/fields.py refuses any other
        since; one stored before would make the client raise with the token in its error)."""
        return header_safe(self.access_token)


def header_safe(token: str) -> bool:
    """Printable ASCII without spaces: what a bearer token may be (RFC 6750's b64token is
    narrower still), and what Meta's tokens and app secrets are."""
    return bool(token) and all("!" <= c <= "~" for c in token)


# A stored token that cannot be sent (set before channels/fields.py refused such tokens).
UNSENDABLE_TOKEN = {
    "code": "INVALID_ACCESS_TOKEN",
    "title": "the channel's accessToken is not printable ASCII: set it again",
}


@dataclass(frozen=True)
class Result:
    outcome: str  # SENT, FAILED or RETRY
    external_id: str | None = None
    error: dict[str, Any] | None = None
    retry_after: float | None = None
    detail: str = ""  # for the log: what happened, never a token


def text_body(to: str, text: str, reply_to: str | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "text",
        "text": {"body": text},
    }
    if reply_to:
        body["context"] = {"message_id": reply_to}
    return body


def template_body(to: str, template: Mapping[str, Any], reply_to: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": template["name"], "language": {"code": template["language"]}}
    if template["parameters"]:
        parameters = [{"type": "text", "text": p} for p in template["parameters"]]
        spec["components"] = [{"type": "body", "parameters": parameters}]
    body: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
        "type": "template",
        "template": spec,
    }
    if reply_to:
        body["context"] = {"message_id": reply_to}
    return body


def read_receipt_body(wamid: str) -> dict[str, Any]:
    return {"messaging_product": "whatsapp", "status": "read", "message_id": wamid}


def _error_of(status: int, answer: bytes) -> dict[str, Any]:
    """`{code, title}` from Meta's error object, else from the HTTP status."""
    try:
        found = orjson.loads(answer).get("error")
    except (orjson.JSONDecodeError, AttributeError):
        found = None
    if isinstance(found, dict) and found.get("code") is not None:
        title = found.get("error_user_title") or found.get("title") or found.get("message")
        return {"code": found["code"], "title": str(title) if title is not None else None}
    return {"code": status, "title": f"HTTP {status}"}


def _wamid(answer: bytes) -> str | None:
    try:
        found = orjson.loads(answer)["messages"][0]["id"]
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
        return None
    return found if isinstance(found, str) else None


async def _read(answer: httpx.Response) -> bytes:
    out = bytearray()
    async for chunk in answer.aiter_raw():
        out += chunk
        if len(out) > _MAX_ANSWER_BYTES:
            break
    return bytes(out)


async def post(
    client: httpx.AsyncClient,
    access: Access,
    body: dict[str, Any],
    *,
    deadline: float,
    allow_private: bool,
) -> Result:
    """POST one message (or receipt) to `{apiBaseUrl}/{phoneNumberId}/messages`; never
    raises for what the network or Meta did."""
    url = access.url(access.phone_number_id, "messages")
    status: int | None = None
    requested = False  # whether the request was begun: before, nothing can have been sent
    if not access.sendable():
        return Result(FAILED, error=UNSENDABLE_TOKEN, detail=UNSENDABLE_TOKEN["title"])
    try:
        async with asyncio.timeout(deadline):
            # The name is looked up here even where private addresses are allowed: a
            # lookup that fails or runs out of time inside the request would leave the
            # outcome unknown, where here it is plainly "nothing was sent".
            refused = await check_at_send(url, allow_private=False)
            if refused is not None and refused.endswith("does not resolve"):
                return Result(RETRY, detail=refused)  # nothing was sent
            if refused is not None and not allow_private:
                error = {"code": "ADDRESS_REFUSED", "title": f"address refused: {refused}"}
                return Result(FAILED, error=error, detail=error["title"])
            headers = {**access.headers(), "content-type": "application/json"}
            requested = True
            async with client.stream("POST", url, content=orjson.dumps(body), headers=headers) as a:
                status = a.status_code
                retry_after = parse_retry_after(a.headers.get("retry-after"), datetime.now(UTC))
                answer = await _read(a)
    # Not httpx.ConnectTimeout: the aiohttp transport also reports a connection the server
    # closed after reading the request that way. Only the chain of causes tells.
    except (TimeoutError, httpx.HTTPError, httpx.InvalidURL, OSError, ssl.SSLError) as exc:
        detail = describe(exc)
        if not requested:
            # The address check ran out of time (a DNS lookup on a slow resolver): the
            # request was never begun, so nothing was sent; tried again as a refused
            # connection is.
            return Result(RETRY, detail=f"address lookup: {detail}")
        if isinstance(exc, TimeoutError) and detail != "connect timeout":
            detail = "timeout"
        if status is None and detail in _NOTHING_SENT:
            return Result(RETRY, detail=detail)
        if status is None and detail.startswith("address refused: "):
            # The client's own resolver refused what it resolved: nothing was sent.
            error = {"code": "ADDRESS_REFUSED", "title": detail}
            return Result(FAILED, error=error, detail=detail)
        if status is None or not 200 <= status < 300:
            error = {"code": UNKNOWN_OUTCOME, "title": f"the outcome is unknown: {detail}"}
            return Result(FAILED, error=error, detail=detail)
        return Result(SENT, detail=f"HTTP {status}, answer cut short: {detail}")
    if 200 <= status < 300:
        return Result(SENT, external_id=_wamid(answer), detail=f"HTTP {status}")
    if status == 429:
        return Result(RETRY, retry_after=retry_after, detail="HTTP 429")
    if status >= 500:
        error = {"code": UNKNOWN_OUTCOME, "title": f"the outcome is unknown: HTTP {status}"}
        return Result(FAILED, error=error, detail=f"HTTP {status}")
    return Result(FAILED, error=_error_of(status, answer), detail=f"HTTP {status}")


class MediaUnavailable(Exception):
    """The channel could not give the media (its message says why, without the token);
    `gone`: it said it has no such media (404 or 410: expired, or deleted)."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.gone = status in (404, 410)


async def media(
    client: httpx.AsyncClient, access: Access, media_id: str, *, allow_private: bool
) -> tuple[str, AsyncIterator[bytes], httpx.Response]:
    """The media's content type and its bytes, streamed: `GET /{media-id}` for its URL,
    then that URL, both with the channel's token. The caller closes the answer."""
    lookup = access.url(media_id)
    if not access.sendable():
        raise MediaUnavailable(UNSENDABLE_TOKEN["title"])
    for url in (lookup,):
        refused = await check_at_send(url, allow_private=allow_private)
        if refused is not None:
            raise MediaUnavailable(f"address refused: {refused}")
    try:
        found = await client.get(lookup, headers=access.headers())
        if found.status_code != 200:
            raise MediaUnavailable(
                f"the channel answered HTTP {found.status_code} for the media",
                status=found.status_code,
            )
        info = found.json()
        url = info["url"]
        refused = await check_at_send(url, allow_private=allow_private)
        if refused is not None:
            raise MediaUnavailable(f"address refused: {refused}")
        request = client.build_request("GET", url, headers=access.headers())
        answer = await client.send(request, stream=True)
    except (httpx.HTTPError, httpx.InvalidURL, ValueError, KeyError, TypeError, OSError) as exc:
        # (InvalidURL: a `url` the lookup answered that is no URL; not an HTTPError.)
        raise MediaUnavailable(f"the channel could not give the media: {describe(exc)}") from None
    if answer.status_code != 200:
        await answer.aclose()
        raise MediaUnavailable(
            f"the channel answered HTTP {answer.status_code} for the media",
            status=answer.status_code,
        )
    kind = answer.headers.get("content-type") or info.get("mime_type") or "application/octet-stream"
    # Decoded: a file the channel sent compressed (Content-Encoding: gzip) is given as the
    # bytes it is, under its own content type (the answer names no encoding).
    return kind, answer.aiter_bytes(), answer
