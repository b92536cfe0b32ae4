"""Token-bucket rate limiting per API key, with the `RateLimit-*` headers.

PostgreSQL: one bucket per key in the database (auth/budgets.py), shared by every process
and node, checked with one statement on the request's own connection before the handler
(which then reuses that connection). SQLite is one node: each worker process keeps its own
buckets with 1/N of the rate and burst (`chatcrm serve --workers N`), so together they
never allow more than the budget (docs/operations.md, "Rate limits").
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Protocol

from chatcrm.auth import budgets
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
    from the same bucket."""

    async def take(
        self, conn: Connection, key_id: str, *, rate: float, burst: float
    ) -> Decision | None:
        if rate <= 0:
            return None
        capacity = max(1.0, burst)
        allowed, tokens = await budgets.spend(conn, key_id, rate=rate, capacity=capacity)
        return Decision.of(allowed=allowed, tokens=tokens, capacity=capacity, rate=rate)


class RateLimiter:
    """Buckets in this process, enforcing `share` of every limit (SQLite: one node)."""

    MAX_BUCKETS = 100_000

    def __init__(self, *, share: float = 1.0) -> None:
        # Fraction of each limit this process enforces (1/N with N worker processes).
        self.share = share
        self._buckets: dict[str, tuple[float, float]] = {}

    async def take(
        self, conn: Connection, key_id: str, *, rate: float, burst: float
    ) -> Decision | None:
        return self.take_here(key_id, rate=rate, burst=burst)

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
