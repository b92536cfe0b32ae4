"""Validators for single body values. Each returns the normalised value or raises FieldError.

The rules are the contract's (B.1, B.2, section 5): strict JSON types (a string is never a
boolean or a number), the string limits, exact money, ISO 8601 timestamps.
"""

from __future__ import annotations

import re
from datetime import datetime
from decimal import Decimal
from typing import Any

from chatcrm.core.errors import FieldError, raise_any
from chatcrm.core.money import MoneyError, parse_money
from chatcrm.core.phone import PhoneError, current_country, normalize_phone
from chatcrm.core.timestamps import parse_iso

NAME_MAX = 200
TEXT_MAX = 10_000
TAGS_MAX = 100
FILES_MAX = 100
VARIABLES_MAX = 200
FILE_REF_MAX = 2048
EMAIL_MAX = 254
INT32_MAX = 2**31 - 1

# An address's local part: any character but spaces, controls and the specials that need
# quoting (UTF-8 ones included, RFC 6531); its domain, once in its ASCII form (IDNA, so
# `correo.perú` is `correo.xn--per-zoa`), host names of two labels or more.
_EMAIL_LOCAL = re.compile(r"^[^@\s\x00-\x1f\x7f\"(),:;<>\[\\\]]{1,64}$")
_EMAIL_DOMAIN = re.compile(
    r"^[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9\-]*[A-Za-z0-9])?)+$"
)


def _email_domain_ok(domain: str) -> bool:
    if domain.isascii():
        ascii_form = domain
    else:
        try:
            ascii_form = domain.encode("idna").decode("ascii")
        except UnicodeError:
            return False
    return len(ascii_form) <= 253 and _EMAIL_DOMAIN.fullmatch(ascii_form) is not None


def _email_ok(s: str) -> bool:
    local, at, domain = s.rpartition("@")
    return bool(at) and _EMAIL_LOCAL.fullmatch(local) is not None and _email_domain_ok(domain)


def _type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | Decimal | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def require_str(field: str, value: object) -> str:
    if not isinstance(value, str):
        raise FieldError(field, f"must be a string, not {_type_name(value)}")
    return value


def text(
    field: str,
    value: object,
    *,
    max_len: int = NAME_MAX,
    nullable: bool = False,
    nonblank: bool = False,
) -> str | None:
    if value is None and nullable:
        return None
    s = require_str(field, value)
    if len(s) > max_len:
        raise FieldError(field, f"must be at most {max_len} characters")
    if nonblank and not s.strip():
        raise FieldError(field, "must not be empty")
    return s


def required_text(field: str, value: object, *, max_len: int = NAME_MAX) -> str:
    result = text(field, value, max_len=max_len, nonblank=True)
    assert result is not None
    return result


def boolean(field: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise FieldError(field, f"must be true or false, not {_type_name(value)}")
    return value


def integer(field: str, value: object, *, minimum: int = 0, maximum: int = INT32_MAX) -> int:
    if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
        if value.adjusted() > 18:  # never expand 1e999999999 into a billion digits
            raise FieldError(field, f"must be between {minimum} and {maximum}")
        value = int(value)  # 3.0 is the integer 3
    if isinstance(value, bool) or not isinstance(value, int):
        raise FieldError(field, f"must be an integer, not {_type_name(value)}")
    if not minimum <= value <= maximum:
        raise FieldError(field, f"must be between {minimum} and {maximum}")
    return value


def choice(field: str, value: object, allowed: tuple[int, ...]) -> int:
    number = integer(field, value, minimum=min(allowed), maximum=max(allowed))
    if number not in allowed:
        raise FieldError(field, f"must be one of {', '.join(map(str, allowed))}")
    return number


def reference(field: str, value: object, *, nullable: bool = True) -> str | None:
    """An id naming another record; whether it exists is checked against the database."""
    if value is None:
        if nullable:
            return None
        raise FieldError(field, "must not be null")
    s = require_str(field, value)
    if not s:
        if nullable:
            return None
        raise FieldError(field, "must not be empty")
    if len(s) > 64:
        raise FieldError(field, "is not a valid id")
    return s


def timestamp(field: str, value: object, *, nullable: bool = True) -> datetime | None:
    if (value is None or value == "") and nullable:  # `""`: none (docs/api.md 5.18)
        return None
    s = require_str(field, value)
    try:
        return parse_iso(s)
    except ValueError as exc:
        raise FieldError(field, "must be an ISO 8601 date-time, e.g. 2025-04-07T21:56:19Z") from exc


def money(field: str, value: object) -> Decimal:
    try:
        return parse_money(value)
    except MoneyError as exc:
        raise FieldError(field, str(exc)) from exc


def email(field: str, value: object, *, nullable: bool = True) -> str | None:
    if value is None and nullable:
        return None
    s = require_str(field, value).strip()
    if not s and nullable:
        return None
    if len(s) > EMAIL_MAX or ".." in s or not _email_ok(s):
        raise FieldError(field, "must be a valid email address")
    return s


def phone(field: str, value: object, *, allow_empty: bool = True) -> str:
    s = require_str(field, value)
    if not s.strip() and allow_empty:
        return ""
    try:
        return normalize_phone(s, country=current_country())
    except PhoneError as exc:
        raise FieldError(field, str(exc)) from exc


def string_list(field: str, value: object, *, max_items: int, max_len: int) -> list[str]:
    if not isinstance(value, list):
        raise FieldError(field, f"must be an array, not {_type_name(value)}")
    if len(value) > max_items:
        raise FieldError(field, f"must have at most {max_items} elements")
    out = []
    errors: list[FieldError] = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            errors.append(FieldError(f"{field}[{i}]", f"must be a string, not {_type_name(item)}"))
        elif not item or len(item) > max_len:
            errors.append(FieldError(f"{field}[{i}]", f"must be 1 to {max_len} characters"))
        else:
            out.append(item)
    raise_any(errors)
    return out


def files(field: str, value: object) -> list[str]:
    return string_list(field, value, max_items=FILES_MAX, max_len=FILE_REF_MAX)


def tag_ids(field: str, value: object) -> list[str]:
    """Tag ids as strings or `{id}` objects; duplicates collapse, first position wins."""
    if not isinstance(value, list):
        raise FieldError(field, f"must be an array of tag ids, not {_type_name(value)}")
    ids: dict[str, None] = {}  # ordered set
    errors: list[FieldError] = []
    for i, item in enumerate(value):
        if isinstance(item, dict):
            item = item.get("id")
        if not isinstance(item, str) or not item:
            message = "must be a tag id (a string or an object with id)"
            errors.append(FieldError(f"{field}[{i}]", message))
            continue
        ids[item] = None
        if len(ids) > TAGS_MAX:
            raise FieldError(field, f"must have at most {TAGS_MAX} tags")
    raise_any(errors)
    return list(ids)


def _storable_number(value: int | Decimal) -> bool:
    """Numbers a variable can hold and give back exactly (JSON, 64-bit safe, no rounding)."""
    if isinstance(value, int):
        return abs(value) < 2**63  # below 2^63 in magnitude, as the message says
    # copy_abs and comparisons never round, so 1e1000000 cannot overflow the context here.
    if not value.is_finite() or value.copy_abs() >= 2**63:
        return False
    _, digits, exponent = value.as_tuple()
    return len(digits) <= 40 and isinstance(exponent, int) and exponent >= -40


def _variable(where: str, item: object) -> tuple[str, Any]:
    """One `{name, value}` element: its name and value, or every error of the two."""
    if not isinstance(item, dict):
        raise FieldError(where, "must be an object {name, value}")
    unknown = set(item) - {"name", "value"}
    if unknown:
        raise FieldError(where, f"unexpected key '{sorted(unknown)[0]}'; use name and value")
    if "name" not in item or "value" not in item:
        raise FieldError(where, "must have both name and value")
    errors: list[FieldError] = []
    name = ""
    try:
        name = required_text(f"{where}.name", item["name"])
    except FieldError as exc:
        errors.append(exc)
    val = item["value"]
    if isinstance(val, str):
        if len(val) > TEXT_MAX:
            errors.append(FieldError(f"{where}.value", f"must be at most {TEXT_MAX} characters"))
    elif isinstance(val, int | Decimal) and not isinstance(val, bool):
        if not _storable_number(val):
            message = "must be a number below 2^63 in magnitude, 40 digits at most"
            errors.append(FieldError(f"{where}.value", message))
    elif val is not None and not isinstance(val, bool):
        errors.append(FieldError(f"{where}.value", "must be a string, number, boolean or null"))
    raise_any(errors)
    return name, val


def variables(field: str, value: object) -> list[dict[str, Any]]:
    """`[{name, value}]`; value is a string, number, boolean or null. Later names win."""
    if not isinstance(value, list):
        raise FieldError(field, f"must be an array of {{name, value}}, not {_type_name(value)}")
    merged: dict[str, Any] = {}
    errors: list[FieldError] = []
    for i, item in enumerate(value):
        try:
            name, val = _variable(f"{field}[{i}]", item)
        except FieldError as exc:
            errors.extend(exc.each())
            continue
        merged.pop(name, None)
        merged[name] = val
    raise_any(errors)
    if len(merged) > VARIABLES_MAX:
        raise FieldError(field, f"must have at most {VARIABLES_MAX} variables")
    return [{"name": k, "value": v} for k, v in merged.items()]
