"""Phone numbers are kept as digits only, country code included, 6 to 15 digits
(docs/api.md 2.5).

How a written number is read (contract N), by libphonenumber (the `phonenumbers` package),
which knows each country's trunk prefix:

- written with `+`: `+51 (0) 922 333 445` → `51922333445`;
- written with the international prefix `00` or `011` in place of the `+`, the same,
  unless the workspace's `defaultCountry` reads the whole as a valid national number
  there, as libphonenumber does (`0113 496 0958` is Leeds in GB, `0 11 98765 4321` São
  Paulo in BR);
- bare digits begin with their country code, as they always did (a trunk `(0)` written
  after it is dropped, as after a `+`), unless the workspace's `defaultCountry` reads them
  as a valid national number (`987 654 321` in PE → `51987654321`).

Formatting is ignored as the library ignores it: spaces and dashes of any kind, dots and
parentheses, and a `+` written inside them (`(+51) 987 654 321`).

The library reads the number; it does not judge it: the 6–15 digits are the only check.
A number it cannot read, or whose reading would not have 6 to 15 digits, keeps its
digits as written, so that no number accepted before this rule is refused (`0012345`).
"""

from __future__ import annotations

import re
from contextvars import ContextVar

import phonenumbers
import pycountry
from phonenumbers import CountryCodeSource, NumberParseException, PhoneNumberFormat

_ALLOWED = re.compile(r"^\+?[0-9 ().\-]+$")
# Written as people paste them, and as libphonenumber reads them: a no-break or other
# typographic space is a space, an en dash or other dash a hyphen, and the invisible
# separators (soft hyphen, zero-width space, word joiner) nothing. Line breaks and tabs
# are not spaces here: a number is one line.
_SPACES = (
    "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
)
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d"
_INVISIBLE = "\u00ad\u200b\u2060"
_PLAIN = str.maketrans(
    {**dict.fromkeys(_SPACES, " "), **dict.fromkeys(_DASHES, "-"), **dict.fromkeys(_INVISIBLE)}
)
# What a phone field takes, for the OpenAPI document (ECMA-262): the characters read above,
# a '+' first or inside a first parenthesis; the digits' count is checked by the service.
INPUT_PATTERN = (
    r"^\s*(\(?\s*\+?[0-9 ().\-"
    + "".join(f"\\u{ord(c):04x}" for c in _SPACES + _DASHES + _INVISIBLE)
    + r"]+)?\s*$"
)
# `(+51) 987 654 321`: the country code in parentheses, its '+' inside them.
_PLUS_IN_PARENTHESES = re.compile(r"^\(\s*\+")
_FORMATTING = re.compile(r"[^0-9]")
# Written in place of '+': the ITU's prefix, and North America's.
INTERNATIONAL_PREFIXES = ("00", "011")
# `51 (0) 922…`: a country code, then the trunk prefix one dials at home.
_TRUNK_AFTER_CODE = re.compile(r"[0-9][ .\-]*\(\s*0\s*\)")

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


def _plain(value: str) -> str:
    """Spaces and dashes of every kind as ' ' and '-'; a '+' in parentheses in front."""
    text = value.translate(_PLAIN).strip()
    found = _PLUS_IN_PARENTHESES.match(text)
    return "+" + text[found.end() :] if found else text


def is_international(text: str) -> bool:
    """Written with '+', 00 or 011 in front."""
    text = _plain(text)
    return text.startswith("+") or _FORMATTING.sub("", text).startswith(INTERNATIONAL_PREFIXES)


def needs_country(text: str) -> bool:
    """Whether reading this text could depend on the workspace's defaultCountry: all but a
    number written with '+' (00 and 011 begin national numbers in some countries)."""
    text = _plain(text)
    return bool(text) and not text.startswith("+")


def normalize_phone(value: str, *, country: str | None = None) -> str:
    """`+51 987-654-321` → `51987654321`; bare digits read in `country` when they are a
    valid national number there. Raises PhoneError for anything not a phone number."""
    text = _plain(value)
    if not _ALLOWED.fullmatch(text):
        raise PhoneError("must be a phone number (digits with country code)")
    written = _FORMATTING.sub("", text)
    digits = _read(text, written, country)
    if not 6 <= len(digits) <= 15:
        # As written, when that was a number before (an international prefix counted).
        if 6 <= len(written) <= 15 and not text.startswith("+"):
            return written
        raise PhoneError("must have 6 to 15 digits, country code included")
    return digits


def _read(text: str, digits: str, country: str | None) -> str:
    if text.startswith("+"):
        return _international(digits)
    national = _national(text, country) if country is not None else None
    if national is not None:
        return national
    prefix = next((p for p in INTERNATIONAL_PREFIXES if digits.startswith(p)), None)
    if prefix is not None:
        return _international(digits[len(prefix) :])
    if _TRUNK_AFTER_CODE.search(text):
        return _international(digits)  # country code first, as after a '+'
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
    """An officially assigned ISO 3166-1 alpha-2 code, upper case (`PE`; not `XK`, a
    code libphonenumber knows but ISO 3166 does not assign)."""
    return len(code) == 2 and code.isupper() and pycountry.countries.get(alpha_2=code) is not None
