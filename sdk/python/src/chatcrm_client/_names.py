"""Keyword arguments → wire names: a call takes `last_message` or `lastMessage` alike. The
snake_case names come from the generated tables (_fields.py); a name found in neither form
is sent as given, and the service says what is wrong with it."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from chatcrm_client._fields import INPUTS, TABLES
from chatcrm_client._records import Record


def _wire_names(resource: str) -> dict[str, str]:
    names: dict[str, str] = {}
    for wire, snake, _kind in TABLES.get(resource, ()):
        names[snake] = wire
    for wire, snake in INPUTS.get(resource, ()):
        names[snake] = wire
    return names


_WIRE: dict[str, dict[str, str]] = {name: _wire_names(name) for name in TABLES}
_MONEY: dict[str, frozenset[str]] = {
    name: frozenset(wire for wire, _snake, kind in rows if kind == "money")
    for name, rows in TABLES.items()
}


def to_wire(resource: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of a call of `resource` under their wire names, in order.
    Money given as text (`"1200.50"`) is sent as the exact number it spells; values as the
    client read them are sent as the wire has them (`_sendable`)."""
    names = _WIRE.get(resource, {})
    money = _MONEY.get(resource, frozenset())
    out: dict[str, Any] = {}
    for key, value in values.items():
        wire = names.get(key, key)
        if wire in money and isinstance(value, str):
            # Text that is no number is sent as it is: the service says what is wrong.
            with contextlib.suppress(ArithmeticError):
                value = Decimal(value)
        out[wire] = _sendable(wire, value)
    return out


# The wire names of a contact's variables: read as a dict (name → value), sent as pairs.
_VARIABLES = frozenset({"variables", "customFields"})


def _sendable(wire: str, value: Any) -> Any:
    """A value as the client returned it, as the service takes it back: a record (a tag)
    as its wire JSON, a list of records as theirs, a variables dict as `{name, value}`
    pairs. So what was read can be sent back (`update(id, tags=contact.tags)`)."""
    if wire in _VARIABLES and isinstance(value, Mapping):
        return [{"name": name, "value": item} for name, item in value.items()]
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list | tuple) and any(isinstance(v, Record) for v in value):
        return [v.to_dict() if isinstance(v, Record) else v for v in value]
    return value
