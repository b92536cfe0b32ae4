"""One cell's text ⇄ one body value, by the type of the field the column fills.

Reading: an empty cell is "not given"; booleans are `true`/`false`; whole numbers and
choices are integers; money is a decimal number; files and tags are `;`-separated; the
`variables` column holds the JSON array of the API, a `var:` column one value (a JSON
number, boolean, null or string, else the text itself). Writing is the inverse, so what export
writes, import reads back to the same value."""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from chatcrm.records.array_types import Files, TagIds, Variables
from chatcrm.records.fields import Field
from chatcrm.records.scalar_types import Boolean, Choice, MoneyAmount, WholeNumber

LIST_SEPARATOR = ";"


class CellError(ValueError):
    """The cell's text is not a value of its column's type (the row fails)."""


# What no request can carry: the NUL character (the API refuses a body holding one, which
# would fail every row of an upsert batch) and a lone surrogate (half of a UTF-16 pair, as
# a JSON cell may spell it, `\ud800`: not a character, so it has no UTF-8).
_UNSENDABLE = re.compile("[\x00\ud800-\udfff]")


def unsendable(value: Any) -> str | None:
    """Why `value` cannot be sent (a cell's text, or what a JSON cell reads as: its keys
    and values at any depth), or None when it can."""
    if isinstance(value, str):
        found = _UNSENDABLE.search(value)
        if found is None:
            return None
        char = found.group()
        if char == "\x00":
            return "the NUL character is not allowed"
        return f"a lone surrogate (\\u{ord(char):04x}) is not a character and cannot be sent"
    if isinstance(value, dict):
        value = [*value.keys(), *value.values()]
    if isinstance(value, list):
        return next((why for item in value if (why := unsendable(item)) is not None), None)
    return None


def sendable(value: Any) -> Any:
    """`value`, when it can be sent; else the row fails, naming the cell (CellError)."""
    why = unsendable(value)
    if why is not None:
        raise CellError(why)
    return value


ESCAPE = "\\"


def split_list(text: str) -> list[str]:
    """`a; b;;c` → `["a", "b", "c"]`: blanks around and between separators ignored. An
    item holding the separator itself (a tag `Sales;EU`, a URL with `;`) is written with
    it escaped, `Sales\\;EU`, a backslash of its own doubled, and a blank at its edges
    escaped (`\\ padded\\ `), as `join_list` writes them; a backslash before anything
    else is kept as written (`C:\\docs`)."""
    parts: list[list[tuple[str, bool]]] = [[]]
    for char, escaped in _read_escapes(text, LIST_SEPARATOR):
        if char == LIST_SEPARATOR and not escaped:
            parts.append([])
        else:
            parts[-1].append((char, escaped))
    items = (_trimmed(part) for part in parts)
    return [item for item in items if item]


def join_list(items: list[Any]) -> str:
    """The inverse of `split_list`."""
    return LIST_SEPARATOR.join(escaped_item(str(item), LIST_SEPARATOR) for item in items)


def read_item(text: str) -> str:
    """One item written by `escaped_item` without a separator (a `var:` column's variable
    name): blanks at its edges ignored unless escaped, `\\\\` a backslash."""
    return _trimmed(list(_read_escapes(text, None)))


def escaped_item(item: str, separator: str | None = None) -> str:
    """`item` as `split_list` or `read_item` reads it back: a backslash doubled, the
    separator escaped, and each blank at its edges, which reading would drop, escaped."""
    text = item.replace(ESCAPE, ESCAPE * 2)
    if separator is not None:
        text = text.replace(separator, ESCAPE + separator)
    body = text.strip()
    if body == text:
        return text
    head = text[: len(text) - len(text.lstrip())]
    tail = text[len(text.rstrip()) :] if body else ""
    return _escaped_blanks(head) + body + _escaped_blanks(tail)


def _escaped_blanks(blanks: str) -> str:
    return "".join(ESCAPE + char for char in blanks)


def _read_escapes(text: str, separator: str | None) -> list[tuple[str, bool]]:
    """Each character of `text` and whether it was escaped: `\\\\`, the separator and a
    blank after a backslash are that character escaped; a backslash before anything else
    is itself (`C:\\docs`)."""
    out: list[tuple[str, bool]] = []
    chars = iter(text)
    for char in chars:
        if char != ESCAPE:
            out.append((char, False))
            continue
        following = next(chars, "")
        if following in (ESCAPE, separator) or following.isspace():
            out.append((following, True))
        else:
            out.append((char, False))
            if following:
                out.append((following, False))
    return out


def _trimmed(part: list[tuple[str, bool]]) -> str:
    """The characters read, without the blanks at the edges that were not escaped."""
    start, end = 0, len(part)
    while start < end and not part[start][1] and part[start][0].isspace():
        start += 1
    while end > start and not part[end - 1][1] and part[end - 1][0].isspace():
        end -= 1
    return "".join(char for char, _ in part[start:end])


def read_cell(field: Field, text: str) -> Any:
    """The body value of a non-empty cell of a column filling `field`."""
    kind = field.type
    if isinstance(kind, Boolean):
        lowered = text.strip().lower()
        if lowered not in ("true", "false"):
            raise CellError("must be true or false")
        return lowered == "true"
    if isinstance(kind, WholeNumber | Choice):
        stripped = text.strip()
        if not (stripped.isascii() and stripped.lstrip("-").isdigit()):
            raise CellError("must be a whole number")
        return int(stripped)
    if isinstance(kind, MoneyAmount):
        return _number(text)
    if isinstance(kind, Files | TagIds):
        return split_list(text)
    if isinstance(kind, Variables):
        try:
            return json.loads(text)
        except ValueError as exc:
            raise CellError('must be a JSON array of {"name", "value"}') from exc
    return text


_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


_WHOLE_DIGITS = 18  # (`adjusted`: the exponent of the first digit, no context arithmetic)


def _number(text: str) -> int | Decimal:
    """A JSON number for the API (which refuses numbers sent as strings), exactly as
    written: the SDK writes a Decimal as its own digits, where a float would round an
    amount of 16 significant digits (10^12 with 4 decimals)."""
    # "1 234.50": spaces group the digits, also the no-break and thin ones a spreadsheet
    # in French or Spanish writes.
    written = re.sub("[ \u00a0\u2009\u202f]", "", text.strip())
    # Decimal alone also takes `1_5` (15) and other scripts' digits (`١٢٣`): a typo or a
    # cell of another sheet would be a silent number.
    if not _DECIMAL.fullmatch(written):
        raise CellError("must be a number")
    try:
        value = Decimal(written)
    except InvalidOperation as exc:
        raise CellError("must be a number") from exc
    if not value.is_finite():
        raise CellError("must be a number")
    # Whole numbers go as integers, but never one of thousands of digits (`1e5000`): the
    # JSON writer refuses those, and the server refuses such amounts anyway.
    if value.adjusted() < _WHOLE_DIGITS and value == value.to_integral_value():
        return int(value)
    return value


def write_cell(value: Any) -> str:
    """The cell text of a wire value (null and absent: empty)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return join_list(value)
    if isinstance(value, float):
        # Money read as a float: its shortest exact text, never an exponent.
        return format(Decimal(repr(value)).normalize(), "f")
    if isinstance(value, Decimal):
        return format(value.normalize(), "f")
    return str(value)


def read_variable(text: str) -> Any:
    """A var: cell's value: a JSON number, `true`, `false`, `null` or a JSON string
    (`"30"`) is that value; any other text is the text as it is. Variables hold strings,
    numbers, booleans and null (contract section 2), and export writes each so that this
    reads it back the same."""
    try:
        value = json.loads(text, parse_float=Decimal, parse_constant=_no_constant)
    except (ValueError, ArithmeticError):  # an exponent beyond Decimal's is text too
        return text
    if isinstance(value, list | dict):
        return text
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")  # NaN, Infinity: text, not numbers


def variable_text(value: Any) -> str:
    """A variable's value as a var: cell, read back to the same value by `read_variable`:
    a string as it is, unless it is empty, blank or would read as another value (`30`,
    `true`, `"a"`), then as a JSON string; other values as JSON."""
    if isinstance(value, str):
        # An empty or blank cell is "not given": such a text is written as a JSON string.
        kept = value.strip() and read_variable(value) == value
        return value if kept else json.dumps(value, ensure_ascii=False)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        # The number's JSON text as stored (docs/api.md 3.4: kept exactly as sent): the
        # SDK reads it into a Decimal, which keeps its digits (`1200.50`, `3.0`, `-0.0`;
        # `1e2` as `1E+2`), and `read_variable` reads it back into the same Decimal. Not
        # `write_cell`'s normalized money text, which would write `1200.5`, `3`, `0`.
        return str(value)
    return json.dumps(value)


# The keys of an activity in an `activities` cell: what an activity is created with.
ACTIVITY_KEYS = ("categoryType", "content", "date")


def read_activities(text: str) -> list[dict[str, Any]]:
    """An `activities` cell: a JSON array of objects with `categoryType`, `content` and
    `date` (what export writes; `id` and `createdBy` are the source workspace's, ignored),
    each checked as Add Activity checks it."""
    from chatcrm.opportunities.activities import FIELDS as ACTIVITY_FIELDS
    from chatcrm.records.bodies import create_body

    try:
        value = json.loads(text, parse_constant=_no_constant)
    except ValueError:
        raise CellError("must be a JSON array of activities") from None
    if not isinstance(value, list) or not all(isinstance(item, dict) for item in value):
        raise CellError("must be a JSON array of activities")
    activities = []
    for place, item in enumerate(value, start=1):
        body = {key: item[key] for key in ACTIVITY_KEYS if item.get(key) is not None}
        errors = create_body(ACTIVITY_FIELDS, body, workspace_key=False).errors
        if errors:
            said = "; ".join(f"{e.field}: {e.message}" for e in errors)
            raise CellError(f"activity {place}: {said}")
        activities.append(body)
    return activities


# A cell a spreadsheet would run as a formula: one starting with `=`, `@`, a tab or a
# carriage return, or with `+` or `-` followed by more than a number or a phone: a digit,
# then digits, blanks, `.`, `(`, `)` and `-` (`+cmd|' /C calc'!A0`, `+E1`, `-2+3` and
# `-(1)` are guarded; `+51 987 654 321`, `+1 (555) 010-0100` and `-0.5` are left alone).
# Behind any `'`s: the `'` export adds is taken off by import, so a cell of the record's
# own starting with `'=` keeps it.
_FORMULA = re.compile(r"'*(?:[=@\t\r]|[+-](?!\d[\d\s().-]*$))")


def guarded(text: str) -> str:
    """A cell as export writes it to CSV: a formula's start behind a `'`, which marks a
    spreadsheet's cell as text (customers' names and messages come from anyone)."""
    return f"'{text}" if _FORMULA.match(text) else text


def unguarded(text: str) -> str:
    """A CSV cell as import reads it: the `'` that `guarded` put before a formula's start
    taken off (also one a person typed so, as a spreadsheet reads it)."""
    return text[1:] if text.startswith("'") and _FORMULA.match(text[1:]) else text
