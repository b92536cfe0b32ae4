"""The retry schedule: the setting, the jitter, Retry-After."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcrm.config import Settings
from chatcrm.webhooks.schedule import RetrySchedule, ScheduleError, parse_retry_after

NOW = datetime(2026, 11, 27, 12, 0, 0, tzinfo=UTC)


def test_the_default_is_seven_waits_eight_attempts() -> None:
    schedule = RetrySchedule.parse(Settings().webhook_retry_schedule)
    assert schedule.waits == (5, 300, 1800, 7200, 18000, 36000, 36000)
    assert schedule.max_attempts == 8


def test_waits_may_be_fractions_and_spaced() -> None:
    assert RetrySchedule.parse(" 0.2, 1.5 ,3").waits == (0.2, 1.5, 3.0)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "it is empty"),
        ("5,,300", "'' is not a number"),
        ("5s,300", "'5s' is not a number"),
        ("5;300", "'5;300' is not a number"),
        ("-1", "'-1' is not a wait between 0 and"),
        ("nan", "'nan' is not a wait"),
        ("inf", "'inf' is not a wait"),
        ("1e9", "'1e9' is not a wait"),
        (",".join(["1"] * 101), "lists 101 waits"),
    ],
)
def test_a_malformed_setting_is_refused_with_a_clear_message(text: str, says: str) -> None:
    with pytest.raises(ScheduleError) as raised:
        RetrySchedule.parse(text)
    message = str(raised.value)
    assert message.startswith("CHATCRM_WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds")
    assert says in message


@given(
    waits=st.lists(st.floats(0, 100_000), min_size=1, max_size=10),
    attempt=st.integers(1, 12),
    seed=st.integers(0, 2**32),
)
def test_each_wait_is_within_20_percent_and_the_last_attempt_has_none(
    waits: list[float], attempt: int, seed: int
) -> None:
    schedule = RetrySchedule(tuple(waits))
    wait = schedule.wait_after(attempt, rng=random.Random(seed))
    if attempt >= len(waits) + 1:
        assert wait is None
    else:
        nominal = waits[attempt - 1]
        assert wait is not None
        assert nominal * 0.8 <= wait <= nominal * 1.2


def test_the_jitter_spreads_the_waits() -> None:
    schedule = RetrySchedule((100.0,))
    rng = random.Random(1)
    waits = [schedule.wait_after(1, rng=rng) for _ in range(1000)]
    assert min(w for w in waits if w is not None) < 82
    assert max(w for w in waits if w is not None) > 118


def test_a_channel_s_sends_are_retried_never_sooner_than_the_schedule_says() -> None:
    """K.2: "retried after 2 s, 10 s, 1 min, 5 min": spread only later. The sender's own
    schedule, as `chatcrm serve` makes it."""
    from chatcrm.channels.sending import Sender
    from chatcrm.config import Settings
    from chatcrm.db.database import Database

    settings = Settings(database_url="sqlite:///unused.db")
    schedule = Sender(Database(settings), settings).schedule
    rng = random.Random(1)
    for attempt, nominal in enumerate((2, 10, 60, 300), start=1):
        waits = [schedule.wait_after(attempt, rng=rng) or 0 for _ in range(500)]
        assert nominal <= min(waits) and max(waits) <= nominal * 1.2
        assert max(waits) > nominal * 1.15  # spread all the same
    assert schedule.wait_after(5) is None


@given(
    nominal=st.floats(0, 10_000),
    asked=st.floats(0, 100_000),
    seed=st.integers(0, 2**32),
)
def test_retry_after_wins_only_when_longer_and_at_most_an_hour(
    nominal: float, asked: float, seed: int
) -> None:
    schedule = RetrySchedule((nominal,))
    plain = schedule.wait_after(1, rng=random.Random(seed))
    wait = schedule.wait_after(1, retry_after=asked, rng=random.Random(seed))
    assert plain is not None and wait is not None
    assert wait == max(plain, min(asked, 3600.0))


def test_retry_after_is_no_reason_to_try_beyond_the_last_attempt() -> None:
    assert RetrySchedule((1.0,)).wait_after(2, retry_after=10) is None


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("120", 120.0),
        (" 0 ", 0.0),
        (format_datetime(NOW + timedelta(seconds=90), usegmt=True), 90.0),
        ("Fri, 27 Nov 2026 12:01:30 GMT", 90.0),
        ("Fri, 27 Nov 2026 11:00:00 GMT", 0.0),  # in the past
        # The obsolete RFC 850 form, which RFC 9110 says recipients must still read.
        ("Friday, 27-Nov-26 12:01:30 GMT", 90.0),
        ("-5", None),
        ("1.5", None),
        ("²", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_retry_after_is_seconds_or_an_http_date(header: str | None, seconds: float | None) -> None:
    assert parse_retry_after(header, NOW) == seconds
