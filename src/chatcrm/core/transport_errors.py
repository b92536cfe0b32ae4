"""A short, stable text for a call to another server that failed in transport (`connection
refused`, `TLS error: …`), whichever client made it: aiohttp (webhooks) or httpx (the Graph
API). It is what an operator reads in a delivery's `last_error` or a message's error."""

from __future__ import annotations

import ssl

import aiohttp
import httpx

_MAX_ERROR_CHARS = 300


class AddressRefused(OSError):
    """A connection not made: the host resolved to an address the sender may not reach
    (webhooks/addresses.py)."""


def describe(exc: BaseException) -> str:
    causes = chain(exc)
    refused = next((e for e in causes if isinstance(e, AddressRefused)), None)
    if refused is not None:
        return short(f"address refused: {refused}")
    if any(isinstance(e, ConnectionRefusedError) for e in causes):
        return "connection refused"
    # aiohttp's own time limit on making the connection (its `connect` and `sock_connect`):
    # it ran out before any byte of the request could be written.
    if any(isinstance(e, aiohttp.ConnectionTimeoutError) for e in causes):
        return "connect timeout"
    if any(isinstance(e, ConnectionResetError) for e in causes):
        return "connection reset by the receiver"
    if any(isinstance(e, aiohttp.ServerDisconnectedError) for e in causes):
        return "connection reset by the receiver (closed before answering)"
    for e in causes:
        # getattr: aiohttp's ClientConnectorCertificateError is an SSLCertVerificationError
        # to isinstance but has neither attribute (an AttributeError, "internal error").
        if isinstance(e, ssl.SSLCertVerificationError):
            return short(f"TLS certificate not accepted: {getattr(e, 'verify_message', '') or e}")
        if isinstance(e, ssl.SSLError):
            return short(f"TLS error: {getattr(e, 'reason', '') or e}")
    if any(type(e).__name__ == "gaierror" for e in causes):
        return "host not found"
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol | aiohttp.InvalidURL):
        return short(f"the URL cannot be used: {exc}")
    if isinstance(
        exc, httpx.RemoteProtocolError | aiohttp.ClientResponseError | aiohttp.ClientPayloadError
    ):
        return short(f"invalid HTTP answer: {exc}")
    if isinstance(exc, httpx.ConnectError | aiohttp.ClientConnectionError):
        return short(f"connection failed: {exc}")
    return short(f"{type(exc).__name__}: {exc}")


def chain(exc: BaseException | None) -> list[BaseException]:
    """The exception and its causes, outermost first."""
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_ERROR_CHARS else text[: _MAX_ERROR_CHARS - 1] + "…"
