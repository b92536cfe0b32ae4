"""Query parameters of lists and searches: strict parsing, clear errors."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from starlette.requests import Request

from chatcrm.core.errors import BadRequest, FieldError, ValidationFailed
from chatcrm.core.pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE
from chatcrm.core.timestamps import parse_iso


def reject_unknown(request: Request, allowed: Iterable[str]) -> None:
    """A misspelt filter must not silently return the unfiltered list."""
    known = set(allowed)
    for name in request.query_params:
        if name not in known:
            raise BadRequest.field(
                name,
                f"Unknown query parameter '{name}'. Accepted: {', '.join(sorted(known))}.",
            )


def text_param(value: str | None) -> str | None:
    """An empty value counts as absent."""
    return value if value else None


def _is_number(value: str) -> bool:
    # ASCII only: str.isdigit() is also true for "²", which int() refuses.
    return value.isascii() and value.isdigit() and len(value) <= 9


def page_size(value: str | None) -> int:
    if not value:
        return DEFAULT_PAGE_SIZE
    if not _is_number(value) or not 1 <= int(value) <= MAX_PAGE_SIZE:
        raise ValidationFailed(
            [FieldError("pageSize", f"must be an integer from 1 to {MAX_PAGE_SIZE}")]
        )
    return int(value)


def bool_param(name: str, value: str | None) -> bool | None:
    if not value:
        return None
    lowered = value.lower()
    if lowered in ("true", "1"):
        return True
    if lowered in ("false", "0"):
        return False
    raise ValidationFailed([FieldError(name, "must be true or false")])


def int_choice_param(name: str, value: str | None, allowed: tuple[int, ...]) -> int | None:
    if not value:
        return None
    if not _is_number(value) or int(value) not in allowed:
        raise ValidationFailed([FieldError(name, f"must be one of {', '.join(map(str, allowed))}")])
    return int(value)


def timestamp_param(name: str, value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        # A '+' offset arrives as a space when the client did not percent-encode it.
        return parse_iso(value.replace(" ", "+") if "T" in value else value)
    except ValueError as exc:
        raise ValidationFailed(
            [FieldError(name, "must be an ISO 8601 date-time, e.g. 2025-04-07T21:56:19Z")]
        ) from exc
