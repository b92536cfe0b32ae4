"""The server-side request forgery rules of contract D.4 (chatcrm/webhooks/addresses.py).

Pure: names are "resolved" by a stand-in resolver, so no request ever goes to a refused
address and no test needs DNS. (localhost is resolved by the system in the HTTP tests.)
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable
from ipaddress import IPv4Address, ip_address
from typing import Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcrm.core.transport_errors import describe
from chatcrm.webhooks.addresses import (
    check_at_send,
    host_of,
    kind_of,
    literal_address,
    refused_reason,
)
from chatcrm.webhooks.sender import new_client
from tests.rebinding import resolve_to_loopback
from tests.webhooks.receiver import Receiver

REFUSED_V4 = {
    "0.0.0.0": "unspecified",
    "0.1.2.3": "unspecified",
    "127.0.0.1": "loopback",
    "127.255.255.254": "loopback",
    "10.0.0.1": "private",
    "10.255.255.255": "private",
    "172.16.0.1": "private",
    "172.31.255.255": "private",
    "192.168.1.1": "private",
    "169.254.169.254": "link-local",  # cloud metadata services live here
    "100.64.0.1": "CGNAT",
    "100.127.255.255": "CGNAT",
    "224.0.0.1": "multicast",
    "239.255.255.250": "multicast",
    "255.255.255.255": "broadcast",
}
REFUSED_V6 = {
    "::": "unspecified",
    "::1": "loopback",
    "fc00::1": "private",
    "fd12:3456:789a::1": "private",
    "fec0::1": "private",
    "fe80::1": "link-local",
    "fe80::1%eth0": "link-local",
    "febf:ffff::1": "link-local",
    "ff02::1": "multicast",
    "ff0e::1": "multicast",
    # IPv6 forms carrying a refused IPv4 address.
    "::ffff:127.0.0.1": "loopback",
    "::ffff:7f00:1": "loopback",
    "::ffff:10.0.0.1": "private",
    "::ffff:169.254.169.254": "link-local",
    "::ffff:0.0.0.0": "unspecified",
    "::127.0.0.1": "loopback",  # IPv4-compatible (deprecated)
    "::192.168.0.1": "private",
    "::ffff:0:127.0.0.1": "loopback",  # IPv4-translated
    "64:ff9b::127.0.0.1": "loopback",  # NAT64
    "64:ff9b::a00:1": "private",
    "64:ff9b:1::1": "private",  # NAT64 for local use
    "2002:7f00:1::": "loopback",  # 6to4 of 127.0.0.1
    "2002:c0a8:101::1": "private",  # 6to4 of 192.168.1.1
}
ALLOWED = (
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "172.15.255.255",
    "172.32.0.1",
    "192.169.0.1",
    "100.63.255.255",
    "100.128.0.1",
    "11.0.0.1",
    "169.253.255.255",
    "223.255.255.255",
    "2001:4860:4860::8888",
    "2606:4700:4700::1111",
    "::ffff:8.8.8.8",
    "64:ff9b::808:808",
    "2002:808:808::1",
)


@pytest.mark.parametrize(("text", "kind"), [*REFUSED_V4.items(), *REFUSED_V6.items()])
def test_refused_addresses_are_named_by_kind(text: str, kind: str) -> None:
    assert kind_of(ip_address(text)) == kind


@pytest.mark.parametrize("text", ALLOWED)
def test_public_addresses_are_allowed(text: str) -> None:
    assert kind_of(ip_address(text)) is None


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),  # one 32-bit number
        ("0x7f000001", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),  # octal
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("10.1", "10.0.0.1"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("::ffff:127.0.0.1", "::ffff:7f00:1"),
        ("::1", "::1"),
    ],
)
def test_every_literal_form_the_resolver_accepts_is_recognised(host: str, address: str) -> None:
    found = literal_address(host)
    assert found == ip_address(address)
    # The same as the system resolver makes of it, without asking DNS.
    flags = socket.AI_NUMERICHOST
    system = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=flags)
    assert {ip_address(info[4][0]) for info in system} == {found}


@pytest.mark.parametrize(
    "host", ["example.com", "localhost", "1.2.3.4.5", "0x", "1e3", "", "127.0.0.1 x", "::g"]
)
def test_names_are_not_literals(host: str) -> None:
    assert literal_address(host) is None


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_a_single_number_is_the_ipv4_address_it_encodes(number: int) -> None:
    for text in (str(number), hex(number)):
        assert literal_address(text) == IPv4Address(number)


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("https://Example.COM/x", "example.com"),
        ("http://user:pass@10.0.0.1:8080/x", "10.0.0.1"),
        ("http://[::1]:8080/", "::1"),
        ("http://example.com#@127.0.0.1/", "example.com"),
        ("http:///nohost", None),
        ("http://[::1/", None),
    ],
)
def test_the_host_of_a_url(url: str, host: str | None) -> None:
    assert host_of(url) == host


def _resolver(table: dict[str, list[str]]) -> Callable[[str], Awaitable[list[str]]]:
    """Names → addresses; an unknown name fails as DNS does."""
    asked: list[str] = []

    async def resolve(host: str) -> list[str]:
        asked.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]

    resolve.asked = asked  # type: ignore[attr-defined]
    return resolve


def _reason(url: str, resolver: Callable[[str], Awaitable[list[str]]], **kw: bool) -> str | None:
    allow = kw.pop("allow_private", False)
    return asyncio.run(refused_reason(url, allow_private=allow, resolver=resolver, **kw))


NAMES = {
    "public.example": ["93.184.216.34", "2606:2800:220:1::1"],
    "internal.example": ["10.1.2.3"],
    "mixed.example": ["93.184.216.34", "192.168.0.10"],  # one bad address is enough
    "v6-loop.example": ["::1"],
    "mapped.example": ["::ffff:127.0.0.1"],
    "metadata.example": ["169.254.169.254"],
}


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://public.example/hook", None),
        ("https://internal.example/hook", "internal.example resolves to 10.1.2.3, a private"),
        ("https://mixed.example/hook", "mixed.example resolves to 192.168.0.10, a private"),
        ("https://v6-loop.example/hook", "v6-loop.example resolves to ::1, a loopback"),
        ("https://mapped.example/hook", "mapped.example resolves to ::ffff:127.0.0.1, a loop"),
        ("http://metadata.example/", "metadata.example resolves to 169.254.169.254, a link"),
        ("http://127.0.0.1:8080/", "127.0.0.1 is a loopback address"),
        ("http://2130706433/", "2130706433 is a loopback address"),
        ("http://0x7f.1/", "0x7f.1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1 is a loopback address"),
        ("http://[fe80::1]/", "fe80::1 is a link-local address"),
        ("http://0/", "0 is an unspecified address"),
        ("http://100.64.1.1/", "100.64.1.1 is a CGNAT address"),
        ("http://8.8.8.8/", None),
        ("http://[2001:4860:4860::8888]/", None),
    ],
)
def test_refused_reason(url: str, expected: str | None) -> None:
    reason = _reason(url, _resolver(NAMES))
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and reason.startswith(expected), reason


def test_literal_addresses_never_ask_the_resolver() -> None:
    resolver = _resolver({})
    for url in ("http://127.0.0.1/", "http://2130706433/", "http://[::1]/", "http://8.8.8.8/"):
        _reason(url, resolver)
    assert resolver.asked == []  # type: ignore[attr-defined]


def test_a_name_that_does_not_resolve_is_accepted_on_save_and_refused_at_send() -> None:
    resolver = _resolver({})
    assert _reason("https://not-yet-in-dns.example/", resolver) is None
    at_send = _reason("https://not-yet-in-dns.example/", resolver, at_send=True)
    assert at_send == "not-yet-in-dns.example does not resolve"


def test_a_resolver_that_times_out_counts_as_not_resolving() -> None:
    async def slow(host: str) -> list[str]:
        raise TimeoutError

    assert _reason("https://slow.example/", slow) is None
    assert _reason("https://slow.example/", slow, at_send=True) == "slow.example does not resolve"


def test_allow_private_allows_everything_without_resolving() -> None:
    resolver = _resolver(NAMES)
    for url in ("http://127.0.0.1/", "https://internal.example/", "http://[fe80::1]/"):
        assert _reason(url, resolver, allow_private=True) is None
        assert _reason(url, resolver, allow_private=True, at_send=True) is None
    assert resolver.asked == []  # type: ignore[attr-defined]


def test_the_system_resolver_is_used_by_default() -> None:
    # localhost is answered from the hosts file: no network traffic.
    reason = asyncio.run(refused_reason("http://localhost:9/", allow_private=False))
    assert reason is not None and reason.startswith("localhost resolves to ")
    assert "loopback" in reason
    assert asyncio.run(check_at_send("http://127.0.0.1/", allow_private=False)) == (
        "127.0.0.1 is a loopback address"
    )
    assert asyncio.run(check_at_send("http://127.0.0.1/", allow_private=True)) is None


async def test_the_connection_goes_only_to_addresses_that_pass_the_rules(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """DNS rebinding: a name that passed the check before the attempt and resolves to
    127.0.0.1 when the HTTP client connects is refused then too, and nothing is sent. The
    client's resolver judges the very addresses it connects to."""
    receiver = Receiver()
    lookups = resolve_to_loopback(monkeypatch)
    url = f"http://rebind.example:{receiver.port}/hook"
    try:
        client = new_client(max_connections=4)
        try:
            with pytest.raises(aiohttp.ClientError) as refused:
                async with client.post(url, data=b"{}"):
                    pass
        finally:
            await client.close()
        assert describe(refused.value) == (
            "address refused: rebind.example resolves to 127.0.0.1, a loopback address"
        )
        assert lookups == ["rebind.example"]
        assert receiver.requests() == []
        # Private receivers allowed (CHATCRM_WEBHOOK_ALLOW_PRIVATE): the same goes through.
        client = new_client(max_connections=4, allow_private=True)
        try:
            async with client.post(url, data=b"{}") as answer:
                assert answer.status == 200
        finally:
            await client.close()
        assert [r.path for r in receiver.requests()] == ["/hook"]
    finally:
        receiver.close()


def test_a_create_s_lookup_does_not_wait_behind_the_senders() -> None:
    """The event loop's resolver threads busy with the senders' lookups (here: never
    answering) do not hold a create's check: it resolves on threads of its own, and
    `localhost` is refused (before, its lookup ran out of time and was accepted)."""

    async def check() -> str | None:
        loop = asyncio.get_running_loop()

        async def busy(*args: object, **kwargs: object) -> list[object]:
            await asyncio.sleep(60)
            return []

        loop.getaddrinfo = busy  # type: ignore[method-assign]
        return await refused_reason("http://localhost:9/hook", allow_private=False)

    reason = asyncio.run(check())
    assert reason is not None and reason.startswith("localhost resolves to "), reason


@pytest.mark.parametrize("host", ["localhost", "api.localhost", "localhost.", "api.localhost."])
def test_a_loopback_name_is_refused_even_when_no_resolver_answers(host: str) -> None:
    async def silent(name: str) -> list[str]:
        raise TimeoutError

    async def public(name: str) -> list[str]:
        return ["93.184.216.34"]

    for resolver in (silent, public):
        reason = asyncio.run(
            refused_reason(f"http://{host}:9/", allow_private=False, resolver=resolver)
        )
        assert reason == f"{host} is a loopback name", resolver


# A lookup that never answers, in a process of its own: its event loop ends at once,
# whichever way the name was being resolved (the check, or the HTTP client's connect).
_HUNG_LOOKUP = """
import asyncio, socket, sys, time
socket.getaddrinfo = lambda *a, **k: time.sleep(60)
from chatcrm.webhooks import addresses
from chatcrm.webhooks.sender import new_client

async def main():
    try:
        await addresses.resolve("hung.example")
    except TimeoutError:
        pass
    client = new_client(max_connections=1, allow_private=False)
    try:
        await asyncio.wait_for(client.get("http://hung.example/x"), 1.0)
    except (TimeoutError, Exception):
        pass
    await client.close()

started = time.monotonic()
asyncio.run(main())  # (uvloop's lookups are its own C calls: not patched here)
print(round(time.monotonic() - started, 1))
"""


def test_a_name_whose_dns_never_answers_does_not_hold_the_process() -> None:
    """Lookups ran on the event loop's resolver threads: a timed-out wait left them
    queued, and the process could not exit until each had ended (`serve` took 71 s to
    stop after SIGTERM). They run on daemon threads now, never waited for."""
    import subprocess
    import sys
    import time

    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", _HUNG_LOOKUP], capture_output=True, text=True, timeout=120
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert elapsed < 30, (elapsed, done.stdout)  # the lookups sleep 60 s


async def test_a_receiver_whose_certificate_is_not_trusted_is_said_so(tmp_path: Any) -> None:
    """aiohttp's certificate error is an ssl.SSLCertVerificationError to isinstance but
    has no `verify_message`: the delivery's lastError was "internal error: AttributeError"."""
    import ssl
    import subprocess

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    await asyncio.to_thread(
        subprocess.run,
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.close()

    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    client = new_client(max_connections=1, allow_private=True)
    try:
        with pytest.raises(aiohttp.ClientError) as refused:
            async with client.post(f"https://127.0.0.1:{port}/hook", data=b"{}"):
                pass
    finally:
        await client.close()
        server.close()
    assert describe(refused.value).startswith("TLS certificate not accepted: ")
