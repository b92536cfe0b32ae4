"""Phone numbers are kept as digits only, country code included, 6 to 15 digits."""

import re

_ALLOWED = re.compile(r"^\+?[0-9 ().\-]+$")
_FORMATTING = re.compile(r"[^0-9]")


class PhoneError(ValueError):
    pass


def normalize_phone(value: str) -> str:
    """`+51 987-654-321` → `51987654321`. Raises PhoneError for anything not a phone number."""
    text = value.strip()
    if not _ALLOWED.fullmatch(text):
        raise PhoneError("must be a phone number (digits with country code)")
    digits = _FORMATTING.sub("", text)
    if not 6 <= len(digits) <= 15:
        raise PhoneError("must have 6 to 15 digits, country code included")
    return digits
