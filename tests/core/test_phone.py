"""Phones (contract B.1, N): stored as digits only with country code, 6–15 digits; a number
written with '+', 00 or 011 read by libphonenumber, bare digits country code first unless
the workspace's defaultCountry reads them as a national number."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from chatcrm.core.phone import PhoneError, is_country, needs_country, normalize_phone, read_again

ASCII_DIGITS = set("0123456789")
# A trunk `(0)` written after a country code (`51 (0) 922…`).
TRUNK_AFTER_CODE = re.compile(r"[0-9][ .\-]*\(\s*0\s*\)")
COUNTRIES = [None, "PE", "US", "GB", "BR", "MX", "ES"]


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
    """Bare digits (no international prefix), formatted any way."""
    digits = draw(
        st.text(alphabet="0123456789", min_size=6, max_size=15).filter(
            lambda d: not d.startswith(("00", "011"))
        )
    )
    parts = [draw(separators) + d for d in digits]
    padding = draw(st.sampled_from(["", " ", "\t"]))
    return padding + "".join(parts) + draw(separators) + padding, digits


@settings(max_examples=300, deadline=None)
@given(formatted_phones())
def test_any_formatting_of_6_to_15_bare_digits_gives_the_digits(case: tuple[str, str]) -> None:
    raw, digits = case
    assume(not TRUNK_AFTER_CODE.search(raw))  # a trunk (0) after a code is read: below
    assert normalize_phone(raw) == digits


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(alphabet="0123456789", max_size=5),
        st.text(alphabet="0123456789", min_size=16, max_size=40),
    ).filter(lambda d: not d.startswith(("00", "011"))),  # a prefix is not counted
)
def test_digit_counts_outside_6_to_15_are_rejected(digits: str) -> None:
    with pytest.raises(PhoneError):
        normalize_phone(" ".join(digits))


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(alphabet="0123456789", max_size=5),
        # libphonenumber may drop a trunk prefix after the country code (`+1 1…`), so
        # only numbers longer than that could ever make are certain to be refused.
        st.text(alphabet="0123456789", min_size=19, max_size=40),
    ),
)
def test_international_numbers_too_short_or_long_are_rejected(digits: str) -> None:
    with pytest.raises(PhoneError):
        normalize_phone("+" + " ".join(digits))


@settings(max_examples=500, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="0123456789 +().-abc\n\t", max_size=30)))
def test_result_is_digits_only_6_to_15_long_and_idempotent(raw: str) -> None:
    try:
        result = normalize_phone(raw)
    except PhoneError:
        return
    assert set(result) <= ASCII_DIGITS
    assert 6 <= len(result) <= 15
    digits = "".join(c for c in raw if c in ASCII_DIGITS)
    bare = not raw.strip().startswith("+") and not digits.startswith(("00", "011"))
    if bare and not TRUNK_AFTER_CODE.search(raw):
        # Bare digits: exactly the ASCII digits of the input, nothing invented or dropped.
        assert result == digits
    else:
        # Read by libphonenumber: at most a prefix (00, 011) or a trunk digit dropped, or
        # kept as written.
        assert len(result) <= len(digits)
        assert normalize_phone("+" + result) == result
    assert normalize_phone(result) == result


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # The numbers: one person, written three ways.
        ("0051 922 333 444", "51922333444"),
        ("+51 (0) 922 333 445", "51922333445"),
        ("011 51 922 333 444", "51922333444"),
        ("00 44 (0) 20 7946 0958", "442079460958"),
        ("+44 (0)20 7946 0958", "442079460958"),
        ("+7 8 912 345 6789", "79123456789"),
        # Italy keeps its leading 0; Mexico's and Argentina's mobile digits stay.
        ("+39 06 1234 5678", "390612345678"),
        ("+52 1 55 1234 5678", "5215512345678"),
        ("+54 9 11 1234 5678", "5491112345678"),
        # The library cannot read it: the digits decide, as before.
        ("+999 123456", "999123456"),
        ("+1 555 0100", "15550100"),
        # Bare digits keep meaning "country code first" without a default country.
        ("510922333445", "510922333445"),
        ("987654321", "987654321"),
    ],
)
def test_international_numbers_are_read_as_libphonenumber_reads_them(
    raw: str, expected: str
) -> None:
    assert normalize_phone(raw) == expected


@pytest.mark.parametrize(
    ("raw", "country", "expected"),
    [
        ("987 654 321", "PE", "51987654321"),
        ("(01) 234 5678", "PE", "5112345678"),
        ("415-555-2671", "US", "14155552671"),
        ("020 7946 0958", "GB", "442079460958"),
        # Already with its country code: not a valid national number, so as before.
        ("51987654321", "PE", "51987654321"),
        ("510922333445", "PE", "510922333445"),
        ("447911123456", "US", "447911123456"),
        # Not valid in the country: country code first, as before.
        ("123456", "PE", "123456"),
        # Written with its country code: the default country plays no part.
        ("+1 415 555 2671", "PE", "14155552671"),
        ("0051 987 654 321", "US", "51987654321"),
    ],
)
def test_bare_digits_in_a_default_country(raw: str, country: str, expected: str) -> None:
    assert normalize_phone(raw, country=country) == expected


def test_a_default_country_never_refuses_a_number_accepted_without_one() -> None:
    for raw in ("123456", "999999999999999", "51987654321", "0123456"):
        assert normalize_phone(raw, country="PE") == normalize_phone(raw)


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="0123456789", min_size=6, max_size=15),
    st.sampled_from(["", " ", "-", "."]),
    st.sampled_from(COUNTRIES),
)
def test_no_number_of_6_to_15_digits_written_without_plus_is_refused(
    digits: str, separator: str, country: str | None
) -> None:
    """Contract N: B.1's rule stays the only validity check, so no number accepted before
    the rule (6–15 digits as written, 00 and 011 counted) is refused now, in any
    workspace."""
    result = normalize_phone(separator.join([digits[:3], digits[3:]]), country=country)
    assert 6 <= len(result) <= 15


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        # Read after their prefix they would be too short: kept as written, as before.
        ("0012345", "0012345"),
        ("00 12345", "0012345"),
        ("011 2345", "0112345"),
        ("0000000", "0000000"),
        # A trunk (0) after the country code, without '+', as after one.
        ("51 (0) 922 333 445", "51922333445"),
        ("44 (0) 20 7946 0958", "442079460958"),
        # No country code before it: not a trunk after a code; the digits, as before.
        ("(0) 20 7946 0958", "02079460958"),
    ],
)
def test_numbers_without_plus_that_the_first_rule_read_differently(raw: str, expected: str) -> None:
    assert normalize_phone(raw) == expected


@pytest.mark.parametrize(
    ("raw", "country", "expected"),
    [
        # 00 and 011 begin national numbers in some countries: libphonenumber, in the
        # workspace's country, reads them so when they are valid there.
        ("0 11 98765 4321", "BR", "5511987654321"),
        ("(011) 98765-4321", "BR", "5511987654321"),
        ("0113 496 0958", "GB", "441134960958"),
        ("(0) 20 7946 0958", "GB", "442079460958"),
        # Otherwise the prefix is the international one, in any country.
        ("0044 20 7946 0958", "GB", "442079460958"),
        ("0044 20 7946 0958", "BR", "442079460958"),
        ("011 44 20 7946 0958", "US", "442079460958"),
        ("011 51 922 333 444", "PE", "51922333444"),
        ("0113 496 0958", None, "34960958"),
    ],
)
def test_a_prefix_that_is_national_in_the_default_country(
    raw: str, country: str | None, expected: str
) -> None:
    assert normalize_phone(raw, country=country) == expected


@pytest.mark.parametrize(
    ("text", "needs"),
    [("987654321", True), ("+51 987", False), ("0051 987", True), ("011 51", True), ("", False)],
)
def test_which_numbers_need_the_default_country(text: str, needs: bool) -> None:
    assert needs_country(text) is needs


@pytest.mark.parametrize(
    ("stored", "again"),
    [
        ("0051922333444", "51922333444"),
        ("01151922333444", "51922333444"),
        ("510922333445", "51922333445"),
        ("4402079460958", "442079460958"),
        # Already in the stored form of both rules.
        ("51922333444", "51922333444"),
        ("390612345678", "390612345678"),
        ("5215512345678", "5215512345678"),
        ("999123456", "999123456"),
        ("123456", "123456"),
    ],
)
def test_stored_numbers_read_again(stored: str, again: str) -> None:
    assert read_again(stored) == again


def test_countries_are_iso_3166_alpha_2() -> None:
    assert is_country("PE") and is_country("US")
    # Assigned by ISO 3166, without telephone numbers of their own: countries still.
    assert is_country("AQ") and is_country("PN") and is_country("TF")
    assert not is_country("pe") and not is_country("XX") and not is_country("PER")
    # Known to libphonenumber, not assigned by ISO 3166-1.
    assert not is_country("XK") and not is_country("AC") and not is_country("TA")


def test_a_country_without_numbers_of_its_own_reads_nothing_nationally() -> None:
    assert normalize_phone("987 654 321", country="AQ") == "987654321"


@pytest.mark.parametrize(
    "pasted",
    [
        "(+51) 987 654 321",
        "( +51 ) 987-654-321",
        "+51\u00a0987\u00a0654\u00a0321",  # no-break spaces
        "+51\u202f987\u2009654\u2009321",  # narrow and thin spaces
        "+51\u2013987\u2014654\u2212321",  # en dash, em dash, minus sign
        "+51\uff0d987\u2010654\u2011321",  # fullwidth hyphen, hyphen, non-breaking hyphen
        "+51\u00ad987\u200b654\u2060321",  # soft hyphen, zero-width space, word joiner
    ],
)
def test_a_number_pasted_with_typographic_spaces_and_dashes_reads_as_typed(pasted: str) -> None:
    assert normalize_phone(pasted) == "51987654321"
