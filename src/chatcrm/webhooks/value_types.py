"""The value types only webhooks have: the receiver's URL, the event types it takes, the
signing secret and why an endpoint was disabled (records/types.py says what a type gives).

Whether the URL's host may be reached (addresses.py) needs the resolver, so it is checked by
the service after these synchronous checks, and reported in the same 422.
"""

from __future__ import annotations

import re
from ipaddress import IPv6Address
from typing import Any
from urllib.parse import urlsplit

from sqlalchemy import ColumnElement, type_coerce
from sqlalchemy import Text as SqlText

from chatcrm.core import values as v
from chatcrm.core.errors import FieldError
from chatcrm.core.jsontext import to_text
from chatcrm.events.types import EVERYTHING, FAMILIES, TYPES, is_pattern
from chatcrm.records.types import JsonText, Schema, ValueType

URL_MAX = 2000
# Visible ASCII only: whitespace, control characters and non-ASCII are where URL parsers
# disagree (a tab or a backslash is dropped or turned into "/" by some), and the host we
# check must be the host the sender connects to.
_VISIBLE_ASCII = re.compile(r"[!-~]+")
# A host name as urlsplit gives it (lower-cased): letters, digits, dots, hyphens,
# underscores. A percent-encoded host (`%31%32%37.0.0.1`) is refused: some clients decode it.
_HOST_NAME = re.compile(r"[a-z0-9_.-]+")
_EXAMPLE = "e.g. https://example.com/webhooks"


def _is_dns_name(host: str) -> bool:
    """Labels of 1 to 63 characters, 253 in all (one final dot allowed): a name that
    could ever resolve."""
    name = host.removesuffix(".")
    return 0 < len(name) <= 253 and all(0 < len(label) <= 63 for label in name.split("."))


def check_url(field: str, value: object) -> str:
    """An http or https URL with a host, at most 2,000 characters; kept as given."""
    url = v.require_str(field, value)
    if len(url) > URL_MAX:
        raise FieldError(field, f"must be at most {URL_MAX} characters")
    if not _VISIBLE_ASCII.fullmatch(url) or "\\" in url:
        raise FieldError(
            field,
            "must be a URL of visible ASCII characters without spaces or backslashes "
            "(percent-encode the others; an international host name in its xn-- form)",
        )
    try:
        parts = urlsplit(url)
        port = parts.port
        host = parts.hostname
    except ValueError as exc:
        raise FieldError(field, f"must be a valid http or https URL, {_EXAMPLE}") from exc
    if parts.scheme not in ("http", "https"):
        raise FieldError(field, f"must be an http or https URL, {_EXAMPLE}")
    if not host:
        raise FieldError(field, f"must name a host, {_EXAMPLE}")
    if "@" in parts.netloc:
        # A password in the URL would be shown wherever the URL is read (a list of
        # webhooks, a channel's record) and logged: secrets are never shown again. (And
        # in `http://a@b@c/` parsers differ on which part is the host.)
        raise FieldError(
            field,
            "must not hold a user name or password before the host: a receiver checks "
            "the signature instead",
        )
    if "[" in parts.netloc:
        try:
            IPv6Address(host)
        except ValueError as exc:
            raise FieldError(field, "must have a valid IPv6 address between [ ]") from exc
    elif not _HOST_NAME.fullmatch(host) or not _is_dns_name(host):
        raise FieldError(
            field,
            "must name a valid host: letters, digits, '-' and '_' in labels of 1 to 63 "
            "characters separated by '.', at most 253 in all",
        )
    if port == 0:
        raise FieldError(field, "must have a port from 1 to 65535")
    return url


class WebhookUrl(ValueType):
    sql_type = SqlText()
    description = (
        "Where events are POSTed: an http or https URL, at most 2,000 characters. A host "
        "that is or resolves to a loopback, private, link-local, CGNAT, multicast or "
        "unspecified address is refused unless the server allows private receivers."
    )

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        return check_url(field, value)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "string", "maxLength": URL_MAX, "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://"}

    def output_schema(self) -> Schema:
        return {"type": "string"}


# Every value a subscription may hold, in the order the messages list them.
PATTERNS = (*TYPES, *FAMILIES, EVERYTHING)


def _shown(item: object) -> str:
    """An unknown item as the client wrote it (near enough), cut short."""
    try:
        text = to_text(item)
    except TypeError:  # an integer beyond 64 bits, somewhere inside
        text = repr(item)
    return text if len(text) <= 60 else text[:57] + "..."


class EventTypes(ValueType):
    """A non-empty list of event types, families (`contact.*`) or `"*"`; duplicates
    collapse (first place kept). Kept as JSON text, shown as stored."""

    sql_type = SqlText()
    description = (
        'Event types (e.g. contact.created), families (contact.*, opportunity.*) or "*" '
        "for every type; an unknown one is refused."
    )

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if not isinstance(value, list):
            raise FieldError(field, 'must be an array of event types, e.g. ["contact.*"]')
        if not value:
            raise FieldError(field, 'must name at least one event type (["*"] for every type)')
        unknown = [item for item in value if not (isinstance(item, str) and is_pattern(item))]
        if unknown:
            named = ", ".join(_shown(item) for item in unknown)
            raise FieldError(
                field,
                f"has unknown event types: {named}; use {', '.join(PATTERNS)}",
            )
        return list(dict.fromkeys(value))

    def store(self, value: Any) -> Any:
        return to_text(value)

    def wire_sql(self, column: Any, dialect: str) -> ColumnElement[Any]:
        return type_coerce(column, JsonText())

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "enum": list(PATTERNS)},
        }

    def output_schema(self) -> Schema:
        return {"type": "array", "items": {"type": "string"}}


class Shown(ValueType):
    """A read-only value, shown as stored (never in a body)."""

    def __init__(self, schema: Schema, description: str = "") -> None:
        self.schema = schema
        self.description = description

    def output_schema(self) -> Schema:
        return self.schema


SECRET = Shown(
    {"type": "string", "pattern": "^whsec_[A-Za-z0-9+/]{43}=$"},
    "whsec_ + base64 of 32 random bytes: the key of the webhook-signature HMAC (its "
    "base64-decoded part after whsec_). Not shown by the list.",
)
# No `type`: null is added to the enum where the field is nullable (records/schemas.py).
DISABLED_REASON = Shown(
    {"enum": ["gone", "failing"]},
    'null while enabled or disabled by hand; "gone": the receiver answered 410; "failing": '
    "too many consecutive failed deliveries.",
)
URL = WebhookUrl()
EVENT_TYPES = EventTypes()
