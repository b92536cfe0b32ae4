"""Keyword arguments → wire names: a call takes `last_message` or `lastMessage` alike. The
snake_case names come from the generated tables (_fields.py); a name found in neither form
is sent as given, and the service says what is wrong with it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcrm_client._fields import INPUTS, TABLES


def _wire_names(resource: str) -> dict[str, str]:
    names: dict[str, str] = {}
    for wire, snake, _kind in TABLES.get(resource, ()):
        names[snake] = wire
    for wire, snake in INPUTS.get(resource, ()):
        names[snake] = wire
    return names


_WIRE: dict[str, dict[str, str]] = {name: _wire_names(name) for name in TABLES}


def to_wire(resource: str, values: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of a call of `resource` under their wire names, in order."""
    names = _WIRE.get(resource, {})
    out: dict[str, Any] = {}
    for key, value in values.items():
        out[names.get(key, key)] = value
    return out
