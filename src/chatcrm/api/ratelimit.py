"""Token-bucket rate limiting per API key, with the `RateLimit-*` headers.

Buckets live in each worker process. `chatcrm serve --workers N` gives every worker 1/N of
the configured rate and burst, so one node enforces the configured limit; several nodes
behind a balancer each enforce their own share (see docs/operations.md).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    limit: int  # bucket capacity (burst)
    remaining: int  # whole requests left right now
    reset: int  # seconds until the bucket is full again
    retry_after: int  # seconds until one request is allowed (when refused)

    def headers(self) -> list[tuple[bytes, bytes]]:
        out = [
            (b"ratelimit-limit", str(self.limit).encode()),
            (b"ratelimit-remaining", str(self.remaining).encode()),
            (b"ratelimit-reset", str(self.reset).encode()),
        ]
        if not self.allowed:
            out.append((b"retry-after", str(self.retry_after).encode()))
        return out


class RateLimiter:
    MAX_BUCKETS = 100_000

    def __init__(self, *, share: float = 1.0) -> None:
        # Fraction of each limit this process enforces (1/N with N worker processes).
        self.share = share
        self._buckets: dict[str, tuple[float, float]] = {}

    def take(self, key_id: str, *, rate: float, burst: float) -> Decision | None:
        """Spend one token of the key's bucket; None when the key is not limited."""
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
        return Decision(
            allowed=allowed,
            limit=int(capacity),
            remaining=int(tokens),
            reset=math.ceil((capacity - tokens) / rate),
            retry_after=0 if allowed else max(1, math.ceil((1.0 - tokens) / rate)),
        )
