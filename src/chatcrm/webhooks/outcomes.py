"""What an attempt gave (`Outcome`) and what it means for the delivery and its endpoint
(`Verdict`), contract D.4: 2xx succeeds; 410 fails the delivery and disables the endpoint
("gone"); anything else is retried on the schedule, and after the last attempt the delivery
fails and counts towards disabling the endpoint ("failing")."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum

from chatcrm.webhooks.schedule import RetrySchedule

PENDING = "pending"
SUCCEEDED = "succeeded"
FAILED = "failed"
GONE = "gone"
FAILING = "failing"


@dataclass(frozen=True, slots=True)
class Outcome:
    """One attempt: the receiver's status (None when it never answered) or why it failed."""

    status: int | None
    error: str | None = None  # None: the receiver answered 2xx
    retry_after: float | None = None  # seconds a 429/503 answer asked for

    @property
    def succeeded(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def overloaded(self) -> bool:
        """The receiver could not keep up: it timed out, or answered 429 or a 5xx."""
        if self.status is None:
            return (self.error or "").startswith("timeout")
        return self.status == 429 or self.status >= 500


class EndpointEffect(Enum):
    NONE = "none"
    RESET_FAILURES = "reset"  # a delivery succeeded
    DISABLE_GONE = "gone"  # 410
    COUNT_FAILURE = "count"  # a delivery failed for good


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str  # pending, succeeded or failed
    next_attempt_at: datetime | None
    response_status: int | None
    error: str | None
    effect: EndpointEffect
    wait: float | None = None  # seconds until the retry, for the log


def judge(
    outcome: Outcome,
    *,
    attempt: int,
    schedule: RetrySchedule,
    now: datetime,
    rng: random.Random | None = None,
) -> Verdict:
    if outcome.succeeded:
        return Verdict(SUCCEEDED, None, outcome.status, None, EndpointEffect.RESET_FAILURES)
    error = outcome.error or f"HTTP {outcome.status}"
    if outcome.status == 410:
        return Verdict(FAILED, None, 410, error, EndpointEffect.DISABLE_GONE)
    wait = schedule.wait_after(attempt, retry_after=outcome.retry_after, rng=rng)
    if wait is None:
        return Verdict(FAILED, None, outcome.status, error, EndpointEffect.COUNT_FAILURE)
    return Verdict(
        PENDING, now + timedelta(seconds=wait), outcome.status, error, EndpointEffect.NONE, wait
    )
