"""Defaults computed when a record is created: the clock, the caller, the new id, the
workspace, another field's value (records/stages.py and the features add their own)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass
class Creation:
    """A record being created: what its defaults may depend on."""

    conn: Any  # chatcrm.db.database.Connection
    workspace_id: str
    record_id: str
    key_id: str
    now: datetime
    values: dict[str, Any]  # wire name → value, filled in table order
    kind: Any = None  # the record kind (records/kind.py)


class Default:
    """A default computed when the record is created (the clock, the caller, the database).
    `order`: 0 first, 1 after those (they may read them), 2 last of all."""

    order = 0

    async def value(self, creation: Creation) -> Any:
        raise NotImplementedError


class _Now(Default):
    async def value(self, creation: Creation) -> Any:
        return creation.now


class _Caller(Default):
    async def value(self, creation: Creation) -> Any:
        return creation.key_id


class _RecordId(Default):
    async def value(self, creation: Creation) -> Any:
        return creation.record_id


class _Workspace(Default):
    async def value(self, creation: Creation) -> Any:
        return creation.workspace_id


NOW, CALLER, RECORD_ID, WORKSPACE = _Now(), _Caller(), _RecordId(), _Workspace()


@dataclass(frozen=True)
class SameAs(Default):
    """The value another field took (finalAmount defaults to amount)."""

    wire: str

    async def value(self, creation: Creation) -> Any:
        return creation.values[self.wire]
