"""Claims and leases (contract D.4): each attempt is made by one dispatcher, a dispatcher
that dies mid-attempt leaves the delivery to the others, a slow endpoint holds only its
own slots, refused addresses get no traffic, a first attempt starts within a second."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import column, select, table

from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.events import retention
from chatcrm.webhooks import claims
from chatcrm.webhooks import dispatcher as dispatcher_module
from chatcrm.webhooks.dispatcher import INTERRUPTED, Dispatcher
from chatcrm.webhooks.outcomes import FAILED, EndpointEffect, Verdict
from tests.webhooks import rows
from tests.webhooks.conftest import dispatch_settings
from tests.webhooks.loop import running, until
from tests.webhooks.receiver import Receiver, Reply

Make = Callable[..., Dispatcher]


@pytest.mark.parametrize(
    ("host", "error"),
    [
        ("10.255.255.1:9", "address refused: 10.255.255.1 is a private address"),
        ("169.254.169.254", "address refused: 169.254.169.254 is a link-local address"),
        ("100.64.0.1", "address refused: 100.64.0.1 is a CGNAT address"),
        ("[fd00::1]:8080", "address refused: fd00::1 is a private address"),
        ("[::ffff:10.0.0.1]", "address refused: ::ffff:10.0.0.1 is a private address"),
    ],
)
async def test_a_refused_address_is_a_failed_attempt_without_traffic(
    db: Database, workspace: str, dispatcher_for: Make, host: str, error: str
) -> None:
    endpoint = await rows.add_webhook(db, workspace, f"http://{host}/hook")
    event_id = await rows.new_delivery(db, endpoint)
    started = time.monotonic()
    # A connection to these addresses would hang until the 5 s timeout: the quick answer
    # and the text show that the check refused it before any packet left.
    assert await dispatcher_for(webhook_allow_private=False).run_once() == 1
    assert time.monotonic() - started < 2.0
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["attempts"]) == ("pending", 1)
    assert row["last_response_status"] is None
    assert row["last_error"] == error


async def test_the_receiver_on_loopback_gets_nothing_unless_private_is_allowed(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    by_address = await rows.add_webhook(db, workspace, receiver.url("/local"))
    by_name = await rows.add_webhook(db, workspace, f"http://localhost:{receiver.port}/named")
    first = await rows.new_delivery(db, by_address)
    second = await rows.new_delivery(db, by_name)
    assert await dispatcher_for(webhook_allow_private=False).run_once() == 2
    assert receiver.requests() == []
    row = await rows.delivery(db, by_address, first)
    assert row["last_error"] == "address refused: 127.0.0.1 is a loopback address"
    error = (await rows.delivery(db, by_name, second))["last_error"]
    assert error.startswith("address refused: localhost resolves to ")
    assert error.endswith(", a loopback address")

    for endpoint, event_id in ((by_address, first), (by_name, second)):
        await rows.set_delivery(db, endpoint, event_id, next_attempt_at=utcnow())
    assert await dispatcher_for(webhook_allow_private=True).run_once() == 2
    assert {r.path for r in receiver.requests()} == {"/local", "/named"}


async def test_a_slow_endpoint_does_not_hold_another_endpoint_s_first_attempt(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    slow = await rows.add_webhook(db, workspace, receiver.url("/slow"))
    fast = await rows.add_webhook(db, workspace, receiver.url("/fast"))
    receiver.script("/slow", then=Reply(200, delay=4))
    # The slow endpoint's backlog is older, so it comes first in due order.
    for _ in range(20):
        event_id = await rows.add_event(db, workspace)
        await rows.queue(db, slow, event_id, due=utcnow() - timedelta(minutes=1))
    dispatcher = dispatcher_for(webhook_max_in_flight=2, webhook_max_in_flight_total=8)
    async with running(dispatcher):
        await receiver.arrived(2, "/slow")
        queued = time.monotonic()
        await rows.new_delivery(db, fast)
        [got] = await receiver.arrived(1, "/fast", within=2.0)
        latency = got.at - queued
        assert len(receiver.requests("/slow")) == 2  # its bound, while it is stuck
    assert latency < 1.0, latency
    print(f"\nfirst attempt behind a stuck endpoint: {latency * 1000:.0f} ms")


async def test_a_dispatcher_sends_at_most_its_bound_to_one_endpoint(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/bounded"))
    receiver.script("/bounded", then=Reply(200, delay=0.3))
    for _ in range(9):
        await rows.new_delivery(db, endpoint)
    assert await dispatcher_for(webhook_max_in_flight=3).run_once() == 9
    got = receiver.requests("/bounded")
    # Requests arrive in waves of at most three, each wave after the previous answer.
    starts = sorted(r.at for r in got)
    for i in range(3, 9):
        assert starts[i] - starts[i - 3] >= 0.25, starts


async def test_a_lease_keeps_other_dispatchers_off_until_it_runs_out(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/hook"))
    event_id = await rows.new_delivery(db, endpoint)
    # A dispatcher claims the delivery and dies before sending anything.
    now = utcnow()
    [leased], _ = await claims.claim(
        db, due=now, now=now, lease_seconds=60, busy=[], limit=10, room={}, per_endpoint=8
    )
    assert leased.attempt == 1
    row = await rows.delivery(db, endpoint, event_id)
    assert row["attempts"] == 1
    assert 59 <= (row["next_attempt_at"] - now).total_seconds() <= 61
    assert await dispatcher_for().run_once() == 0
    assert receiver.requests() == []

    # The lease runs out: another dispatcher makes the attempt (number 2).
    await rows.set_delivery(db, endpoint, event_id, next_attempt_at=utcnow())
    assert await dispatcher_for().run_once() == 1
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["attempts"]) == ("succeeded", 2)
    # The dead dispatcher's late outcome does not overwrite the newer attempt's.
    late = Verdict(FAILED, None, 500, "HTTP 500", EndpointEffect.COUNT_FAILURE)
    with pytest.raises(claims.Stale):
        await claims.record(db, leased, late, now=utcnow(), disable_after=1)
    assert (await rows.delivery(db, endpoint, event_id))["status"] == "succeeded"
    assert (await rows.webhook(db, endpoint))["enabled"] is True


async def test_a_replay_during_an_attempt_wins_over_that_attempt_s_outcome(
    db: Database, workspace: str, receiver: Receiver
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/hook"))
    event_id = await rows.new_delivery(db, endpoint)
    now = utcnow()
    [first], _ = await claims.claim(
        db, due=now, now=now, lease_seconds=60, busy=[], limit=10, room={}, per_endpoint=8
    )
    # Queued again by a replay (the count starts over), and claimed by another dispatcher.
    await rows.set_delivery(db, endpoint, event_id, attempts=0, next_attempt_at=utcnow())
    later = utcnow()
    [second], _ = await claims.claim(
        db, due=later, now=later, lease_seconds=60, busy=[], limit=10, room={}, per_endpoint=8
    )
    assert first.attempt == second.attempt == 1
    gone = Verdict(FAILED, None, 410, "HTTP 410", EndpointEffect.DISABLE_GONE)
    with pytest.raises(claims.Stale):
        await claims.record(db, first, gone, now=utcnow(), disable_after=1)
    assert (await rows.webhook(db, endpoint))["enabled"] is True
    ok = Verdict("succeeded", None, 200, None, EndpointEffect.RESET_FAILURES)
    assert await claims.record(db, second, ok, now=utcnow(), disable_after=1) is None
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["attempts"], row["last_response_status"]) == ("succeeded", 1, 200)


async def test_two_dispatchers_never_make_the_same_attempt(
    dispatch_url: str, db: Database, workspace: str, receiver: Receiver
) -> None:
    endpoints = [await rows.add_webhook(db, workspace, receiver.url(f"/e{i}")) for i in range(5)]
    expected = set()
    for _ in range(30):
        for endpoint in endpoints:
            event_id = await rows.add_event(db, workspace)
            await rows.queue(db, endpoint, event_id)
            expected.add((endpoint.url.rsplit("/", 1)[1], event_id))
    # Two processes' worth: each its own pool (on SQLite, its own writer connection).
    others = [Database(Settings(database_url=dispatch_url)) for _ in range(2)]
    try:
        # Room for a few attempts each, so that neither claims every delivery at once.
        small = dispatch_settings(
            dispatch_url, webhook_max_in_flight=4, webhook_max_in_flight_total=8
        )
        dispatchers = [Dispatcher(other, small) for other in others]
        async with running(*dispatchers):
            await receiver.arrived(len(expected), within=60)
            await asyncio.sleep(0.5)  # time for a duplicate to show
    finally:
        for other in others:
            await other.dispose()
    # Both took part (else this would prove nothing about claims racing).
    assert all(d.attempts_started > 10 for d in dispatchers), [
        d.attempts_started for d in dispatchers
    ]
    sent = Counter((r.path.lstrip("/"), r.headers["webhook-id"]) for r in receiver.requests())
    assert set(sent) == expected
    assert max(sent.values()) == 1, [key for key, n in sent.items() if n > 1]
    for endpoint in endpoints:
        for path, event_id in expected:
            if endpoint.url.endswith("/" + path):
                row = await rows.delivery(db, endpoint, event_id)
                assert (row["status"], row["attempts"]) == ("succeeded", 1)


async def test_a_first_attempt_starts_within_a_second_of_the_commit(
    db: Database,
    workspace: str,
    receiver: Receiver,
    dispatcher_for: Make,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/soon"))

    async def commit_to_attempt(wake: bool, first: int) -> list[float]:
        took = []
        dispatcher = dispatcher_for()
        async with running(dispatcher):
            await asyncio.sleep(0.3)  # idle
            for i in range(3):
                committed = time.monotonic()
                await rows.new_delivery(db, endpoint)
                if wake:
                    dispatcher.wake()  # as the publisher does after fanning out
                [*_, got] = await receiver.arrived(first + i + 1, "/soon", within=3.0)
                took.append(got.at - committed)
                await asyncio.sleep(0.2 + 0.1 * i)  # land at different points of the poll
        return took

    # Not woken, an idle dispatcher finds the delivery at its next poll (every 0.25 s).
    polled = await commit_to_attempt(wake=False, first=0)
    assert max(polled) < 1.0, polled
    # Woken, it does not wait for a poll: with polls 5 s apart, every attempt starts long
    # before the next one would (and a dispatcher that ignored the wake-up would fail
    # `arrived`, which waits 3 s). No tighter bound: on a loaded machine a wake-up is a
    # few turns of a busy event loop.
    monkeypatch.setattr(dispatcher_module, "IDLE_POLL_SECONDS", 5.0)
    woken = await commit_to_attempt(wake=True, first=3)
    assert max(woken) < 2.0, woken
    print(
        f"\ncommit to first attempt: by polling up to {max(polled) * 1000:.0f} ms, "
        f"woken up to {max(woken) * 1000:.0f} ms"
    )


async def test_an_attempt_cut_short_by_shutdown_is_due_again_at_once(
    db: Database,
    workspace: str,
    receiver: Receiver,
    dispatcher_for: Make,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(dispatcher_module, "SHUTDOWN_GRACE_SECONDS", 0.3)
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/stuck"))
    receiver.script("/stuck", Reply(200, delay=10))
    event_id = await rows.new_delivery(db, endpoint)
    async with running(dispatcher_for(webhook_timeout=30)):
        await receiver.arrived(1, "/stuck")
        stopped = time.monotonic()
    assert time.monotonic() - stopped < 3.0
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["attempts"], row["last_error"]) == ("pending", 1, INTERRUPTED)
    assert row["next_attempt_at"] <= utcnow()
    assert await dispatcher_for().run_once() == 1
    row = await rows.delivery(db, endpoint, event_id)
    assert (row["status"], row["attempts"]) == ("succeeded", 2)


async def test_the_loop_keeps_going_when_the_receiver_misbehaves(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/odd"))
    receiver.script("/odd", Reply(500), Reply(404), then=Reply(200))
    event_id = await rows.new_delivery(db, endpoint)
    async with running(dispatcher_for(webhook_retry_schedule="0.1,0.1,0.1")):
        row = await until(db, endpoint, event_id, "succeeded")
    assert row["attempts"] == 3


async def test_purge_removes_the_deliveries_of_purged_events(
    db: Database, workspace: str, receiver: Receiver
) -> None:
    endpoint = await rows.add_webhook(db, workspace, receiver.url("/hook"))
    old = await rows.add_event(db, workspace, created_at=utcnow() - timedelta(days=40))
    new = await rows.add_event(db, workspace)
    await rows.queue(db, endpoint, old)
    await rows.queue(db, endpoint, new)
    # The event purge takes the deliveries of the events it removes (their foreign key).
    assert await retention.purge(db, days=30) >= 1
    assert (await rows.delivery(db, endpoint, new))["status"] == "pending"
    with pytest.raises(AssertionError):
        await rows.delivery(db, endpoint, old)


async def test_the_loop_outlives_a_database_it_cannot_use(
    dispatch_url: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    if dispatch_url.startswith("sqlite"):
        url = f"sqlite:///{tmp_path / 'not-migrated.db'}"  # every claim fails: no tables
    else:
        url = dispatch_url.rsplit("/", 1)[0] + "/chatcrm_no_such_database"
    unreachable = Database(Settings(database_url=url, db_connect_timeout=1))
    try:
        async with running(Dispatcher(unreachable, dispatch_settings(url))):
            await asyncio.sleep(1.5)
    finally:
        await unreachable.dispose()
    warnings = [
        r for r in caplog.records if r.getMessage() == "webhook dispatch cannot claim deliveries"
    ]
    assert len(warnings) == 1  # once, not once per try


async def test_an_endpoint_that_answers_is_sent_more_at_once_and_a_failing_one_fewer(
    db: Database, workspace: str, receiver: Receiver, dispatcher_for: Make
) -> None:
    fast = await rows.add_webhook(db, workspace, receiver.url("/fast"))
    failing = await rows.add_webhook(db, workspace, receiver.url("/failing"))
    receiver.script("/failing", then=Reply(500))
    for _ in range(60):
        await rows.new_delivery(db, fast)
        await rows.new_delivery(db, failing)
    dispatcher = dispatcher_for(webhook_max_in_flight=40, webhook_max_in_flight_total=100)
    await dispatcher.run_once()
    windows = dispatcher._windows
    # Each success widened the answering endpoint's window by one, up to the cap; each
    # failure halved the other's, down to one attempt at a time.
    assert windows.of(fast.id) == 40
    assert windows.of(failing.id) == 1


async def test_claims_start_at_the_low_water_mark(db: Database, workspace: str) -> None:
    endpoint = await rows.add_webhook(db, workspace, "http://127.0.0.1:9/hook")
    now = utcnow()
    # No pending delivery due before now (less the margin for clocks a little behind).
    assert await claims.low_water(db, now=now) <= now - claims.MARK_MARGIN
    event_id = await rows.add_event(db, workspace)
    old = now - timedelta(minutes=5)
    await rows.queue(db, endpoint, event_id, due=old)
    mark = await claims.low_water(db, now=now)
    assert mark <= old - claims.MARK_MARGIN  # the mark never passes a pending delivery
    # A claim from a mark after a row's due time does not walk back to it; from the mark,
    # it does.
    later = dict(due=now, now=now, lease_seconds=60, busy=[], limit=1000, room={}, per_endpoint=8)
    taken, _ = await claims.claim(db, **later, since=old + timedelta(seconds=1))
    assert event_id not in {c.event_id for c in taken}
    taken, _ = await claims.claim(db, **later, since=mark)
    assert event_id in {c.event_id for c in taken}


async def test_each_lease_and_outcome_is_planned_for_its_values(
    workspace: str, receiver: Receiver, dispatch_url: str
) -> None:
    """A plan PostgreSQL caches for a statement after five runs is made without its values,
    from the table's size then: made while the deliveries were few, it scanned the whole
    table (or walked the due-rows index) for every lease and outcome once a backlog grew."""
    one = Database(Settings(database_url=dispatch_url, db_pool_size=1, db_max_overflow=0))
    try:
        if one.dialect != "postgresql" or await one.is_citus():
            pytest.skip("the plan cache of one PostgreSQL (Citus plans on its coordinator)")
        endpoint = await rows.add_webhook(one, workspace, receiver.url("/planned"))
        dispatcher = Dispatcher(one, dispatch_settings(dispatch_url))
        for _ in range(8):
            event_id = await rows.new_delivery(one, endpoint)
            assert await dispatcher.run_once() == 1
            assert (await rows.delivery(one, endpoint, event_id))["status"] == "succeeded"
        async with one.session() as conn:
            prepared = table(
                "pg_prepared_statements",
                column("statement"),
                column("generic_plans"),
                column("custom_plans"),
            )
            plans = await conn.fetch(
                select(prepared).where(prepared.c.statement.like("UPDATE webhook_deliveries SET %"))
            )
        assert len(plans) == 2, plans  # the lease and the outcome
        for plan in plans:
            assert (plan["generic_plans"], plan["custom_plans"]) == (0, 8), plan
    finally:
        await one.dispose()
