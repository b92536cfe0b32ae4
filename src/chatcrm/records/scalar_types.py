"""The types of single values: texts, ids and references, email, phone, booleans, numbers,
choices, timestamps and money (records/types.py says what a type gives)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean as SqlBoolean
from sqlalchemy import Column, ColumnElement, Integer, String, func, type_coerce
from sqlalchemy import Text as SqlText

from chatcrm.core import phone
from chatcrm.core import values as v
from chatcrm.core.errors import FieldError
from chatcrm.core.money import money_sql
from chatcrm.core.timestamps import iso_sql, parse_iso
from chatcrm.db.types import Money as SqlMoney
from chatcrm.db.types import UTCDateTime
from chatcrm.records.types import ID_LENGTH, JsonText, Schema, ValueType


class Text(ValueType):
    empty = ""

    def __init__(self, max_len: int = v.NAME_MAX, *, nonblank: bool = False) -> None:
        self.max_len = max_len
        self.nonblank = nonblank
        self.sql_type = String(max_len) if max_len <= v.NAME_MAX else SqlText()

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if self.nonblank:
            return v.required_text(field, value, max_len=self.max_len)
        return v.text(field, value, max_len=self.max_len, nullable=nullable)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        schema: Schema = {"type": "string", "maxLength": self.max_len}
        if self.nonblank:
            schema.update(minLength=1, pattern=r"\S")
        return schema

    def output_schema(self) -> Schema:
        return {"type": "string"}


class Identifier(ValueType):
    """An id the service gave (read-only)."""

    sql_type = String(ID_LENGTH)

    def output_schema(self) -> Schema:
        return {"type": "string"}


class Reference(ValueType):
    """An id naming another record of the workspace (whether it exists is checked against
    the database, records/references.py). `target` names what it refers to."""

    sql_type = String(ID_LENGTH)

    def __init__(self, target: str) -> None:
        self.target = target
        self.description = f"The id of one of the workspace's {target}s."

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        return v.reference(field, value, nullable=nullable)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        # `""` means none where none is allowed; else it is refused as empty.
        return {"type": "string", "maxLength": 64, **({} if nullable else {"minLength": 1})}

    def output_schema(self) -> Schema:
        return {"type": "string"}

    def parse_query(self, name: str, text: str) -> Any:
        return text


class ContactLink(Reference):
    """An opportunity's contact: null or `""` unlinks; shown as `""` when not linked."""

    shows_null = False

    def __init__(self) -> None:
        super().__init__("contact")

    def wire_sql(self, column: Any, dialect: str) -> ColumnElement[Any]:
        return func.coalesce(column, "")


# What core/values.py reads as an address, as far as a pattern can say it: a local part of
# 1 to 64 characters without spaces, controls, quotes or brackets, an @, a domain without
# spaces, surrounding spaces trimmed. The domain's own rules (labels, an international
# name read as IDNA) and the 254-character limit are the server's alone.
_EMAIL = r'^\s*[^@\s\x00-\x1f\x7f"(),:;<>\[\\\]]{1,64}@[^@\s]+\s*$'
# A phone as core/phone.py reads it (phone.INPUT_PATTERN): an optional +, then digits,
# spaces, dots, dashes and brackets; surrounding spaces trimmed; blank for none. How many
# digits it must have (6 to 15 once an international prefix or a trunk 0 is read) is the
# server's alone.


class Email(ValueType):
    """An email address. `key_column`: a second column keeps it lower-cased, computed here
    so both databases compare it the same way (uniqueness, searchByEmail)."""

    sql_type = String(v.EMAIL_MAX)
    description = "An email address (surrounding spaces are trimmed)."

    def __init__(self, *, key_column: str | None = None) -> None:
        self.key_column = key_column

    def columns(self, column: str, value: Any) -> dict[str, Any]:
        out = {column: value}
        if self.key_column is not None:
            out[self.key_column] = value.lower() if value else None
        return out

    def sql_columns(self, column: str, *, nullable: bool) -> list[Column[Any]]:
        out = [Column(column, self.sql_type, nullable=nullable)]
        if self.key_column is not None:
            out.append(Column(self.key_column, self.sql_type, nullable=True))
        return out

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        return v.email(field, value, nullable=nullable)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        # An empty (or blank) value stands for none where the field may be null.
        return {"type": "string", "pattern": rf"^\s*$|{_EMAIL}" if nullable else _EMAIL}

    def output_schema(self) -> Schema:
        return {"type": "string"}


class Phone(ValueType):
    """Digits with country code (`+51 987-654-321` → `51987654321`); `""` when none.
    `empty_is_null`: a phone that is optional shows null, not `""`, when absent."""

    sql_type = String(15)
    description = "A phone number with country code; formatting characters are ignored."
    empty = ""

    def __init__(self, *, empty_is_null: bool = False) -> None:
        self.empty_is_null = empty_is_null

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if value is None and nullable:
            return None
        digits = v.phone(field, value)
        return (digits or None) if self.empty_is_null else digits

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "string", "pattern": phone.INPUT_PATTERN}

    def output_schema(self) -> Schema:
        return {"type": "string", "pattern": "^[0-9]*$"}

    def parse_query(self, name: str, text: str) -> Any:
        # A '+' in a query string that was not percent-encoded arrives as a space: a
        # leading one stands for it (`+51 (0) 922…` is read as written, not as bare digits)
        # when a country code follows. Before a '+' or a 0 (`00`, `011`: no country code
        # starts with 0) it is only a space, as it was before '+' was read (contract N).
        rest = text.lstrip()
        if text[:1] == " " and rest and rest[0] in "123456789":
            text = "+" + rest
        return v.phone(name, text.strip(), allow_empty=False)


class Boolean(ValueType):
    sql_type = SqlBoolean()

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if value is None and nullable:
            return None
        return v.boolean(field, value)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "boolean"}

    def parse_query(self, name: str, text: str) -> Any:
        lowered = text.lower()
        if lowered in ("true", "1"):
            return True
        if lowered in ("false", "0"):
            return False
        raise FieldError(name, "must be true or false")

    def query_schema(self) -> Schema:
        # The query form: true or false in any case, or 1 or 0 (or empty: no filter).
        return {"type": "string", "pattern": "^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[01])?$"}


class WholeNumber(ValueType):
    sql_type = Integer()
    description = "From 0."

    def __init__(self, minimum: int = 0, maximum: int = v.INT32_MAX) -> None:
        self.minimum = minimum
        self.maximum = maximum

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if value is None and nullable:
            return None
        return v.integer(field, value, minimum=self.minimum, maximum=self.maximum)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "integer", "minimum": self.minimum, "maximum": self.maximum}

    def output_schema(self) -> Schema:
        return {"type": "integer"}


class Choice(ValueType):
    """One of a few integers (platformId, winLossStatus…)."""

    sql_type = Integer()

    def __init__(self, allowed: tuple[int, ...], description: str = "") -> None:
        self.allowed = allowed
        self.description = description

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        return v.choice(field, value, self.allowed)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "integer", "enum": list(self.allowed)}

    def output_schema(self) -> Schema:
        return {"type": "integer"}

    def query_schema(self) -> Schema:
        return {"type": "integer", "enum": list(self.allowed)}

    def parse_query(self, name: str, text: str) -> Any:
        # ASCII digits only: str.isdigit() is also true for "²", which int() refuses.
        if not (text.isascii() and text.isdigit() and len(text) <= 9) or int(text) not in (
            self.allowed
        ):
            raise FieldError(name, f"must be one of {', '.join(map(str, self.allowed))}")
        return int(text)


class Word(ValueType):
    """One of a few exact strings (a stage's kind, an activity's category)."""

    def __init__(self, allowed: tuple[str, ...], message: str) -> None:
        self.allowed = allowed
        self.message = message
        self.sql_type = String(max(len(a) for a in allowed))

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if value not in self.allowed:
            raise FieldError(field, self.message)
        return value

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "string", "enum": list(self.allowed)}


class Timestamp(ValueType):
    sql_type = UTCDateTime()
    description = "ISO 8601; an offset is normalised to UTC, a naive time is UTC."

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        return v.timestamp(field, value, nullable=nullable)

    def wire_sql(self, column: Any, dialect: str) -> ColumnElement[Any]:
        return iso_sql(column, dialect)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        # Not `format: date-time`: plain dates and other ISO 8601 forms are accepted too.
        schema: Schema = {"type": "string", "minLength": 8, "maxLength": 64}
        # `""` means none where none is allowed (docs/api.md 5.18).
        return {"anyOf": [schema, {"type": "string", "maxLength": 0}]} if nullable else schema

    def output_schema(self) -> Schema:
        return {"type": "string", "format": "date-time"}

    def query_schema(self) -> Schema:
        return {"type": "string", "minLength": 8, "maxLength": 64}

    def parse_query(self, name: str, text: str) -> datetime:
        try:
            # A '+' offset arrives as a space when the client did not percent-encode it.
            return parse_iso(text.replace(" ", "+") if "T" in text else text)
        except ValueError as exc:
            raise FieldError(
                name, "must be an ISO 8601 date-time, e.g. 2025-04-07T21:56:19Z"
            ) from exc


class MoneyAmount(ValueType):
    sql_type = SqlMoney()
    description = "An exact amount, 0 to 10^12, at most 4 decimal places."

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        return v.money(field, value)

    def wire_sql(self, column: Any, dialect: str) -> ColumnElement[Any]:
        return type_coerce(money_sql(column, dialect), JsonText())

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "number", "minimum": 0, "maximum": 10**12}

    def output_schema(self) -> Schema:
        return {"type": "number", "minimum": 0}


# The types most fields are of.
ID = Identifier()
TIMESTAMP = Timestamp()
TEXT = Text()
LONG_TEXT = Text(v.TEXT_MAX)
NAME = Text(nonblank=True)
CONTENT = Text(v.TEXT_MAX, nonblank=True)
BOOLEAN = Boolean()
POSITION = WholeNumber()
MONEY = MoneyAmount()
PHONE = Phone()
EMAIL = Email()
AGENT = Reference("agent")
SEGMENTATION = Reference("segmentation")
STAGE = Reference("stage")
