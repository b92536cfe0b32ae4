"""Money (contract section 0): exact decimals, 0 ≤ value ≤ 10^12, at most 4 decimal places,
rendered as a JSON number without trailing zeros."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcrm.core.money import MoneyError, money_text, parse_money

MAX = Decimal(10) ** 12
CANONICAL = re.compile(r"^(0|[1-9][0-9]*)(\.[0-9]*[1-9])?$")

money_values = st.decimals(
    min_value=0, max_value=MAX, places=4, allow_nan=False, allow_infinity=False
)


def dumped(value: Decimal) -> bytes:
    return orjson.dumps({"a": orjson.Fragment(money_text(value).encode())})  # as answers do


# --- accepted values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (0, "0"),
        (5, "5"),
        (10**12, "1000000000000"),
        (Decimal("2500.75"), "2500.75"),
        (Decimal("1200.50"), "1200.5"),
        (Decimal("1.50000"), "1.5"),
        (Decimal("0.0001"), "0.0001"),
        (Decimal("1E-4"), "0.0001"),
        (Decimal("999999999999.9999"), "999999999999.9999"),
        (Decimal("1000000000000.0000"), "1000000000000"),
        (Decimal("1E+12"), "1000000000000"),
        (Decimal("1.0E+3"), "1000"),
        (Decimal("100"), "100"),
        (Decimal("-0"), "0"),
        (Decimal("-0.00"), "0"),
        (Decimal("0.0000"), "0"),
        (Decimal("0E-30"), "0"),
        (Decimal("0E+30"), "0"),
        (Decimal("1." + "0" * 40), "1"),
        (Decimal("12.3400000000000000000000000000000000"), "12.34"),
    ],
)
def test_accepted_values_and_their_text(raw: object, expected: str) -> None:
    value = parse_money(raw)
    assert isinstance(value, Decimal)
    assert value == Decimal(expected)
    assert money_text(value) == expected
    assert dumped(value) == b'{"a":' + expected.encode() + b"}"


def test_trailing_zeros_do_not_count_as_decimal_places() -> None:
    # The contract's own example: 1.50000 is the value 1.5.
    assert parse_money(Decimal("1.50000")) == Decimal("1.5")
    assert money_text(parse_money(Decimal("1.50000"))) == "1.5"


# --- rejected values ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        Decimal("1.00000000000000000000000000000001"),
        Decimal("0.00001"),
        Decimal("1E-5"),
        Decimal("0.12345"),
        Decimal("2500.00001"),
        Decimal("999999999999.99999"),
        Decimal("0." + "0" * 40 + "1"),
        Decimal("1E-999999999"),
    ],
)
def test_more_than_four_decimal_places_is_rejected(raw: Decimal) -> None:
    with pytest.raises(MoneyError):
        parse_money(raw)


@pytest.mark.parametrize(
    "raw",
    [
        -1,
        Decimal("-0.0001"),
        Decimal("-1.5"),
        Decimal("-1E+3"),
        -(10**12),
    ],
)
def test_negative_is_rejected(raw: object) -> None:
    with pytest.raises(MoneyError):
        parse_money(raw)


@pytest.mark.parametrize(
    "raw",
    [
        10**12 + 1,
        Decimal("1000000000000.0001"),
        Decimal("1000000000000.00000000000000000000000000001"),
        Decimal("1E+13"),
        Decimal("1E+999999999"),
        10**40,
    ],
)
def test_above_10_to_the_12_is_rejected(raw: object) -> None:
    with pytest.raises(MoneyError):
        parse_money(raw)


@pytest.mark.parametrize(
    "raw",
    [
        Decimal("NaN"),
        Decimal("-NaN"),
        Decimal("sNaN"),
        Decimal("Infinity"),
        Decimal("-Infinity"),
        float("nan"),
        float("inf"),
        float("-inf"),
    ],
)
def test_non_finite_is_rejected(raw: object) -> None:
    with pytest.raises(MoneyError):
        parse_money(raw)


@pytest.mark.parametrize("raw", [True, False, "1", "1.5", "", None, [], [1], {}, {"amount": 1}])
def test_non_numbers_are_rejected(raw: object) -> None:
    with pytest.raises(MoneyError):
        parse_money(raw)


def test_money_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_money("12")


# --- text rendering ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("2500.7500"), "2500.75"),
        (Decimal("1200.5"), "1200.5"),
        (Decimal("0"), "0"),
        (Decimal("-0"), "0"),
        (Decimal("0.0000"), "0"),
        (Decimal("0E+5"), "0"),
        (Decimal("1E+2"), "100"),
        (Decimal("10"), "10"),
        (Decimal("10.0"), "10"),
        (Decimal("1E-4"), "0.0001"),
        (Decimal("0.00001"), "0.00001"),
        (Decimal("1000000000000"), "1000000000000"),
        (Decimal("123456789012.3456"), "123456789012.3456"),
    ],
)
def test_money_text_is_canonical(value: Decimal, expected: str) -> None:
    assert money_text(value) == expected


# --- properties --------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(money_values)
def test_any_valid_amount_is_accepted_and_rendered_exactly(x: Decimal) -> None:
    value = parse_money(x)
    assert value == x
    text = money_text(value)
    assert CANONICAL.match(text), text
    assert "e" not in text.lower()
    assert Decimal(text) == x
    assert dumped(value) == b'{"a":' + text.encode() + b"}"
    # The JSON text read back exactly (never through a float) is the same value.
    assert json.loads(dumped(value), parse_float=Decimal)["a"] == x


@settings(max_examples=200, deadline=None)
@given(money_values, st.integers(min_value=0, max_value=40))
def test_trailing_zeros_never_change_the_value(x: Decimal, zeros: int) -> None:
    text = money_text(x)
    padded = Decimal(text + ("" if "." in text else ".") + "0" * zeros)
    value = parse_money(padded)
    assert value == x
    assert money_text(value) == text


@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=0, max_value=10**12 - 1),
    st.text(alphabet="0123456789", min_size=4, max_size=40),
    st.sampled_from("123456789"),
)
def test_five_or_more_significant_places_are_rejected(whole: int, middle: str, last: str) -> None:
    with pytest.raises(MoneyError):
        parse_money(Decimal(f"{whole}.{middle}{last}"))


@settings(max_examples=200, deadline=None)
@given(money_values.filter(lambda d: d > 0))
def test_negative_of_any_valid_amount_is_rejected(x: Decimal) -> None:
    with pytest.raises(MoneyError):
        parse_money(-x)


@settings(max_examples=200, deadline=None)
@given(money_values.filter(lambda d: d > 0))
def test_anything_above_the_maximum_is_rejected(x: Decimal) -> None:
    with pytest.raises(MoneyError):
        parse_money(MAX + x)


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=10**12))
def test_integers_are_accepted_as_is(n: int) -> None:
    value = parse_money(n)
    assert value == n
    assert money_text(value) == str(n)
