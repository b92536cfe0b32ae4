"""Retries, against a scripted server in the test process and a proxy that drops the
connection: which failures are tried again, how long the client waits, and that a retried
create never creates twice."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from chatcrm.provisioning import NewAccount
from chatcrm_client import (
    ApiError,
    BadRequest,
    ClientError,
    ConnectionFailed,
    RateLimited,
    ServerError,
    UnexpectedStatus,
)
from chatcrm_client._engine import backoff
from tests.sdk.scripted import DROP, Answer, DroppingProxy, ScriptedServer
from tests.servers import Server

WORKSPACE = "01a2170f-0000-7000-8000-0000000000ff"
CONTACT = {"id": "c1", "name": "Ana", "creationDate": "2025-04-07T21:56:19.325443Z"}


@pytest.fixture(scope="module")
def scripted() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.close()


def make(make_client: Any, scripted: ScriptedServer, **options: Any) -> Any:
    return make_client(scripted.url, "ccrm_test", WORKSPACE, **options)


def created(**data: Any) -> Answer:
    return Answer(200, data={"id": "c1", "contact": {**CONTACT, **data}})


def test_503_with_retry_after_is_retried_after_the_wait_it_names(
    make_client: Any, scripted: ScriptedServer
) -> None:
    scripted.script(Answer(503, {"retry-after": "1"}, error_code="SERVICE_UNAVAILABLE"), created())
    contact = make(make_client, scripted).contacts.create(name="Ana")
    assert contact.id == "c1"
    first, second = scripted.seen
    assert 0.95 <= second.at - first.at < 3.0  # the 1 s it was told, not the 0.5 s backoff
    # One key for both attempts: the service replays the first answer.
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"]
    assert len(first.headers["idempotency-key"]) == 36
    assert first.headers["x-workspace-id"] == WORKSPACE
    assert first.headers["authorization"] == "Bearer ccrm_test"


def test_400_is_never_retried(make_client: Any, scripted: ScriptedServer) -> None:
    scripted.script(Answer(400, error_code="BAD_REQUEST", message="Unknown field 'x'."))
    with pytest.raises(BadRequest) as failed:
        make(make_client, scripted).contacts.create(name="Ana", x=1)
    assert len(scripted.seen) == 1
    assert (failed.value.status, failed.value.message) == (400, "Unknown field 'x'.")
    assert failed.value.request_id == "req-1"


def test_429_and_5xx_are_retried_up_to_max_retries(
    make_client: Any, scripted: ScriptedServer
) -> None:
    limited = Answer(429, {"retry-after": "0"}, error_code="RATE_LIMITED")
    scripted.script(limited, Answer(502, {"retry-after": "0"}), created())
    assert make(make_client, scripted).contacts.create(name="Ana").id == "c1"
    assert len(scripted.seen) == 3

    scripted.script(limited, limited, limited, created())
    with pytest.raises(RateLimited) as refused:
        make(make_client, scripted, max_retries=2).contacts.get("c1")
    assert len(scripted.seen) == 3 and refused.value.retry_after == 0

    # Not an envelope (a proxy's page): still a ServerError, after one retry.
    page = Answer(502, {"retry-after": "0"}, raw=b"<html>Bad Gateway</html>")
    scripted.script(page, page)
    with pytest.raises(ServerError) as failed:
        make(make_client, scripted, max_retries=1).contacts.get("c1")
    assert len(scripted.seen) == 2
    assert (failed.value.status, failed.value.error_code) == (502, None)


def test_every_error_status_is_an_api_error_subclass(
    make_client: Any, scripted: ScriptedServer
) -> None:
    """Contract F: errors raise ApiError subclasses, for statuses the service never gives
    too (a proxy's): 408 after its retries, 410, 423; a redirect."""
    for status, kind, tries in ((408, ClientError, 2), (410, ClientError, 1), (423, ClientError, 1),
                                (302, UnexpectedStatus, 1)):  # fmt: skip
        scripted.script(*[Answer(status, {"retry-after": "0"}, raw=b"<html></html>")] * tries)
        with pytest.raises(kind) as raised:
            make(make_client, scripted, max_retries=1).contacts.get("c1")
        assert type(raised.value) is kind and raised.value.status == status
        assert isinstance(raised.value, ApiError)


def test_connection_errors_are_retried(make_client: Any, scripted: ScriptedServer) -> None:
    scripted.script(DROP, created())
    started = time.monotonic()
    assert make(make_client, scripted).contacts.create(name="Ana").id == "c1"
    first, second = scripted.seen
    assert first.headers["idempotency-key"] == second.headers["idempotency-key"]
    assert 0.5 <= time.monotonic() - started < 3.0  # backoff: 0.5 to 1 s

    # Nobody listening: tried 1 + max_retries times, then ConnectionFailed.
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    client = make_client(f"http://127.0.0.1:{port}", "k", WORKSPACE, max_retries=1)
    with pytest.raises(ConnectionFailed):
        client.contacts.get("c1")


@pytest.mark.slow
def test_a_create_whose_answer_is_lost_is_retried_and_creates_once(
    make_client: Any, sdk_server: Server, account: NewAccount
) -> None:
    proxy = DroppingProxy(sdk_server.base_url, "/api/contact")
    try:
        client = make_client(proxy.url, account.api_key, account.workspace_id)
        contact = client.contacts.create(name="Once", email="once@example.com")
        [lost] = proxy.dropped
        # The service did create it the first time; the retry got that answer again.
        assert lost.json()["data"]["id"] == contact.id
        posts = [s for s in proxy.seen if s.method == "POST"]
        assert len(posts) == 2
        assert posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
        assert [c.id for c in client.contacts.list()] == [contact.id]
    finally:
        proxy.close()


@pytest.mark.slow
def test_a_delete_or_conditional_update_whose_answer_is_lost_is_not_sent_again(
    make_client: Any, sdk_server: Server, account: NewAccount
) -> None:
    """Sent again, a DELETE applied the first time answers 404 and an update with
    `if_match` 412, about the caller's own change: after a lost answer such a call says
    the outcome is unknown instead (ConnectionFailed), and the change stands once. A PUT
    without `if_match` sends the same values again."""
    direct = make_client(sdk_server.base_url, account.api_key, account.workspace_id)
    gone = direct.contacts.create(name="Gone", email="gone@example.com")
    kept = direct.contacts.create(name="Kept", email="kept@example.com")
    cases = [
        ("DELETE", f"/api/contact/{gone.id}", lambda c: c.contacts.delete(gone.id)),
        (
            "PUT",
            "/api/contact",
            lambda c: c.contacts.update(kept.id, if_match=kept.etag, name="K2"),
        ),
    ]
    for method, path, call in cases:
        proxy = DroppingProxy(sdk_server.base_url, path, method=method)
        try:
            client = make_client(proxy.url, account.api_key, account.workspace_id)
            with pytest.raises(ConnectionFailed, match="may have been applied"):
                call(client)
            assert len([s for s in proxy.seen if s.method == method]) == 1
            assert proxy.dropped[0].status_code == 200
        finally:
            proxy.close()
    assert [c.id for c in direct.contacts.list()] == [kept.id]
    assert direct.contacts.get(kept.id).name == "K2"
    # Without if_match, an update is sent again: the same values, applied again.
    proxy = DroppingProxy(sdk_server.base_url, "/api/contact", method="PUT")
    try:
        client = make_client(proxy.url, account.api_key, account.workspace_id)
        assert client.contacts.update(kept.id, name="K3").name == "K3"
        assert len([s for s in proxy.seen if s.method == "PUT"]) == 2
    finally:
        proxy.close()


def test_backoff_waits_from_half_a_second_to_eight() -> None:
    """Contract F: exponential backoff from 0.5 s to 8 s with jitter."""
    for attempt in range(8):
        waits = [backoff(attempt) for _ in range(200)]
        assert all(0.5 <= w <= 8.0 for w in waits), (attempt, min(waits), max(waits))
        step = 0.5 * 2**attempt
        if step < 8:
            assert min(waits) >= step and max(waits) <= 2 * step
            assert len(set(waits)) > 1  # jittered
    assert min(backoff(0) for _ in range(200)) >= 0.5


def test_a_stream_waits_out_an_outage_and_goes_on_where_it_was(
    make_client: Any, scripted: ScriptedServer
) -> None:
    """Contract F: the stream never ends. A service that answers 503 and drops connections
    past the client's retries (a restart) is asked the same page again, then the stream goes
    on; a list, which ends, raises instead."""
    event = {
        "id": "e2",
        "type": "contact.created",
        "data": {},
        "createdAt": CONTACT["creationDate"],
    }
    down = Answer(503, error_code="SERVICE_UNAVAILABLE")
    page = Answer(200, data={"events": [event], "next": "e2"})
    scripted.script(down, DROP, down, DROP, page)
    stream = iter(make(make_client, scripted, max_retries=0).events.stream(after="e1", wait=1))
    assert next(stream).id == "e2"
    asked = [s.path for s in scripted.seen]
    assert len(asked) == 5 and all("after=e1" in path for path in asked)
    scripted.script(down)
    with pytest.raises(ServerError):
        list(make(make_client, scripted, max_retries=0).events.list(after="e1"))


def test_a_success_of_another_shape_is_an_api_error(
    make_client: Any, scripted: ScriptedServer
) -> None:
    """A 200 that is not the envelope the call expects (a wrong base_url, a proxy) raises
    ApiError like every other failure, not a TypeError from deep inside."""
    client = make(make_client, scripted, max_retries=0)
    for answer in (Answer(200, data=None), Answer(200, raw=b"[1, 2]"), Answer(200, data=[])):
        scripted.script(answer)
        with pytest.raises(ApiError) as raised:
            client.contacts.create(name="Ana")
        assert raised.value.status == 200
