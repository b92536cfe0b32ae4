"""Where a webhook may send: the server-side request forgery rules of contract D.4.

A receiver whose host is, or resolves to, a loopback, private (RFC 1918, fc00::/7),
link-local, CGNAT (100.64/10), multicast or unspecified address (0.0.0.0/8 too), or one of
the other ranges that are not public (documentation, benchmarking, reserved) is refused,
unless `CHATCRM_WEBHOOK_ALLOW_PRIVATE=1`. IPv6 forms that carry an IPv4 address
(`::ffff:127.0.0.1`, `::127.0.0.1`, NAT64, 6to4, Teredo) are judged by that address.

Two moments use these rules:
- create and update (`refused_reason`): a literal address is judged as it is; a name is
  resolved (at most `RESOLVE_TIMEOUT` seconds, on a daemon thread: `_apart`) and
  every address it gives is judged. A name that does not resolve, or not in time, is
  ACCEPTED: receivers that are not yet in DNS, and servers without a resolver, exist; the
  send-time check fails the attempt instead. `localhost` and names under `.localhost` are
  loopback whatever a resolver says (RFC 6761), and refused even then.
- each send (`refused_reason(..., at_send=True)`, or `check_at_send`): the same, but a name
  that does not resolve is a reason to fail the attempt, so that DNS pointed at an internal
  address after the webhook was saved is caught.

Literal addresses are recognised in every form the system resolver accepts without asking
DNS (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1` are all 127.0.0.1), so none of them
slips through as a "name".
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import threading
from collections.abc import Awaitable, Callable
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

import aiohttp
import aiohttp.abc

from chatcrm.core.transport_errors import AddressRefused

IPAddress = IPv4Address | IPv6Address
# Seconds a create, an update or a send waits for the resolver.
RESOLVE_TIMEOUT = 2.0
T = TypeVar("T")
# What every refusal message lists, for the person reading a 422.
REFUSED_KINDS = (
    "loopback, private, link-local, CGNAT, multicast, unspecified, documentation, "
    "benchmarking or reserved"
)

_V4: tuple[tuple[IPv4Network, str], ...] = tuple(
    (IPv4Network(net), kind)
    for net, kind in (
        ("0.0.0.0/8", "unspecified"),  # "this network": 0.0.0.0 and what connects like it
        ("127.0.0.0/8", "loopback"),
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("169.254.0.0/16", "link-local"),
        ("100.64.0.0/10", "CGNAT"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        # Not public either (RFC 6890): protocol assignments, documentation, benchmarking,
        # and the reserved 240/4.
        ("192.0.0.0/24", "reserved"),
        ("192.0.2.0/24", "documentation"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("198.18.0.0/15", "benchmarking"),
        ("240.0.0.0/4", "reserved"),
    )
)
_V6: tuple[tuple[IPv6Network, str], ...] = tuple(
    (IPv6Network(net), kind)
    for net, kind in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("fc00::/7", "private"),  # unique local addresses
        ("fec0::/10", "private"),  # site-local (deprecated, still routed by some stacks)
        ("64:ff9b:1::/48", "private"),  # NAT64 for local use (RFC 8215)
        ("fe80::/10", "link-local"),
        ("ff00::/8", "multicast"),
        ("2001:db8::/32", "documentation"),
        ("100::/64", "reserved"),  # discard-only
    )
)
_NAT64 = IPv6Network("64:ff9b::/96")
_LOW32 = 0xFFFFFFFF


def _carried_ipv4(address: IPv6Address) -> list[IPv4Address]:
    """The IPv4 addresses an IPv6 address stands for (mapped, compatible, translated,
    NAT64, 6to4, Teredo): a connection to it may reach them."""
    value = int(address)
    out: list[IPv4Address] = []
    if address.ipv4_mapped is not None:  # ::ffff:a.b.c.d
        out.append(address.ipv4_mapped)
    if value >> 32 == 0 or value >> 32 == 0xFFFF0000 or address in _NAT64:
        # ::a.b.c.d (compatible), ::ffff:0:a.b.c.d (translated), 64:ff9b::a.b.c.d (NAT64)
        out.append(IPv4Address(value & _LOW32))
    if address.sixtofour is not None:  # 2002:aabb:ccdd::
        out.append(address.sixtofour)
    if address.teredo is not None:  # 2001:0::/32: (server, client)
        out.extend(address.teredo)
    return out


def kind_of(address: IPAddress) -> str | None:
    """Why a receiver may not have this address ("loopback", "private"…), or None."""
    if isinstance(address, IPv4Address):
        return next((kind for net, kind in _V4 if address in net), None)
    plain = IPv6Address(int(address))  # without a zone (`fe80::1%eth0`)
    kind = next((kind for net, kind in _V6 if plain in net), None)
    if kind is not None:
        return kind
    return next(filter(None, (kind_of(v4) for v4 in _carried_ipv4(plain))), None)


def literal_address(host: str) -> IPAddress | None:
    """The address a host names by itself, without DNS, in any form the resolver accepts
    (the strict forms, then the legacy IPv4 ones: `2130706433`, `0x7f.1`, `127.1`)."""
    try:
        return ip_address(host)
    except ValueError:
        pass
    if not host or not host.isascii() or any(ch.isspace() for ch in host):
        return None  # inet_aton would stop at a space and take what precedes it
    try:
        return IPv4Address(socket.inet_aton(host))
    except (OSError, ValueError):
        return None


def host_of(url: str) -> str | None:
    """The host a URL names (lower-case, IPv6 without brackets), or None."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host or None


Resolver = Callable[[str], Awaitable[list[str]]]


def _apart(lookup: Callable[..., T], *args: Any) -> asyncio.Future[T]:
    """`lookup(*args)` (getaddrinfo, getnameinfo) on a daemon thread of its own.

    Not on the event loop's resolver threads (libuv's four under uvloop, or the default
    executor): a lookup of a name whose DNS never answers holds one of those until the
    system resolver gives up, a wait for it that times out does not end it, and the
    process cannot exit until every one queued there has ended (a `serve` stopped with
    SIGTERM took 71 s after eleven webhooks to such names). It also kept create's and
    update's lookups waiting behind the senders' (a name slow to fail took them all). A
    daemon thread is never waited for: what it finds after its caller stopped waiting, or
    after the loop closed, is dropped."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[Any], None], value: Any) -> None:
        if not future.done():
            outcome(value)

    def work() -> None:
        try:
            found = lookup(*args)
        except BaseException as exc:  # handed to the waiter, as loop.getaddrinfo does
            answer: tuple[Callable[[Any], None], Any] = (future.set_exception, exc)
        else:
            answer = (future.set_result, found)
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(settle, *answer)

    threading.Thread(target=work, name="chatcrm-resolve", daemon=True).start()
    return future


async def resolve(host: str) -> list[str]:
    """The addresses a name resolves to (OSError or TimeoutError when it does not)."""
    lookup = _apart(socket.getaddrinfo, host, None, 0, socket.SOCK_STREAM)
    infos = await asyncio.wait_for(lookup, RESOLVE_TIMEOUT)
    return [str(info[4][0]) for info in infos]


class _Lookups:
    """The two lookups aiohttp's ThreadedResolver asks its event loop for, made on daemon
    threads (`_apart`): the HTTP clients' own resolution of a name never holds the
    process at its exit either."""

    async def getaddrinfo(
        self,
        host: str,
        port: Any,
        *,
        family: int = 0,
        type: int = 0,
        proto: int = 0,
        flags: int = 0,
    ) -> Any:
        return await _apart(socket.getaddrinfo, host, port, family, type, proto, flags)

    async def getnameinfo(self, sockaddr: Any, flags: int = 0) -> Any:
        return await _apart(socket.getnameinfo, sockaddr, flags)


def _loopback_name(host: str) -> bool:
    # `localhost.` is the same name written fully qualified (RFC 6761 reserves the whole
    # `.localhost` domain for loopback).
    name = host.rstrip(".").lower()
    return name == "localhost" or name.endswith(".localhost")


async def refused_reason(
    url: str, *, allow_private: bool, at_send: bool = False, resolver: Resolver | None = None
) -> str | None:
    """Why a webhook may not send to `url` (a phrase, e.g. "localhost resolves to
    127.0.0.1, a loopback address"), or None when it may. `at_send`: a host that does not
    resolve is a reason too (see the module docstring). `resolver`: for tests."""
    if allow_private:
        return None
    host = host_of(url)
    if host is None:
        return "the URL names no host"
    literal = literal_address(host)
    if literal is not None:
        kind = kind_of(literal)
        return None if kind is None else f"{host} is {_a(kind)} address"
    try:
        found = await (resolver or resolve)(host)
    except (OSError, TimeoutError, UnicodeError):
        if _loopback_name(host):
            return f"{host} is a loopback name"
        return f"{host} does not resolve" if at_send else None
    if not found and at_send:
        return f"{host} does not resolve"
    for text in found:
        try:
            address = ip_address(text)
        except ValueError:  # not an address we can judge: refuse rather than guess
            return f"{host} resolves to {text}, which is not an IP address"
        kind = kind_of(address)
        if kind is not None:
            return f"{host} resolves to {text}, {_a(kind)} address"
    if _loopback_name(host):  # whatever a resolver made of it
        return f"{host} is a loopback name"
    return None


class CheckingResolver(aiohttp.abc.AbstractResolver):
    """The resolver of the webhook and Graph API clients: every address a name resolves to
    is judged as at send time, and the connection is made to those very addresses. The
    check before an attempt resolves the name once; the HTTP client resolves it again to
    connect, and DNS may answer otherwise the second time (DNS rebinding): this refuses it
    then too. `check=False` (private addresses allowed) judges nothing. Either way the
    lookups run on daemon threads (`_Lookups`)."""

    def __init__(self, *, check: bool = True) -> None:
        self._inner = aiohttp.ThreadedResolver(loop=cast(asyncio.AbstractEventLoop, _Lookups()))
        self._check = check

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[aiohttp.abc.ResolveResult]:
        found = await self._inner.resolve(host, port, family)
        for result in found if self._check else ():
            kind = kind_of(ip_address(result["host"]))
            if kind is not None:
                raise AddressRefused(f"{host} resolves to {result['host']}, {_a(kind)} address")
        return found

    async def close(self) -> None:
        await self._inner.close()


async def check_at_send(url: str, *, allow_private: bool) -> str | None:
    """The check before each attempt: why it must fail, or None."""
    return await refused_reason(url, allow_private=allow_private, at_send=True)


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"
