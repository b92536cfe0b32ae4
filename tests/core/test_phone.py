"""Phones (contract B.1): stored as digits only with country code, 6–15 digits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcrm.core.phone import PhoneError, normalize_phone

ASCII_DIGITS = set("0123456789")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("+51 987-654-321", "51987654321"),
        ("51987654321", "51987654321"),
        ("+51987654321", "51987654321"),
        ("(51) 987.654.321", "51987654321"),
        ("+1 (415) 555-0100", "14155550100"),
        ("51.987.654.321", "51987654321"),
        ("  +51 987 654 321  ", "51987654321"),
        ("\t51987654321\n", "51987654321"),
        ("123456", "123456"),
        ("123456789012345", "123456789012345"),
        ("+44 20 7946 0958", "442079460958"),
    ],
)
def test_formatting_is_removed(raw: str, expected: str) -> None:
    assert normalize_phone(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "   ",
        "+",
        "()-. ",
        "12345",
        "+1 2345",
        "1234567890123456",
        "+51 987 654 321 000 00",
        "abc",
        "+51 98765432a",
        "51987654321x",
        "tel:51987654321",
        "++51987654321",
        "51+987654321",
        "51987654321+",
        "51/987/654/321",
        "51_987_654_321",
        "51,987,654,321",
        "51987654321;ext=2",
        "51987\n654321",
        "51987\x00654321",
        "٥١٩٨٧٦٥٤٣٢١",  # Arabic-Indic digits are not ASCII digits
        "５１９８７６５４３２１",  # fullwidth digits
        "51\u00a0987\u00a0654\u00a0321",  # no-break spaces
    ],
)
def test_not_a_phone_is_rejected(raw: str) -> None:
    with pytest.raises(PhoneError):
        normalize_phone(raw)


def test_phone_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        normalize_phone("nope")


separators = st.text(alphabet=" ().-", max_size=3)


@st.composite
def formatted_phones(draw: st.DrawFn) -> tuple[str, str]:
    digits = draw(st.text(alphabet="0123456789", min_size=6, max_size=15))
    parts = [draw(separators) + d for d in digits]
    prefix = draw(st.sampled_from(["", "+"]))
    padding = draw(st.sampled_from(["", " ", "\t"]))
    return padding + prefix + "".join(parts) + draw(separators) + padding, digits


@settings(max_examples=300, deadline=None)
@given(formatted_phones())
def test_any_formatting_of_6_to_15_digits_gives_the_digits(case: tuple[str, str]) -> None:
    raw, digits = case
    assert normalize_phone(raw) == digits


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(alphabet="0123456789", max_size=5),
        st.text(alphabet="0123456789", min_size=16, max_size=40),
    ),
    st.sampled_from(["", "+"]),
)
def test_digit_counts_outside_6_to_15_are_rejected(digits: str, prefix: str) -> None:
    with pytest.raises(PhoneError):
        normalize_phone(prefix + " ".join(digits))


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="0123456789 +().-abc\n\t", max_size=30)))
def test_result_is_digits_only_6_to_15_long_and_idempotent(raw: str) -> None:
    try:
        result = normalize_phone(raw)
    except PhoneError:
        return
    assert set(result) <= ASCII_DIGITS
    assert 6 <= len(result) <= 15
    # Exactly the ASCII digits of the input, in order: nothing invented, nothing dropped.
    assert result == "".join(c for c in raw if c in ASCII_DIGITS)
    assert normalize_phone(result) == result
    assert normalize_phone("+" + result) == result
