"""The check of a record of contract J or K against the client's hand-kept shape
(chatcrm_client/_shapes.py): the service's keys in the service's order, and every key the
shape calls a timestamp read as an aware datetime (or None)."""

from __future__ import annotations

from datetime import datetime

from chatcrm_client import Record
from chatcrm_client._shapes import SHAPES


def assert_shape(record: Record, table: str) -> None:
    rows = SHAPES[table]
    assert list(record.to_dict()) == [wire for wire, _snake, _kind in rows]
    for wire, snake, kind in rows:
        value = getattr(record, snake)
        if kind == "timestamp" and record[wire] is not None:
            assert isinstance(value, datetime) and value.tzinfo is not None, (wire, value)
        elif kind == "other":
            assert value == record[wire]
