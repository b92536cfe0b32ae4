"""Records as the client returns them: snake_case attributes over the wire JSON, values
converted by the kind the service's field tables give (_fields.py), and `to_dict()` giving
the wire JSON back exactly as received."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, ClassVar

from chatcrm_client._fields import TABLES
from chatcrm_client._shapes import SHAPES
from chatcrm_client._wire import parse_timestamp, plain

# Table name → {snake_case name → (wire name, kind)}; wire names are accepted too.
_ATTRIBUTES: dict[str, dict[str, tuple[str, str]]] = {}
for _table, _rows in {**TABLES, **SHAPES}.items():
    _names = _ATTRIBUTES.setdefault(_table, {})
    for _wire_name, _snake_name, _kind in _rows:
        _names[_snake_name] = (_wire_name, _kind)
        _names.setdefault(_wire_name, (_wire_name, _kind))


def _convert(value: Any, kind: str) -> Any:
    if value is None or kind == "other":
        return value
    if kind == "timestamp":
        return parse_timestamp(value)
    if kind == "money":
        return Decimal(value)
    if kind == "variables":
        # Names are unique on a record (a later one replaces an earlier one): a dict reads
        # better than a list of pairs.
        return {item["name"]: item["value"] for item in value}
    if kind.startswith("rows:"):
        table = kind.removeprefix("rows:")
        return [record_class(table)(item, table=table) for item in value]
    raise AssertionError(f"unknown kind {kind}")


class Record:
    """A record of the service. Attributes are the snake_case (or wire) names of its keys:
    timestamps are aware datetimes, money is Decimal, nested rows are records, variables
    a dict. `etag` is the version the answer named (single-record answers), for `if_match`.
    """

    __slots__ = ("_table", "_wire", "etag")
    default_table: ClassVar[str | None] = None

    def __init__(
        self, wire: dict[str, Any], *, table: str | None = None, etag: str | None = None
    ) -> None:
        self._wire = wire
        self._table = table or self.default_table
        self.etag = etag

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        found = _ATTRIBUTES.get(self._table or "", {}).get(name)
        if found is not None and found[0] in self._wire:
            wire, kind = found
            return _convert(self._wire[wire], kind)
        if name in self._wire:  # a key no table names (upsert results, merge's mergedIds…)
            return self._wire[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    def __getitem__(self, wire: str) -> Any:
        """The value under a wire key, as parsed (money as Decimal)."""
        return self._wire[wire]

    def __contains__(self, wire: object) -> bool:
        return wire in self._wire

    def __iter__(self) -> Iterator[str]:
        return iter(self._wire)

    def __dir__(self) -> list[str]:
        names = {snake for snake, (wire, _) in _ATTRIBUTES.get(self._table or "", {}).items()}
        return sorted(set(super().__dir__()) | names)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Record) and self._wire == other._wire

    def __hash__(self) -> int:
        return hash((type(self), self._wire.get("id")))

    def __repr__(self) -> str:
        shown = {k: self._wire[k] for k in ("id", "name", "type") if k in self._wire}
        inner = ", ".join(f"{k}={v!r}" for k, v in shown.items())
        return f"{type(self).__name__}({inner})"

    def to_dict(self) -> dict[str, Any]:
        """The wire JSON as received: same keys, same order, the values `json.loads` gives."""
        result: dict[str, Any] = plain(self._wire)
        return result


class Contact(Record):
    default_table = "contact"


class Opportunity(Record):
    default_table = "opportunity"


class Activity(Record):
    """An activity of a contact or of an opportunity (`category_type` on the latter)."""

    default_table = "opportunityActivity"


class Tag(Record):
    default_table = "contactTag"


class Workspace(Record):
    default_table = "workspace"


class Webhook(Record):
    default_table = "webhook"


class Delivery(Record):
    default_table = "delivery"


class Event(Record):
    """An event of the feed or of a record's history; `data` is the wire dict, `record`
    the contact or opportunity it carries (record events)."""

    default_table = "event"

    @property
    def record(self) -> Contact | Opportunity | None:
        kind, _, rest = str(self._wire.get("type", "")).partition(".")
        data = self._wire.get("data")
        if not isinstance(data, dict) or rest.startswith("activity"):
            return None
        if kind == "contact":
            return Contact(data)
        if kind == "opportunity":
            return Opportunity(data)
        return None


class User(Record):
    """A person of the account (contract J.1)."""

    default_table = "user"


class ApiKey(Record):
    """An API key (contract J.5); its secret is only in `keys.create`'s answer."""

    default_table = "key"


class AuditEntry(Record):
    """An entry of the account's audit log (contract J.6)."""

    default_table = "auditEntry"


class Message(Record):
    """A message of a conversation (contract K.1); `media`, `location`, `error` and
    `sent_by` are dicts as on the wire."""

    default_table = "message"


class Channel(Record):
    """A WhatsApp channel (contract K.2), without its access token and app secret."""

    default_table = "channel"


_CLASSES: dict[str, type[Record]] = {
    "contact": Contact,
    "opportunity": Opportunity,
    "opportunityActivity": Activity,
    "contactActivity": Activity,
    "contactTag": Tag,
    "workspace": Workspace,
    "webhook": Webhook,
    "delivery": Delivery,
    "event": Event,
    "user": User,
    "key": ApiKey,
    "auditEntry": AuditEntry,
    "message": Message,
    "channel": Channel,
}


def record_class(table: str) -> type[Record]:
    return _CLASSES.get(table, Record)
