"""Timestamps (contract section 0): ISO 8601 UTC, always with fractional seconds and `Z`;
input accepts `Z` or an offset (normalised to UTC), a naive input is taken as UTC."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcrm.core.timestamps import iso, parse_iso, to_utc, utcnow

WIRE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")

utc_datetimes = st.datetimes(
    min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59, 999999)
).map(lambda d: d.replace(tzinfo=UTC))
offsets = st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59).map(
    lambda m: timezone(timedelta(minutes=m))
)
# Away from the ends of the calendar, so any offset can be converted to UTC.
inner_naive = st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31))


# --- iso ---------------------------------------------------------------------------------


def test_iso_contract_example() -> None:
    value = datetime(2025, 4, 7, 21, 56, 19, 325443, tzinfo=UTC)
    assert iso(value) == "2025-04-07T21:56:19.325443Z"


def test_iso_always_has_six_fractional_digits() -> None:
    assert iso(datetime(2025, 4, 7, 21, 56, 19, tzinfo=UTC)) == "2025-04-07T21:56:19.000000Z"
    assert iso(datetime(2025, 4, 7, 21, 56, 19, 5, tzinfo=UTC)) == "2025-04-07T21:56:19.000005Z"
    assert iso(datetime(2025, 1, 1, tzinfo=UTC)) == "2025-01-01T00:00:00.000000Z"


def test_iso_converts_aware_values_to_utc() -> None:
    lima = datetime(2025, 4, 7, 16, 56, 19, 1, tzinfo=ZoneInfo("America/Lima"))  # UTC-5
    assert iso(lima) == "2025-04-07T21:56:19.000001Z"
    plus = datetime(2025, 1, 1, 3, 30, tzinfo=timezone(timedelta(hours=5, minutes=30)))
    assert iso(plus) == "2024-12-31T22:00:00.000000Z"
    minus = datetime(2025, 12, 31, 23, 0, tzinfo=timezone(timedelta(hours=-2)))
    assert iso(minus) == "2026-01-01T01:00:00.000000Z"


def test_iso_zone_at_zero_offset() -> None:
    london_winter = datetime(2025, 1, 15, 10, 0, tzinfo=ZoneInfo("Europe/London"))
    assert iso(london_winter) == "2025-01-15T10:00:00.000000Z"
    london_summer = datetime(2025, 7, 15, 10, 0, tzinfo=ZoneInfo("Europe/London"))
    assert iso(london_summer) == "2025-07-15T09:00:00.000000Z"


def test_iso_takes_naive_values_as_utc() -> None:
    assert iso(datetime(2025, 4, 7, 21, 56, 19, 325443)) == "2025-04-07T21:56:19.325443Z"


def test_iso_pads_small_years() -> None:
    assert iso(datetime(5, 2, 3, 4, 5, 6, tzinfo=UTC)) == "0005-02-03T04:05:06.000000Z"


def test_iso_of_none_is_none() -> None:
    assert iso(None) is None


def test_utcnow_is_aware_utc_and_renders_on_the_wire() -> None:
    now = utcnow()
    assert now.utcoffset() == timedelta(0)
    assert abs(now - datetime.now(UTC)) < timedelta(seconds=5)
    assert WIRE.match(iso(now) or "")


def test_to_utc() -> None:
    assert to_utc(datetime(2025, 1, 1, 12)) == datetime(2025, 1, 1, 12, tzinfo=UTC)
    assert to_utc(datetime(2025, 1, 1, 12)).utcoffset() == timedelta(0)
    shifted = to_utc(datetime(2025, 1, 1, 12, tzinfo=timezone(timedelta(hours=3))))
    assert shifted.utcoffset() == timedelta(0)
    assert (shifted.hour, shifted.minute) == (9, 0)


# --- parse_iso ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2025-04-07T21:56:19.325443Z", datetime(2025, 4, 7, 21, 56, 19, 325443)),
        ("2025-04-07T21:56:19Z", datetime(2025, 4, 7, 21, 56, 19)),
        ("2025-04-07T21:56:19+00:00", datetime(2025, 4, 7, 21, 56, 19)),
        ("2025-04-07T21:56:19-00:00", datetime(2025, 4, 7, 21, 56, 19)),
        ("2025-04-07T21:56:19+05:30", datetime(2025, 4, 7, 16, 26, 19)),
        ("2025-04-07T21:56:19-03:00", datetime(2025, 4, 8, 0, 56, 19)),
        ("2025-04-07T21:56:19.5-0300", datetime(2025, 4, 8, 0, 56, 19, 500000)),
        ("2025-12-31T23:30:00-01:00", datetime(2026, 1, 1, 0, 30)),
        ("2025-04-07T21:56:19", datetime(2025, 4, 7, 21, 56, 19)),
        ("2025-04-07T21:56:19.325443", datetime(2025, 4, 7, 21, 56, 19, 325443)),
        ("2025-04-07T21:56", datetime(2025, 4, 7, 21, 56)),
        ("2025-04-07", datetime(2025, 4, 7)),
        ("2024-02-29", datetime(2024, 2, 29)),
        # ISO 8601's basic format.
        ("20250407T215619Z", datetime(2025, 4, 7, 21, 56, 19)),
        ("20250407T215619+0530", datetime(2025, 4, 7, 16, 26, 19)),
        ("20250407T2156", datetime(2025, 4, 7, 21, 56)),
        ("20250407", datetime(2025, 4, 7)),
        # Ordinal and week dates, a comma before the fraction, a space (RFC 3339) or lower
        # case letters (RFC 3339 too).
        ("2026-001T10:00:00Z", datetime(2026, 1, 1, 10)),
        ("2024-366", datetime(2024, 12, 31)),
        ("2026-W01-1T10:00Z", datetime(2025, 12, 29, 10)),
        ("2025-04-07T21:56:19,5Z", datetime(2025, 4, 7, 21, 56, 19, 500000)),
        ("2025-04-07 21:56:19", datetime(2025, 4, 7, 21, 56, 19)),
        ("2025-04-07t21:56:19z", datetime(2025, 4, 7, 21, 56, 19)),
    ],
)
def test_parse_iso_accepts_and_normalises_to_utc(text: str, expected: datetime) -> None:
    parsed = parse_iso(text)
    assert parsed.tzinfo is not None
    assert parsed.utcoffset() == timedelta(0)
    assert parsed == expected.replace(tzinfo=UTC)
    # Field values are the UTC ones (not merely the same instant in another zone).
    assert parsed.replace(tzinfo=None) == expected
    assert iso(parsed) == iso(expected)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "garbage",
        "not a date at all",
        "2025",
        "2025-13-01",
        "2025-00-10",
        "2025-02-29",
        "2025-04-31",
        "2025-04-07T25:00:00Z",
        "2025-04-07T21:60:00Z",
        "2025-04-07T21:56:19+25:00",
        "2025-4-7",
        "07/04/2025",
        "04-07-2025",
        "April 7, 2025",
        "2025-04-07T21:56:19Zjunk",
        "2025-04-07 garbage",
        "２０２５-04-07",
        "2025-04-07T21:56:19Z" + " " * 60,
        "20250407X215619",
        "2025-04-07X21:56:19Z",  # only T (or a space) between the date and the time
        "2025-04-07T21:56:19 +05:00",
        "2025-04-07T21:56:19+05:00:30",  # no seconds in an offset
        "2025-04-07T21:56:19.Z",  # a fraction has digits
        "2025-366",  # not a leap year
        "2025-000",
        "20251301",
        "2025040",
        "12345678",
        "1" * 100,
        "0001-01-01T00:00:00+01:00",  # before year 1 once in UTC
        "9999-12-31T23:59:59-01:00",  # after year 9999 once in UTC
    ],
)
def test_parse_iso_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_iso(text)


@pytest.mark.parametrize(
    "value",
    [None, 20250407, Decimal("2025"), True, b"2025-04-07", ["2025-04-07"], date(2025, 4, 7)],
)
def test_parse_iso_rejects_non_strings(value: object) -> None:
    with pytest.raises(ValueError):
        parse_iso(value)  # type: ignore[arg-type]


def test_parse_iso_rejects_datetime_objects() -> None:
    with pytest.raises(ValueError):
        parse_iso(datetime(2025, 4, 7, tzinfo=UTC))  # type: ignore[arg-type]


# --- properties --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(utc_datetimes)
def test_round_trip_of_utc_datetimes(dt: datetime) -> None:
    text = iso(dt)
    assert text is not None
    assert WIRE.match(text), text
    parsed = parse_iso(text)
    assert parsed == dt
    assert parsed.utcoffset() == timedelta(0)
    assert parsed.microsecond == dt.microsecond
    assert iso(parsed) == text


@settings(max_examples=300, deadline=None)
@given(inner_naive, offsets)
def test_any_offset_is_normalised_to_the_same_instant(naive: datetime, tz: timezone) -> None:
    aware = naive.replace(tzinfo=tz)
    parsed = parse_iso(aware.isoformat())
    assert parsed == aware
    assert parsed.utcoffset() == timedelta(0)
    text = iso(aware)
    assert text is not None and WIRE.match(text)
    assert parse_iso(text) == aware


@settings(max_examples=200, deadline=None)
@given(st.datetimes(min_value=datetime(1, 1, 1)))
def test_naive_input_is_taken_as_utc(naive: datetime) -> None:
    assert parse_iso(naive.isoformat()) == naive.replace(tzinfo=UTC)
    assert iso(naive) == iso(naive.replace(tzinfo=UTC))


@settings(max_examples=200, deadline=None)
@given(st.dates())
def test_a_date_is_midnight_utc(day: date) -> None:
    parsed = parse_iso(day.isoformat())
    assert parsed == datetime(day.year, day.month, day.day, tzinfo=UTC)


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=70))
def test_parse_iso_only_ever_raises_value_error(text: str) -> None:
    try:
        parsed = parse_iso(text)
    except ValueError:
        return
    assert parsed.utcoffset() == timedelta(0)
    assert WIRE.match(iso(parsed) or "")
