"""The shared rate budget's leases (PostgreSQL, api/ratelimit.py): a key limited far above
its load is checked in the database once per lease, not once per request, and no number
of processes spends more than the bucket gives, plus what their leases hold."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sqlalchemy import select

from chatcrm.api.ratelimit import SharedRateLimiter
from chatcrm.auth import budgets
from chatcrm.config import Settings
from chatcrm.db.connection import Connection
from chatcrm.db.database import Database
from chatcrm.db.schema import rate_budgets

KEY = "01a214de-0000-7000-8000-00000000000a"


def with_db(url: str, work: Any) -> Any:
    async def run() -> Any:
        db = Database(Settings(database_url=url))
        try:
            return await work(db)
        finally:
            await db.dispose()

    return asyncio.run(run())


async def bucket(db: Database) -> tuple[float, float, int]:
    async with db.session() as conn:
        [row] = await conn.fetch(
            select(rate_budgets.c.tokens, rate_budgets.c.at, rate_budgets.c.taken)
        )
    return row["tokens"], row["at"], row["taken"]


def test_a_check_takes_what_it_asks_for_or_all_there_is(postgres_url: str) -> None:
    async def work(db: Database) -> list[tuple[int, float]]:
        out = []
        for count in (2, 5, 1):
            async with db.session() as conn:
                out.append(await budgets.spend(conn, KEY, rate=0.001, capacity=6, count=count))
        return out

    (first, second, third) = with_db(postgres_url, work)
    assert first[0] == 2 and round(first[1]) == 4
    assert second[0] == 4 and second[1] < 1  # five asked for, four there
    assert third[0] == 0 and third[1] < 1  # none there: refused, nothing spent


def test_tokens_given_back_return_to_the_bucket_up_to_its_capacity(postgres_url: str) -> None:
    async def work(db: Database) -> list[tuple[int, float]]:
        out = []
        for count, returned in ((5, 0), (1, 3), (1, 100)):
            async with db.session() as conn:
                out.append(
                    await budgets.spend(
                        conn, KEY, rate=0.001, capacity=10, count=count, returned=returned
                    )
                )
        return out

    spent = with_db(postgres_url, work)
    assert [taken for taken, _ in spent] == [5, 1, 1]
    assert [round(tokens) for _, tokens in spent] == [5, 7, 9]  # 5 + 3 - 1; full, less 1


def test_lease_sizes() -> None:
    limiter = SharedRateLimiter()
    assert limiter.lease_size(100, 200) == 1  # the default limit: every request checked
    assert limiter.lease_size(199, 398) == 1
    assert limiter.lease_size(10_000, 20_000) == 100  # 10 ms of the rate
    assert limiter.lease_size(10_000, 40) == 2  # a twentieth of the burst at most
    assert limiter.lease_size(1_000_000, 2_000_000) == 10_000


def test_a_high_limit_is_checked_once_per_lease(postgres_url: str) -> None:
    limiter = SharedRateLimiter()

    async def work(db: Database) -> tuple[list[int], tuple[Any, ...], tuple[Any, ...]]:
        remaining = []
        async with db.session() as conn:
            decision = await limiter.take(conn, KEY, rate=10_000, burst=20_000)
        assert decision is not None and decision.allowed
        remaining.append(decision.remaining)
        first = await bucket(db)
        for _ in range(98):
            async with db.session() as conn:
                decision = await limiter.take(conn, KEY, rate=10_000, burst=20_000)
            assert decision is not None and decision.allowed
            remaining.append(decision.remaining)
        after_99 = await bucket(db)
        async with db.session() as conn:
            await limiter.take(conn, KEY, rate=10_000, burst=20_000)
            await limiter.take(conn, KEY, rate=10_000, burst=20_000)  # a second lease
        return remaining, first, after_99 + await bucket(db)

    remaining, first, later = with_db(postgres_url, work)
    assert first[2] == 100  # one lease of 100 tokens
    assert later[:3] == first  # 99 requests, and the bucket was not checked again
    assert later[4] > first[1] and later[5] == 100  # the 101st took the next lease
    # The headers count down one per request: the bucket as last seen, and the lease.
    assert remaining == list(range(remaining[0], remaining[0] - 99, -1))
    assert remaining[0] == 19_999


def test_a_limit_past_the_highest_still_takes_a_lease(postgres_url: str) -> None:
    """A key limited to 3e11/s before RATE_MAX was checked answered every request 500:
    its lease, 3e9 tokens, did not fit the budget's integer. Leases stop at RATE_MAX's."""
    limiter = SharedRateLimiter()

    async def work(db: Database) -> Any:
        async with db.session() as conn:
            return await limiter.take(conn, KEY, rate=3e11, burst=6e11)

    decision = with_db(postgres_url, work)
    assert decision is not None and decision.allowed
    assert limiter.lease_size(3e11, 6e11) == limiter.lease_size(1_000_000, 2_000_000)


def test_a_limit_change_gives_the_lease_up(postgres_url: str) -> None:
    limiter = SharedRateLimiter()

    async def work(db: Database) -> tuple[Any, ...]:
        async with db.session() as conn:
            await limiter.take(conn, KEY, rate=10_000, burst=20_000)
        before = await bucket(db)
        async with db.session() as conn:
            decision = await limiter.take(conn, KEY, rate=5_000, burst=20_000)
        assert decision is not None and decision.allowed
        return before, await bucket(db)

    before, after = with_db(postgres_url, work)
    assert after[1] > before[1] and after[2] == 50  # checked again, a lease of 10 ms


def test_processes_together_never_spend_more_than_the_bucket_gives(postgres_url: str) -> None:
    """Three limiters (three processes) spend one key's budget as fast as they can: over
    the run they are allowed at most the burst, the refill and what their leases hold."""
    rate, burst = 400.0, 200.0  # leases of 4 tokens
    limiters = [SharedRateLimiter() for _ in range(3)]
    lease = limiters[0].lease_size(rate, burst)
    assert lease == 4

    async def work(db: Database) -> tuple[int, int, float]:
        allowed = refused = 0
        start = time.monotonic()
        while time.monotonic() - start < 1.5:
            for limiter in limiters:
                async with db.session() as conn:
                    decision = await limiter.take(conn, KEY, rate=rate, burst=burst)
                assert decision is not None
                if decision.allowed:
                    allowed += 1
                else:
                    refused += 1
                    assert decision.remaining == 0 and decision.retry_after >= 1
        return allowed, refused, time.monotonic() - start

    allowed, refused, elapsed = with_db(postgres_url, work)
    assert refused > 0, "the load did not exceed the budget"
    assert allowed <= burst + rate * elapsed + len(limiters) * lease, (allowed, elapsed)
    # Leases strand at most what they hold: the key still gets nearly all of its budget.
    assert allowed >= burst + rate * (elapsed - 0.5) - len(limiters) * lease, (allowed, elapsed)


def test_a_lease_is_given_back_after_100_ms(postgres_url: str) -> None:
    """What a process did not spend of a lease goes back to the bucket with its next
    check, so a key's budget is shared out again at least every 100 ms."""
    limiter = SharedRateLimiter()
    rate, burst = 1_000.0, 4_000.0  # leases of 10 tokens

    async def work(db: Database) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
        async with db.session() as conn:
            await budgets.spend(conn, KEY, rate=rate, capacity=burst, count=4_000)  # empty
            await asyncio.sleep(0.03)  # refilled with 30 tokens
            await limiter.take(conn, KEY, rate=rate, burst=burst)  # 10 taken, 1 spent
        leased = await bucket(db)
        await asyncio.sleep(limiter.LEASE_LIFETIME + 0.02)
        async with db.session() as conn:
            await limiter.take(conn, KEY, rate=rate, burst=burst)  # 9 back, 10 taken
        return leased, await bucket(db)

    (tokens, at, taken), (tokens_after, at_after, taken_after) = with_db(postgres_url, work)
    assert taken == taken_after == 10
    refill = (at_after - at) * rate
    returned = tokens_after + taken_after - tokens - refill
    assert abs(returned - 9) < 0.01, (returned, tokens, tokens_after, refill)


def test_requests_at_once_wait_for_the_one_lease_being_taken(postgres_url: str) -> None:
    """Ten requests of one key arrive while none of the process's lease is left: one of
    them takes the next lease and the nine others spend it, one statement in all."""
    limiter = SharedRateLimiter()
    rate, burst = 1_000.0, 4_000.0  # leases of 10 tokens

    async def work(db: Database) -> tuple[list[bool], tuple[Any, ...], tuple[Any, ...]]:
        async with db.session() as conn:
            await budgets.spend(conn, KEY, rate=rate, capacity=burst, count=4_000)  # empty
        await asyncio.sleep(0.05)  # refilled with 50 tokens: far below the capacity
        before = await bucket(db)

        async def one() -> bool:
            async with db.session() as conn:
                decision = await limiter.take(conn, KEY, rate=rate, burst=burst)
            return decision is not None and decision.allowed

        allowed = await asyncio.gather(*(one() for _ in range(10)))
        return allowed, before, await bucket(db)

    allowed, (tokens, at, _), (tokens_after, at_after, taken) = with_db(postgres_url, work)
    assert allowed == [True] * 10
    spent = tokens + (at_after - at) * rate - tokens_after
    assert taken == 10 and abs(spent - 10) < 0.01, spent  # one lease, not ten


def test_requests_holding_connections_never_wait_for_a_lease_taker_that_needs_one(
    postgres_url: str,
) -> None:
    """The key's next lease was being taken by a request holding no connection yet (it had
    found the key in the cache), waiting for one from a full pool; the pool was full of
    the key's other requests (they had read the key from the database) waiting for that
    lease. Nothing moved until the pool's wait ran out: 503s, every few seconds, at full
    speed. A request holding a connection takes a lease of its own instead of waiting."""
    settings = Settings(
        database_url=postgres_url, db_pool_size=2, db_max_overflow=0, db_connect_timeout=3
    )

    async def work() -> float:
        db = Database(settings)
        limiter = SharedRateLimiter()
        rate = dict(rate=100_000.0, burst=200_000.0)
        try:
            holders = [Connection(db), Connection(db)]
            for conn in holders:
                await conn.fetch(select(rate_budgets.c.key_id).limit(1))  # the pool is full
            started = time.monotonic()
            taker = Connection(db)
            taking = asyncio.ensure_future(limiter.take(taker, KEY, **rate))
            await asyncio.sleep(0.05)  # the taker waits for a connection of the pool

            async def holder(conn: Connection) -> None:
                assert await limiter.take(conn, KEY, **rate) is not None
                await conn.finish(commit=True)  # its request ends: its connection is free

            await asyncio.gather(*(holder(c) for c in holders))
            assert await taking is not None
            await taker.finish(commit=True)
            return time.monotonic() - started
        finally:
            await db.dispose()

    assert asyncio.run(work()) < 2.0  # not the pool's 3 s wait, and no PoolExhausted
