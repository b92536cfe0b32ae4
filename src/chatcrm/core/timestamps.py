"""The timestamp wire format: ISO 8601 UTC, always six fractional digits and `Z`
(`2025-04-07T21:56:19.325443Z`). Rendered in Python (`iso`) or by the database in the
SELECT list (`iso_sql`, so reads need no per-value work in Python); parsed leniently
from any ISO 8601 input (`parse_iso`).
"""

import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, case, func, literal_column

_PG_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'


def utcnow() -> datetime:
    return datetime.now(UTC)


def to_utc(value: datetime) -> datetime:
    """Aware UTC datetime; a naive value is taken as UTC."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def iso(value: datetime | None) -> str | None:
    """`2025-04-07T21:56:19.325443Z`: always six fractional digits, always `Z`."""
    if value is None:
        return None
    if value.tzinfo is not None and value.utcoffset():
        value = value.astimezone(UTC)
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}T"
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}Z"
    )


def iso_sql(column: Any, dialect: str) -> ColumnElement[str]:
    """The same text as `iso`, rendered by the database from a timestamp column."""
    if dialect == "postgresql":
        # asyncpg stores datetime.max / datetime.min as ±infinity, which to_char cannot show.
        return case(
            (column == literal_column("'infinity'::timestamptz"), "9999-12-31T23:59:59.999999Z"),
            (column == literal_column("'-infinity'::timestamptz"), "0001-01-01T00:00:00.000000Z"),
            else_=func.to_char(func.timezone("UTC", column), _PG_FORMAT),
        )
    # SQLite stores `YYYY-MM-DD HH:MM:SS.ffffff` (always six fractional digits, db/types.py).
    return func.replace(column, " ", "T").op("||")("Z")


# ISO 8601's forms, extended and basic: a calendar date (`2026-12-31`, `20261231`), an ordinal
# one (`2026-365`; the basic `2026365` is refused, too like a mistyped calendar date) or a
# week date (`2026-W53-4`, `2026W534`); then, after `T` (or a space, as RFC 3339 allows),
# hours, minutes and seconds with a fraction after `.` or `,`; then `Z` or an offset in
# hours and minutes. `datetime.fromisoformat` alone takes any separator (`2026-01-01X10:00`)
# and offsets with seconds, and no ordinal date.
_ISO_8601 = re.compile(
    r"(?P<date>\d{4}(?:-\d{2}-\d{2}|-(?P<ordinal>\d{3})|-W\d{2}(?:-\d)?|\d{4}|W\d{2}\d?))"
    r"(?:[Tt ](?P<time>\d{2}(?::?\d{2}(?::?\d{2}(?:[.,]\d+)?)?)?)"
    r"(?P<offset>[Zz]|[+-]\d{2}(?::?\d{2})?)?)?",
    re.ASCII,
)


def parse_iso(text: str) -> datetime:
    """Parse any ISO 8601 date or date-time; offsets are normalised to UTC, naive means UTC.

    Raises ValueError for anything else (including out-of-range years after conversion).
    """
    if not isinstance(text, str) or not 8 <= len(text) <= 64:
        raise ValueError("not an ISO 8601 timestamp")
    found = _ISO_8601.fullmatch(text)
    if found is None:
        raise ValueError("not an ISO 8601 timestamp")
    day = found["date"]
    if found["ordinal"] is not None:
        year, number = int(day[:4]), int(found["ordinal"])
        last = 366 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 365
        if not 1 <= number <= last or year == 0:
            raise ValueError("not an ISO 8601 timestamp")
        day = (date(year, 1, 1) + timedelta(days=number - 1)).isoformat()
    rest = ""
    if found["time"] is not None:
        rest = "T" + found["time"].replace(",", ".") + (found["offset"] or "").upper()
    try:
        parsed = datetime.fromisoformat(day + rest)
    except (ValueError, OverflowError) as exc:
        raise ValueError("not an ISO 8601 timestamp") from exc
    try:
        return to_utc(parsed)
    except OverflowError as exc:
        raise ValueError("timestamp out of range") from exc
