"""The dispatcher against a real receiver on 127.0.0.1 (contract D.4): what a delivery
carries, and what each kind of answer does to the delivery and its endpoint."""

from __future__ import annotations

import asyncio
import itertools
import socket
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

import pytest
from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError

from chatcrm import __version__
from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.webhooks import dispatcher
from chatcrm.webhooks.dispatcher import Dispatcher
from tests.servers import free_port
from tests.webhooks import rows
from tests.webhooks.loop import running, until
from tests.webhooks.receiver import Receiver, Reply

Make = Callable[..., Dispatcher]


async def test_a_delivery_is_the_stored_event_signed_as_standard_webhooks(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/hook"), consecutive_failures=3)
    event_id = await rows.new_delivery(db, endpoint)
    before = int(time.time())

    assert await dispatcher_for().run_once() == 1

    [got] = receiver.requests("/hook")
    assert got.body == await rows.stored_body(db, workspace, event_id)
    assert got.headers["content-type"] == "application/json"
    assert got.headers["user-agent"] == f"chatcrm-webhooks/{__version__}"
    assert got.headers["webhook-id"] == event_id
    assert before <= int(got.headers["webhook-timestamp"]) <= int(time.time())
    assert got.headers["webhook-signature"].startswith("v1,")
    assert " " not in got.headers["webhook-signature"]  # no rotation: one signature
    payload = Webhook(endpoint.secret).verify(got.body, got.headers)
    assert payload["id"] == event_id
    row = await rows.delivery(db, endpoint, event_id)
    assert row["status"] == "succeeded"
    assert row["attempts"] == 1
    assert row["next_attempt_at"] is None
    assert row["last_response_status"] == 200
    assert row["last_error"] is None
    assert row["last_attempt_at"] is not None
    assert (await rows.webhook(db, endpoint))["consecutive_failures"] == 0


@pytest.mark.parametrize("status", [201, 204, 299])
async def test_any_2xx_is_a_success(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make, status: int
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/hook"))
    receiver.script("/hook", Reply(status))
    event_id = await rows.new_delivery(db, endpoint)
    await dispatcher_for().run_once()
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["last_response_status"]) == ("succeeded", status)


async def test_a_500_is_retried_after_the_schedule_s_wait_then_succeeds(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/hook"))
    receiver.script("/hook", Reply(500))
    event_id = await rows.new_delivery(db, endpoint)
    dispatcher = dispatcher_for(webhook_retry_schedule="0.5")

    assert await dispatcher.run_once() == 1
    row = await rows.delivery(db, endpoint, event_id)
    assert row["status"] == "pending"
    assert row["attempts"] == 1
    assert row["last_response_status"] == 500
    assert row["last_error"] == "HTTP 500"
    wait = (row["next_attempt_at"] - row["last_attempt_at"]).total_seconds()
    assert 0.5 * 0.8 <= wait <= 0.5 * 1.2 + 0.5  # ±20 %, plus the attempt's own time
    assert await dispatcher.run_once() == 0  # not due yet

    await asyncio.sleep(0.7)
    assert await dispatcher.run_once() == 1
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["attempts"], row["last_error"]) == ("succeeded", 2, None)
    first, second = receiver.requests("/hook")
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == event_id
    assert first.body == second.body
    for got in (first, second):
        Webhook(endpoint.secret).verify(got.body, got.headers)


async def test_the_running_loop_retries_on_its_own_until_success(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/hook"))
    receiver.script("/hook", Reply(500), Reply(502))
    event_id = await rows.new_delivery(db, endpoint)
    async with running(dispatcher_for(webhook_retry_schedule="0.3,0.3")):
        got = await receiver.arrived(3, "/hook")
        row = await until(db, endpoint, event_id, "succeeded")
    assert row["attempts"] == 3
    gaps = [b.at - a.at for a, b in itertools.pairwise(got)]
    assert all(0.3 * 0.8 <= gap < 2.0 for gap in gaps), gaps


async def test_a_hanging_receiver_does_not_ration_other_endpoints_claims(
    db: Database,
    workspace: str,
    receiver: Receiver,
    dispatcher_for: Make,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """D.4: first attempts are not held behind another endpoint's slow receiver. While one
    endpoint was at its window, a look for others' rows was made at most every
    BUSY_LOOK_SECONDS, even when the fast endpoint's attempts had ended and freed its slots:
    a hanging receiver capped every other endpoint of the process at one claim per period
    (about 340 deliveries a second instead of over 1,000). The period is made an hour here:
    only the freed slots can bring the fast endpoint's rows after its first window."""
    monkeypatch.setattr(dispatcher, "BUSY_LOOK_SECONDS", 3600.0)
    hanging = await rows.add_webhook(db, workspace, receiver.url("/hangs"))
    receiver.script("/hangs", then=Reply(200, delay=60))
    fast = await rows.add_webhook(db, workspace, receiver.url("/fast"))
    for _ in range(40):  # more than its window: it stays at its bound
        await rows.new_delivery(db, hanging)
    for _ in range(120):  # several of the fast endpoint's windows
        await rows.new_delivery(db, fast)
    async with running(dispatcher_for(webhook_timeout=60)):
        await receiver.arrived(120, "/fast", within=30)
        assert len(receiver.requests("/hangs")) == 16  # its first window, all hanging
        receiver.release()  # so that the dispatcher stops without its grace period


async def test_a_timeout_is_a_failed_attempt(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/slow"))
    receiver.script("/slow", Reply(200, delay=3))
    event_id = await rows.new_delivery(db, endpoint)
    started = time.monotonic()
    await dispatcher_for(webhook_timeout=0.5).run_once()
    assert time.monotonic() - started < 2.0
    row = await rows.delivery(db, endpoint, event_id)
    assert row["status"] == "pending"
    assert row["last_response_status"] is None
    assert row["last_error"] == "timeout after 0.5 s"


async def test_a_refused_connection_is_a_failed_attempt(
    db: Database, workspace: str, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, f"http://127.0.0.1:{free_port()}/hook")
    event_id = await rows.new_delivery(db, endpoint)
    await dispatcher_for().run_once()
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["attempts"]) == ("pending", 1)
    assert row["last_response_status"] is None
    assert row["last_error"] == "connection refused"


@pytest.mark.parametrize(
    ("status", "retry_after", "schedule", "low", "high"),
    [
        (503, "3", "0.2", 3.0, 3.5),  # longer than the schedule's wait: honoured
        (429, "date+4", "0.2", 2.5, 4.5),  # an HTTP date
        (503, "1", "30", 24.0, 36.5),  # shorter: the schedule's wait (±20 %) stands
        (503, "999999", "0.2", 3600.0, 3600.5),  # capped at one hour
        (500, "3", "0.2", 0.16, 0.8),  # only 429 and 503 may ask
        (503, "soon", "0.2", 0.16, 0.8),  # unreadable: ignored
    ],
)
async def test_retry_after_on_429_and_503_is_honoured_when_longer(
    db: Database,
    workspace: str,
    receiver: Receiver,
    dispatcher_for: Make,
    status: int,
    retry_after: str,
    schedule: str,
    low: float,
    high: float,
) -> None:
    if retry_after.startswith("date+"):
        when = datetime.now(UTC) + timedelta(seconds=int(retry_after[5:]))
        retry_after = format_datetime(when, usegmt=True)
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/busy"))
    receiver.script("/busy", Reply(status, headers={"Retry-After": retry_after}))
    event_id = await rows.new_delivery(db, endpoint)
    started = time.monotonic()
    await dispatcher_for(webhook_retry_schedule=schedule).run_once()
    # The wait runs from the answer; last_attempt_at is the claim, a moment before it (a
    # loaded machine may stretch that moment).
    took = time.monotonic() - started
    row = await rows.delivery(db, endpoint, event_id)
    assert row["last_error"] == f"HTTP {status}"
    wait = (row["next_attempt_at"] - row["last_attempt_at"]).total_seconds()
    assert low <= wait <= high + took


async def test_redirects_are_not_followed(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/moved"))
    receiver.script("/moved", Reply(307, headers={"Location": receiver.url("/elsewhere")}))
    event_id = await rows.new_delivery(db, endpoint)
    await dispatcher_for().run_once()
    assert len(receiver.requests("/moved")) == 1
    assert receiver.requests("/elsewhere") == []
    row = await rows.delivery(db, endpoint, event_id)
    assert row["status"] == "pending"
    assert row["last_response_status"] == 307
    assert row["last_error"] == "HTTP 307 (redirects are not followed)"


async def test_410_disables_the_endpoint_at_once_and_holds_its_other_deliveries(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/gone"))
    receiver.script("/gone", Reply(410))
    first = await rows.new_delivery(db, endpoint)
    dispatcher = dispatcher_for(webhook_retry_schedule="0.01")
    assert await dispatcher.run_once() == 1
    second = await rows.new_delivery(db, endpoint)

    hook = await rows.webhook(db, endpoint)
    assert (hook["enabled"], hook["disabled_reason"]) == (False, "gone")
    assert hook["updated_at"] > hook["created_at"] + timedelta(seconds=30)
    row = await rows.delivery(db, endpoint, first)
    assert (row["status"], row["attempts"], row["next_attempt_at"]) == ("failed", 1, None)
    assert row["last_response_status"] == 410
    assert row["last_error"] == "HTTP 410 (the endpoint is gone; it has been disabled)"
    # A disabled endpoint's pending deliveries wait; re-enabled, they go out.
    assert await dispatcher.run_once() == 0
    assert (await rows.delivery(db, endpoint, second))["status"] == "pending"
    await rows.set_webhook(db, endpoint, enabled=True, disabled_reason=None)
    assert await dispatcher.run_once() == 1
    assert (await rows.delivery(db, endpoint, second))["status"] == "succeeded"
    assert (await rows.delivery(db, endpoint, first))["status"] == "failed"


async def test_after_the_last_attempt_the_delivery_fails_and_failures_disable_the_endpoint(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/down"))
    # Two attempts per delivery; the second failed delivery in a row disables the endpoint.
    dispatcher = dispatcher_for(webhook_retry_schedule="0.05", webhook_disable_after=2)

    async def deliver(*replies: Reply) -> dict[str, Any]:
        receiver.script("/down", *replies)
        event_id = await rows.new_delivery(db, endpoint)
        for _ in replies:
            await dispatcher.run_once()
            await asyncio.sleep(0.1)
        return await rows.delivery(db, endpoint, event_id)

    failed = await deliver(Reply(500), Reply(503))
    assert (failed["status"], failed["attempts"], failed["next_attempt_at"]) == ("failed", 2, None)
    assert (failed["last_response_status"], failed["last_error"]) == (503, "HTTP 503")
    assert (await rows.webhook(db, endpoint))["consecutive_failures"] == 1
    # A success in between resets the count: failures must be consecutive.
    assert (await deliver(Reply(500), Reply(200)))["status"] == "succeeded"
    assert (await rows.webhook(db, endpoint))["consecutive_failures"] == 0
    assert (await deliver(Reply(500), Reply(500)))["status"] == "failed"
    hook = await rows.webhook(db, endpoint)
    assert (hook["enabled"], hook["consecutive_failures"]) == (True, 1)
    assert (await deliver(Reply(500), Reply(500)))["status"] == "failed"
    hook = await rows.webhook(db, endpoint)
    assert (hook["enabled"], hook["disabled_reason"]) == (False, "failing")
    assert hook["consecutive_failures"] == 2
    # Nothing more goes to a disabled endpoint.
    await rows.new_delivery(db, endpoint)
    assert await dispatcher.run_once() == 0


async def test_a_last_attempt_cut_short_is_not_followed_by_another(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    """D.4: so many attempts in all. The last one's dispatcher died mid-attempt (its lease
    ran out, pending): the next claim fails the delivery under that attempt's number and
    sends nothing more; the failure counts toward disabling the endpoint."""
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/cut"))
    dispatcher = dispatcher_for(webhook_retry_schedule="0.05")  # two attempts in all
    event_id = await rows.new_delivery(db, endpoint)
    past = utcnow() - timedelta(seconds=1)
    await rows.set_delivery(
        db, endpoint, event_id, attempts=2, last_attempt_at=past, next_attempt_at=past
    )
    assert await dispatcher.run_once() == 1
    assert receiver.requests("/cut") == []
    failed = await rows.delivery(db, endpoint, event_id)
    assert (failed["status"], failed["attempts"], failed["next_attempt_at"]) == ("failed", 2, None)
    assert failed["last_error"].startswith("the last attempt was cut short")
    assert (await rows.webhook(db, endpoint))["consecutive_failures"] == 1
    # One before the last, cut short the same way, is attempted again (the second).
    again = await rows.new_delivery(db, endpoint)
    await rows.set_delivery(
        db, endpoint, again, attempts=1, last_attempt_at=past, next_attempt_at=past
    )
    receiver.script("/cut", Reply(200))
    assert await dispatcher.run_once() == 1
    sent = await rows.delivery(db, endpoint, again)
    assert (sent["status"], sent["attempts"]) == ("succeeded", 2)


async def test_eight_attempts_with_the_default_schedule(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/down"))
    receiver.script("/down", then=Reply(500))
    event_id = await rows.new_delivery(db, endpoint)
    dispatcher = dispatcher_for(webhook_retry_schedule=Settings().webhook_retry_schedule)
    waits = []
    for attempt in range(1, 9):
        assert await dispatcher.run_once() == 1
        row = await rows.delivery(db, endpoint, event_id)
        assert row["attempts"] == attempt
        if row["next_attempt_at"] is not None:
            waits.append((row["next_attempt_at"] - row["last_attempt_at"]).total_seconds())
            # Made due at once, as if the wait had passed.
            await rows.set_delivery(db, endpoint, event_id, next_attempt_at=utcnow())
    assert row["status"] == "failed"
    assert len(waits) == 7
    for wait, nominal in zip(waits, (5, 300, 1800, 7200, 18000, 36000, 36000), strict=True):
        assert nominal * 0.8 <= wait <= nominal * 1.2 + 1
    assert len(receiver.requests("/down")) == 8


async def test_during_a_rotation_both_signatures_verify(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    old = rows.new_secret()
    endpoint = await rows.add_webhook(
        db,
        workspace,
        receiver.url("/rotating"),
        previous_secret=old,
        previous_expires_at=utcnow() + timedelta(hours=24),
    )
    await rows.new_delivery(db, endpoint)
    await dispatcher_for().run_once()
    [got] = receiver.requests("/rotating")
    entries = got.headers["webhook-signature"].split(" ")
    assert len(entries) == 2
    for secret, entry in zip((endpoint.secret, old), entries, strict=True):  # new one first
        Webhook(secret).verify(got.body, {**got.headers, "webhook-signature": entry})
    Webhook(old).verify(got.body, got.headers)
    Webhook(endpoint.secret).verify(got.body, got.headers)

    # Once the old secret has expired, only the new one signs.
    await rows.set_webhook(db, endpoint, previous_secret_expires_at=utcnow() - timedelta(1))
    await rows.new_delivery(db, endpoint)
    await dispatcher_for().run_once()
    latest = receiver.requests("/rotating")[-1]
    assert " " not in latest.headers["webhook-signature"]
    Webhook(endpoint.secret).verify(latest.body, latest.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(latest.body, latest.headers)


async def test_a_receiver_that_hangs_up_without_answering_is_a_failed_attempt(
    db: Database, workspace: str, dispatcher_for: Make
) -> None:
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def hang_up() -> None:
        conn, _ = listener.accept()
        conn.recv(65536)
        conn.close()

    thread = threading.Thread(target=hang_up, daemon=True)
    thread.start()
    try:
        endpoint = await rows.add_webhook(db, workspace, f"http://127.0.0.1:{port}/hook")
        event_id = await rows.new_delivery(db, endpoint)
        await dispatcher_for().run_once()
    finally:
        listener.close()
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["last_response_status"]) == ("pending", None)
    assert row["last_error"].startswith(("invalid HTTP answer: ", "connection reset"))


@pytest.mark.parametrize(
    "url",
    [
        "htp://example.com/hook",
        "http://exa\x01mple.com/hook",  # a client that dropped the byte would reach example.com
        "http://exa mple.com/hook",
        "https://example.com:99999/hook",
        # Read as evil.example by the address check (urllib), refused by the client (yarl):
        # never sent to a host the check did not read.
        "http://127.0.0.1\\@evil.example/hook",
        "http:///hook",
    ],
)
async def test_a_url_that_cannot_be_sent_as_checked_is_a_failed_attempt_with_its_reason(
    db: Database, workspace: str, dispatcher_for: Make, url: str
) -> None:
    endpoint = await rows.add_webhook(db, workspace, url)
    event_id = await rows.new_delivery(db, endpoint)
    await dispatcher_for().run_once()  # allow_private: no address check first
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["attempts"]) == ("pending", 1)
    assert row["last_error"].startswith("the URL cannot be used: ")


async def test_a_receivers_cookies_are_never_sent_back(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    receiver.script("/jar", Reply(200, headers={"Set-Cookie": "session=abc; Path=/"}))
    # By name: a cookie jar keeps no cookies of a bare IP address.
    endpoint = await rows.add_webhook(db, workspace, f"http://localhost:{receiver.port}/jar")
    other = await rows.add_webhook(db, workspace, f"http://localhost:{receiver.port}/other")
    async with running(dispatcher_for()):  # one client for all three sends
        first = await rows.new_delivery(db, endpoint)
        await until(db, endpoint, first, "succeeded")
        second = await rows.new_delivery(db, endpoint)
        third = await rows.new_delivery(db, other)
        await until(db, endpoint, second, "succeeded")
        await until(db, other, third, "succeeded")
    sent = receiver.requests("/jar") + receiver.requests("/other")
    assert len(sent) == 3
    assert all("cookie" not in got.headers for got in sent)
