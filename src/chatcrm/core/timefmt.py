"""Timestamps on the wire: ISO 8601 UTC with microseconds and `Z`, both ways."""

from datetime import UTC, datetime


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


def parse_iso(text: str) -> datetime:
    """Parse any ISO 8601 date or date-time; offsets are normalised to UTC, naive means UTC.

    Raises ValueError for anything else (including out-of-range years after conversion).
    """
    if not isinstance(text, str) or not 10 <= len(text) <= 64:
        raise ValueError("not an ISO 8601 timestamp")
    # fromisoformat is lenient about some non-ISO forms; require a date that starts like ISO.
    if not (text[:4].isdigit() and text[4] == "-"):
        raise ValueError("not an ISO 8601 timestamp")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError("not an ISO 8601 timestamp") from exc
    try:
        return to_utc(parsed)
    except OverflowError as exc:
        raise ValueError("timestamp out of range") from exc
