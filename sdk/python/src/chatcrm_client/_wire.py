"""The wire formats: JSON in and out with exact money, and timestamps."""

from __future__ import annotations

import json
import uuid
from datetime import date, datetime
from decimal import Decimal
from typing import Any


def loads(body: bytes | str) -> Any:
    """JSON with its fractional numbers as Decimal: money never goes through float."""
    return json.loads(body, parse_float=Decimal)


def plain(value: Any) -> Any:
    """A parsed value as `json.loads` would have given it, copied, so that the caller may
    change it without changing the record: a fractional number is a float when the float
    is that very number (every amount of up to 15 significant digits), so `json.dumps`
    takes it and it compares equal to `json.loads`'s; one a float would change (money of
    16 or 17 digits, `622051690711.6507`) stays the exact Decimal."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, Decimal):
        as_float = float(value)
        return as_float if Decimal(repr(as_float)) == value else value
    return value


def dumps(value: Any) -> bytes:
    """JSON of a request body. A Decimal is written as the number it is (the standard
    encoder would refuse it, and float would round it): each one is written as a unique
    placeholder string first, then the placeholder is replaced by the number's text."""
    marker = uuid.uuid4().hex
    numbers: list[str] = []

    def prepare(item: Any) -> Any:
        if isinstance(item, dict):
            return {str(k): prepare(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [prepare(v) for v in item]
        if isinstance(item, Decimal):
            if not item.is_finite():
                raise ValueError(f"{item} is not a JSON number")
            numbers.append(str(item))
            return f"{marker}{len(numbers) - 1}"
        if isinstance(item, datetime | date):
            return item.isoformat()
        return item

    text = json.dumps(prepare(value), ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    for index in range(len(numbers) - 1, -1, -1):  # backwards: "…1" is not cut from "…10"
        text = text.replace(f'"{marker}{index}"', numbers[index])
    return text.encode("utf-8")


def parse_timestamp(text: str | None) -> datetime | None:
    """`2025-04-07T21:56:19.325443Z` → an aware datetime (UTC)."""
    if text is None:
        return None
    return datetime.fromisoformat(text)


def query_value(value: Any) -> str:
    """A query parameter's text: booleans as true/false, times in ISO 8601, lists joined
    with commas (event types)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list | tuple | set | frozenset):
        return ",".join(query_value(v) for v in value)
    return str(value)
