"""The Graph API client connects only where the address rules allow (webhooks/addresses.py),
as resolved for the very connection it makes: a name that passed the check before the call
and resolves to 127.0.0.1 when the client connects (DNS rebinding) reaches nothing."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from chatcrm.channels import graph
from tests.conversations.fake_graph import TOKEN, FakeGraph
from tests.rebinding import resolve_to_loopback


@pytest.fixture
def fake() -> Iterator[FakeGraph]:
    server = FakeGraph()
    yield server
    server.close()


@pytest.fixture
def lookups(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The check before each call sees a public address; the client's own lookup, made
    when it connects, answers 127.0.0.1."""

    async def passes(url: str, *, allow_private: bool) -> None:
        return None

    monkeypatch.setattr(graph, "check_at_send", passes)
    return resolve_to_loopback(monkeypatch)


def _access(fake: FakeGraph) -> graph.Access:
    return graph.Access(f"http://graph.rebind.example:{fake.port}/v21.0", "1555", TOKEN)


async def test_a_send_to_a_rebound_name_fails_and_sends_nothing(
    fake: FakeGraph, lookups: list[str]
) -> None:
    body = graph.text_body("5511999990000", "hello", None)
    client = graph.new_client(timeout=5, max_connections=2)
    try:
        result = await graph.post(client, _access(fake), body, deadline=5, allow_private=False)
    finally:
        await client.aclose()
    reason = "graph.rebind.example resolves to 127.0.0.1, a loopback address"
    # Nothing was sent, so the outcome is known: refused, not UNKNOWN_OUTCOME.
    assert result.outcome == graph.FAILED
    assert result.error == {"code": "ADDRESS_REFUSED", "title": f"address refused: {reason}"}
    assert lookups == ["graph.rebind.example"]
    assert fake.requests == []
    assert TOKEN not in result.detail

    # Private addresses allowed (CHATCRM_WEBHOOK_ALLOW_PRIVATE): the same call goes through.
    client = graph.new_client(timeout=5, max_connections=2, allow_private=True)
    try:
        result = await graph.post(client, _access(fake), body, deadline=5, allow_private=True)
    finally:
        await client.aclose()
    assert result.outcome == graph.SENT and result.external_id is not None
    assert [r.path for r in fake.requests] == ["/v21.0/1555/messages"]


async def test_a_media_download_from_a_rebound_name_fetches_nothing(
    fake: FakeGraph, lookups: list[str]
) -> None:
    fake.media["media-9"] = ("image/png", b"png-bytes")
    client = graph.new_client(timeout=5, max_connections=2)
    try:
        with pytest.raises(graph.MediaUnavailable) as refused:
            await graph.media(client, _access(fake), "media-9", allow_private=False)
    finally:
        await client.aclose()
    assert "address refused: graph.rebind.example resolves to 127.0.0.1" in str(refused.value)
    assert fake.requests == []


async def test_an_address_check_that_runs_out_of_time_sent_nothing(
    fake: FakeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A DNS lookup slower than the call's deadline (a loaded resolver): the request was
    never begun, so the outcome is known, nothing sent, and the message is tried again;
    it is no UNKNOWN_OUTCOME failure."""

    async def slow(url: str, *, allow_private: bool) -> None:
        await asyncio.sleep(5)

    monkeypatch.setattr(graph, "check_at_send", slow)
    body = graph.text_body("5511999990000", "hello", None)
    client = graph.new_client(timeout=5, max_connections=2)
    try:
        result = await graph.post(client, _access(fake), body, deadline=0.2, allow_private=True)
    finally:
        await client.aclose()
    assert result.outcome == graph.RETRY, result
    assert result.detail.startswith("address lookup: ")
    assert fake.requests == []


async def test_a_lookup_slower_than_the_deadline_sent_nothing_where_private_is_allowed(
    fake: FakeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    """CHATCRM_WEBHOOK_ALLOW_PRIVATE skips the address rules, not the lookup before the
    request: a slow resolver still means nothing was sent, never an unknown outcome."""
    looked_up = socket.getaddrinfo

    def slow_for_graph(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "graph.slow.example":
            time.sleep(1)
        return looked_up(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", slow_for_graph)
    access = graph.Access(f"http://graph.slow.example:{fake.port}/v21.0", "1555", TOKEN)
    body = graph.text_body("5511999990000", "hello", None)
    client = graph.new_client(timeout=5, max_connections=2, allow_private=True)
    try:
        result = await graph.post(client, access, body, deadline=0.2, allow_private=True)
    finally:
        await client.aclose()
    assert result.outcome == graph.RETRY, result
    assert result.error is None
    assert fake.requests == []
