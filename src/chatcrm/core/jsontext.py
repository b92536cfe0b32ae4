"""JSON kept as text in the database (files, variables, aggregated tags) and passed through."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import orjson


class JsonNumber(Decimal):
    """A number with a fraction or an exponent, as a client wrote it: `1e2` stays `1e2`,
    `1.50` stays `1.50` where the value is given back as sent (a contact's variables).
    Arithmetic on it gives plain Decimals, so money, which is normalised, never keeps it."""

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> JsonNumber:
        try:
            number = super().__new__(cls, text)
        except ArithmeticError as exc:  # an exponent beyond Decimal's, as 1e1000000000000000000
            raise ValueError(f"the number {text[:40]} is out of range") from exc
        number.text = text
        return number


def _exact(value: object) -> Any:
    # Decimals (money, variable values) are written exactly as they are, digits and
    # exponent, never rounded through a float; a number read from JSON as it was written.
    if isinstance(value, JsonNumber):
        return orjson.Fragment(value.text.encode())
    if isinstance(value, Decimal) and value.is_finite():
        return orjson.Fragment(str(value).encode())
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dumps(value: object) -> bytes:
    """JSON bytes with orjson (key order kept); Decimals exact."""
    return orjson.dumps(value, default=_exact)


def to_text(value: Any) -> str:
    """Canonical JSON text; Decimals stay exact."""
    return dumps(value).decode()


def aggregated(text: str | None) -> list[Any]:
    """A JSON array aggregated by the database, re-emitted compactly by orjson later
    (PostgreSQL's json_build_object writes `{"id" : …}` with spaces)."""
    if not text or text == "[]":
        return []
    result: list[Any] = orjson.loads(text)
    return result


def load_exact(text: str) -> Any:
    """Parse stored JSON keeping every number exact, as written (for read-modify-write of
    variables)."""
    return json.loads(text, parse_float=JsonNumber)
