"""Token-bucket rate limiting per API key, with the `RateLimit-*` headers.

PostgreSQL: one bucket per key in the database (auth/budgets.py), shared by every process
and node, checked with one statement on the request's own connection before the handler
(which then reuses that connection). SQLite is one node: each worker process keeps its own
buckets with 1/N of the rate and burst (`chatcrm serve --workers N`), so together they
never allow more than the budget (docs/operations.md, "Rate limits").
"""

from __future__ import annotations

import asyncio
import math
import time
from dataclasses import dataclass
from typing import Protocol

from chatcrm.auth import budgets
from chatcrm.config import RATE_MAX
from chatcrm.db.database import Connection


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    limit: int  # bucket capacity (burst)
    remaining: int  # whole requests left right now
    reset: int  # seconds until the bucket is full again
    retry_after: int  # seconds until one request is allowed (when refused)

    @classmethod
    def of(cls, *, allowed: bool, tokens: float, capacity: float, rate: float) -> Decision:
        """The answer's figures from the bucket's state after the request."""
        return cls(
            allowed=allowed,
            limit=int(capacity),
            remaining=int(tokens),
            reset=math.ceil((capacity - tokens) / rate),
            retry_after=0 if allowed else max(1, math.ceil((1.0 - tokens) / rate)),
        )

    def headers(self) -> list[tuple[bytes, bytes]]:
        out = [
            (b"ratelimit-limit", str(self.limit).encode()),
            (b"ratelimit-remaining", str(self.remaining).encode()),
            (b"ratelimit-reset", str(self.reset).encode()),
        ]
        if not self.allowed:
            out.append((b"retry-after", str(self.retry_after).encode()))
        return out


class Limiter(Protocol):
    async def take(
        self, conn: Connection, key_id: str, *, rate: float, burst: float
    ) -> Decision | None:
        """Spend one request of the key's budget; None when the key is not limited."""
        ...


class SharedRateLimiter:
    """The key's one budget in the database (PostgreSQL): every process and node spends
    from the same bucket.

    A key with a high rate takes its tokens in leases: one check takes up to 10 ms of the
    key's rate (a twentieth of its burst at most) and this process spends the rest on the
    key's next requests, so a key limited far above its load costs one statement per lease,
    not one per request. Below 200 requests/s a lease is one token: every request is
    checked in the database. A lease is held at most 100 ms, or until the key's limit
    changes: the next check gives back what is left of it, in the same statement.
    docs/operations.md 4.5 gives the bound this makes.

    One request of a process takes a key's next lease; the key's other requests that
    arrive meanwhile wait for it rather than each taking a lease of their own (at full
    speed that was about fourteen statements where one does, each reserving a lease this
    process then held: docs/performance.md) — except a request already holding a
    connection of the pool, which takes its own: waiting, it could hold the connection
    the taker waits for."""

    LEASE_SECONDS = 0.01
    LEASE_OF_BURST = 0.05
    LEASE_LIFETIME = 0.1
    MAX_LEASES = 100_000

    def __init__(self) -> None:
        self._leases: dict[str, _Lease] = {}
        self._leasing: dict[str, asyncio.Future[None]] = {}  # a lease being taken, by key

    def lease_size(self, rate: float, capacity: float) -> int:
        # A limit set before RATE_MAX was checked may be higher: its lease still fits.
        size = min(rate, RATE_MAX) * self.LEASE_SECONDS
        return max(1, int(min(size, capacity * self.LEASE_OF_BURST)))

    async def take(
        self, conn: Connection, key_id: str, *, rate: float, burst: float
    ) -> Decision | None:
        if rate <= 0:
            return None
        capacity = max(1.0, burst)
        size = self.lease_size(rate, capacity)
        returned = 0
        while True:
            now = time.monotonic()
            lease = self._leases.get(key_id)
            if lease is not None and not lease.serves(rate, capacity, now):
                del self._leases[key_id]  # before the await: given back once
                returned, lease = returned + lease.left, None
            if lease is not None and lease.left >= 1:
                lease.left -= 1
                return lease.decision()
            taking = self._leasing.get(key_id)
            if taking is None or size == 1:  # a lease of one token serves one request
                break
            if conn.holds_connection:
                # Never wait holding a connection of the pool: the taker may be waiting for
                # one, from a pool full of such waiters (nothing would move until the
                # pool's wait ran out: 503s). Take a lease of its own instead.
                break
            # Shielded: a waiter that is cancelled leaves the taker's request alone.
            await asyncio.shield(taking)
        # The key's taker, unless another is under way (this request did not wait for it).
        taking = None
        if size > 1 and key_id not in self._leasing:
            taking = self._leasing[key_id] = asyncio.get_running_loop().create_future()
        try:
            taken, tokens = await budgets.spend(
                conn, key_id, rate=rate, capacity=capacity, count=size, returned=returned
            )
        finally:
            if taking is not None:
                # Its waiters look again: at the lease, or (refused, failed) take their own.
                del self._leasing[key_id]
                taking.set_result(None)
        if taken == 0:
            return Decision.of(allowed=False, tokens=tokens, capacity=capacity, rate=rate)
        lease = self._leases.get(key_id)  # another request may have leased meanwhile
        if lease is None or not lease.serves(rate, capacity, now):
            if len(self._leases) >= self.MAX_LEASES:
                self._leases.clear()  # what they held is lost: fewer requests, never more
            lease = self._leases[key_id] = _Lease(rate, capacity, now + self.LEASE_LIFETIME)
        lease.left += taken - 1
        lease.bucket = tokens
        return lease.decision()


@dataclass(slots=True)
class _Lease:
    """Tokens a process took from a key's shared bucket and has not spent yet."""

    rate: float
    capacity: float
    until: float  # monotonic time after which what is left is given up
    left: int = 0
    bucket: float = 0.0  # what the shared bucket held at the last check

    def serves(self, rate: float, capacity: float, now: float) -> bool:
        return now < self.until and rate == self.rate and capacity == self.capacity

    def decision(self) -> Decision:
        # What the key can still send: the shared bucket as last seen, and this lease.
        tokens = min(self.capacity, self.bucket + self.left)
        return Decision.of(allowed=True, tokens=tokens, capacity=self.capacity, rate=self.rate)


class LocalLimiter:
    """A limiter that decides without the database: `take` is `take_here`."""

    async def take(
        self, conn: Connection, key_id: str, *, rate: float, burst: float
    ) -> Decision | None:
        return self.take_here(key_id, rate=rate, burst=burst)

    def take_here(self, key_id: str, *, rate: float, burst: float) -> Decision | None:
        raise NotImplementedError


class RateLimiter(LocalLimiter):
    """Buckets in this process, enforcing `share` of every limit (SQLite: one node)."""

    MAX_BUCKETS = 100_000

    def __init__(self, *, share: float = 1.0) -> None:
        # Fraction of each limit this process enforces (1/N with N worker processes).
        self.share = share
        self._buckets: dict[str, tuple[float, float]] = {}

    def take_here(self, key_id: str, *, rate: float, burst: float) -> Decision | None:
        if rate <= 0:
            return None
        rate *= self.share
        capacity = max(1.0, burst * self.share)
        now = time.monotonic()
        tokens, last = self._buckets.get(key_id, (capacity, now))
        tokens = min(capacity, tokens + (now - last) * rate)
        allowed = tokens >= 1.0
        if allowed:
            tokens -= 1.0
        if len(self._buckets) > self.MAX_BUCKETS:
            self._buckets.clear()
        self._buckets[key_id] = (tokens, now)
        return Decision.of(allowed=allowed, tokens=tokens, capacity=capacity, rate=rate)
