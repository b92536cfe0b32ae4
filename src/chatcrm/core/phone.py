"""Phone numbers are kept as digits only, country code included, 6 to 15 digits
(docs/api.md 2.5).

How a written number is read (contract N): one written with `+`, or with the international
prefix `00` or `011` in its place, is read by libphonenumber (the `phonenumbers` package),
which knows each country's trunk prefix (`+51 (0) 922 333 445` → `51922333445`). A number of
bare digits begins with its country code, as it always did, unless the workspace has a
`defaultCountry` in which the digits are a valid national number (`987 654 321` in PE →
`51987654321`). The library reads the number; it does not judge it: the 6–15 digits are the
only check, and a number it cannot read keeps its digits.
"""

from __future__ import annotations

import re
from contextvars import ContextVar

import phonenumbers
from phonenumbers import CountryCodeSource, NumberParseException, PhoneNumberFormat

_ALLOWED = re.compile(r"^\+?[0-9 ().\-]+$")
_FORMATTING = re.compile(r"[^0-9]")
# Written in place of '+': the ITU's prefix, and North America's.
INTERNATIONAL_PREFIXES = ("00", "011")

# The workspace's defaultCountry for the phones of the request under way (set by whoever
# knows the workspace, before a body is read: records/phones.py).
_country: ContextVar[str | None] = ContextVar("phone_country", default=None)


class PhoneError(ValueError):
    pass


def use_country(country: str | None) -> None:
    """Read bare digits in `country` (ISO 3166 alpha-2) from now on in this context."""
    _country.set(country)


def current_country() -> str | None:
    return _country.get()


def is_international(text: str) -> bool:
    """Written with '+', 00 or 011: its country code is in it, whatever the workspace."""
    text = text.strip()
    return text.startswith("+") or _FORMATTING.sub("", text).startswith(INTERNATIONAL_PREFIXES)


def needs_country(text: str) -> bool:
    """Whether reading this text could depend on the workspace's defaultCountry."""
    return bool(text.strip()) and not is_international(text)


def normalize_phone(value: str, *, country: str | None = None) -> str:
    """`+51 987-654-321` → `51987654321`; bare digits read in `country` when they are a
    valid national number there. Raises PhoneError for anything not a phone number."""
    text = value.strip()
    if not _ALLOWED.fullmatch(text):
        raise PhoneError("must be a phone number (digits with country code)")
    digits = _FORMATTING.sub("", text)
    if text.startswith("+"):
        digits = _international(digits)
    elif digits.startswith(INTERNATIONAL_PREFIXES):
        prefix = next(p for p in INTERNATIONAL_PREFIXES if digits.startswith(p))
        digits = _international(digits[len(prefix) :])
    elif country is not None:
        digits = _national(text, country) or digits
    if not 6 <= len(digits) <= 15:
        raise PhoneError("must have 6 to 15 digits, country code included")
    return digits


def _international(digits: str) -> str:
    try:
        number = phonenumbers.parse(f"+{digits}", None)
    except NumberParseException:
        return digits  # an unknown country code, too short or too long: the digits decide
    return _e164_digits(number)


def _national(text: str, country: str) -> str | None:
    """The digits with country code when `text` is a valid national number of `country`."""
    try:
        number = phonenumbers.parse(text, country, keep_raw_input=True)
    except NumberParseException:
        return None
    national = number.country_code_source == CountryCodeSource.FROM_DEFAULT_COUNTRY
    if national and phonenumbers.is_valid_number(number):
        return _e164_digits(number)
    return None


def _e164_digits(number: phonenumbers.PhoneNumber) -> str:
    return phonenumbers.format_number(number, PhoneNumberFormat.E164).lstrip("+")


def read_again(stored: str) -> str:
    """A number stored under the first rule (its digits as written), as this rule stores
    it: an international prefix kept as digits (`0051922333444`), or a trunk 0 kept after
    the country code (`510922333445`, written `+51 (0) 922 333 445`), is read again; any
    other stored number is already in its form and comes back as it is."""
    if stored.startswith(INTERNATIONAL_PREFIXES):
        try:
            return normalize_phone(stored)
        except PhoneError:
            return stored
    try:
        number = phonenumbers.parse(f"+{stored}", None)
    except NumberParseException:
        return stored
    code = str(number.country_code)
    again = _e164_digits(number)
    # Only the trunk 0 is dropped: other differences (Mexico's mobile 1, say) are numbers
    # WhatsApp itself writes that way, and stay.
    if stored.startswith(code + "0") and again == code + stored[len(code) + 1 :]:
        return again
    return stored


def is_country(code: str) -> bool:
    """An ISO 3166 alpha-2 code of a country with telephone numbers."""
    return code in phonenumbers.SUPPORTED_REGIONS
