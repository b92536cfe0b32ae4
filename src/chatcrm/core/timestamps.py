"""The timestamp wire format: ISO 8601 UTC, always six fractional digits and `Z`
(`2025-04-07T21:56:19.325443Z`). Rendered in Python (`iso`) or by the database in the
SELECT list (`iso_sql`, so reads need no per-value work in Python); parsed leniently
from any ISO 8601 input (`parse_iso`).
"""

from datetime import UTC, datetime
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


def parse_iso(text: str) -> datetime:
    """Parse any ISO 8601 date or date-time; offsets are normalised to UTC, naive means UTC.

    Raises ValueError for anything else (including out-of-range years after conversion).
    """
    if not isinstance(text, str) or not 8 <= len(text) <= 64:
        raise ValueError("not an ISO 8601 timestamp")
    # fromisoformat is lenient about some non-ISO forms; require a date that starts like ISO:
    # extended (`2026-12-31…`) or basic (`20261231`, `20261231T235959Z`).
    extended = len(text) >= 10 and text[:4].isdigit() and text[4] == "-"
    basic = text[:8].isdigit() and (len(text) == 8 or text[8] == "T")
    if not (extended or basic):
        raise ValueError("not an ISO 8601 timestamp")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError("not an ISO 8601 timestamp") from exc
    try:
        return to_utc(parsed)
    except OverflowError as exc:
        raise ValueError("timestamp out of range") from exc
