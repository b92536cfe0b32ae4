"""When a failed delivery is tried again (contract D.4).

`CHATCRM_WEBHOOK_RETRY_SCHEDULE` lists the waits before each retry, in seconds (floats are
allowed, so tests can wait 0.2 s); one attempt more than there are waits is made in all.
Each wait is spread by ±20 % so that the deliveries of one outage do not all come back at
the same instant. A receiver answering 429 or 503 may ask for a longer wait with
`Retry-After` (seconds or an HTTP date); it is honoured up to one hour.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

SETTING = "CHATCRM_WEBHOOK_RETRY_SCHEDULE"
JITTER = 0.2
RETRY_AFTER_CAP = 3600.0
RETRY_AFTER_STATUSES = frozenset({429, 503})
# A wait beyond a week is a typo (minutes or milliseconds meant), not a schedule.
MAX_WAIT = 7 * 24 * 3600.0
MAX_RETRIES = 100
_SECONDS = re.compile(r"[0-9]{1,12}")


class ScheduleError(ValueError):
    """The setting cannot be read; the message says what is wrong and how it should look."""


@dataclass(frozen=True, slots=True)
class RetrySchedule:
    waits: tuple[float, ...]
    # Each wait times a factor drawn from this range: ±20 % for webhooks (D.4 says so);
    # a channel's sends only later, never sooner (K.2: "retried after 2 s, 10 s…").
    spread: tuple[float, float] = (1 - JITTER, 1 + JITTER)

    def never_sooner(self) -> RetrySchedule:
        return RetrySchedule(self.waits, (1.0, 1 + JITTER))

    @classmethod
    def parse(cls, text: str, setting: str = SETTING) -> RetrySchedule:
        """Read the setting (`5,300,1800`); `ScheduleError` when it is not a list of waits."""
        shape = f"{setting} must be comma-separated seconds, like 5,300,1800"
        parts = [part.strip() for part in text.split(",")]
        if not text.strip():
            raise ScheduleError(f"{shape}; it is empty")
        if len(parts) > MAX_RETRIES:
            raise ScheduleError(f"{shape}; it lists {len(parts)} waits (at most {MAX_RETRIES})")
        waits = []
        for part in parts:
            try:
                wait = float(part)
            except ValueError:
                raise ScheduleError(f"{shape}; {part!r} is not a number") from None
            if not math.isfinite(wait) or wait < 0 or wait > MAX_WAIT:
                raise ScheduleError(
                    f"{shape}; {part!r} is not a wait between 0 and {MAX_WAIT:.0f} seconds"
                )
            waits.append(wait)
        return cls(tuple(waits))

    @property
    def max_attempts(self) -> int:
        return len(self.waits) + 1

    def wait_after(
        self,
        attempt: int,
        *,
        retry_after: float | None = None,
        rng: random.Random | None = None,
    ) -> float | None:
        """Seconds until the next attempt after attempt number `attempt` (1 = the first)
        failed; None when that was the last one. `retry_after`: what the receiver asked for
        (only 429 and 503 answers count; the caller filters)."""
        if attempt >= self.max_attempts:
            return None
        base = self.waits[max(attempt, 1) - 1]
        wait = base * (rng or random).uniform(*self.spread)
        if retry_after is not None:
            wait = max(wait, min(retry_after, RETRY_AFTER_CAP))
        return wait


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """A `Retry-After` header in seconds from `now`: delta-seconds or an HTTP date (RFC 9110
    §10.2.3). None when absent or unreadable; a date in the past is 0."""
    if value is None:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(int(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # a "-0000" zone: UTC, as RFC 5322 reads it
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())
