"""The money format: exact decimals, 0 ≤ value ≤ 10^12, at most four decimal places, written
without exponent or trailing zeros (`2500.75`, `0`, `1200.5`). Validated from JSON input
(`parse_money`), rendered in Python (`money_text`) or by the database (`money_sql`).
"""

from decimal import Decimal, InvalidOperation
from typing import Any

from sqlalchemy import ColumnElement, Text, func, type_coerce

MAX_AMOUNT = Decimal(10) ** 12
MAX_PLACES = 4


class MoneyError(ValueError):
    pass


def parse_money(value: object) -> Decimal:
    """Validate a JSON number as money. Strings and booleans are not numbers."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal | float):
        raise MoneyError("must be a number")
    try:
        dec = Decimal(value) if not isinstance(value, float) else Decimal(repr(value))
    except (InvalidOperation, ValueError) as exc:  # pragma: no cover - json never yields these
        raise MoneyError("must be a number") from exc
    if not dec.is_finite():
        raise MoneyError("must be a finite number")
    if dec < 0:
        raise MoneyError("must not be negative")
    if dec > MAX_AMOUNT:
        raise MoneyError("must not exceed 1000000000000")
    if dec == 0:
        return Decimal(0)
    # Count decimal places exactly: Decimal.normalize() would round to the context precision
    # first and could turn 1.00000000000000000000000000000001 into an acceptable 1.
    _, digits, exponent = dec.as_tuple()
    assert isinstance(exponent, int)
    trailing = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    if exponent + trailing < -MAX_PLACES:
        raise MoneyError("must have at most 4 decimal places")
    return dec.normalize()  # at most 17 significant digits here, so no rounding


def money_text(value: Decimal) -> str:
    """Canonical text: no exponent, no trailing zeros (`2500.75`, `0`, `1200.5`)."""
    if value == 0:
        return "0"
    text = format(value.normalize(), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def money_sql(column: Any, dialect: str) -> ColumnElement[str]:
    """The same text as `money_text`, rendered by the database from a money column."""
    if dialect == "postgresql":
        return func.trim_scale(column).cast(Text)
    return type_coerce(column, Text)  # SQLite stores the canonical text already (db/types.py)
