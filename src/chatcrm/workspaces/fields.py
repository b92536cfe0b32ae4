"""The field tables of a workspace and of its set-up items (contract B.3, C): stages, tags,
segmentations and agents."""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import ColumnElement, String, and_, bindparam, func, select

from chatcrm.core import phone
from chatcrm.core import values as v
from chatcrm.core.errors import FieldError
from chatcrm.db import locks
from chatcrm.db.schema import agents, segmentations, stages, tags
from chatcrm.records.array_types import Rows
from chatcrm.records.defaults import NOW, RECORD_ID, Creation, Default
from chatcrm.records.fields import NULL, OPTIONAL, REQUIRED, UPDATE, Field, FieldTable
from chatcrm.records.scalar_types import (
    BOOLEAN,
    EMAIL,
    ID,
    NAME,
    POSITION,
    TEXT,
    TIMESTAMP,
    Word,
)
from chatcrm.records.types import Schema, ValueType

STAGE_KIND = Word(("contact", "opportunity"), 'must be "contact" or "opportunity"')
HIDDEN = frozenset[str]()


@functools.cache
def _iana_names() -> frozenset[str]:
    return frozenset(resources.files("tzdata").joinpath("zones").read_text().split())


class Timezone(ValueType):
    """An IANA time zone name."""

    description = "An IANA time zone name, e.g. America/Lima."

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        name = v.required_text(field, value, max_len=64)
        problem = FieldError(field, "must be an IANA time zone, e.g. America/Lima")
        # A name of the IANA database as the tzdata package lists it: not any file of this
        # machine's zoneinfo folder (`localtime`, `posix/…`), which would name another
        # zone, or none, on another node.
        if name not in _iana_names():
            raise problem
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise problem from exc
        return name

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "string", "minLength": 1, "maxLength": 64}


class Country(ValueType):
    """An ISO 3166 alpha-2 country code (any case in, upper case stored), or null."""

    sql_type = String(2)
    description = (
        "ISO 3166 alpha-2 code (PE, MX, US…) or null: phones of bare digits that are a valid "
        "national number of this country are read as such (+51 987 654 321 for 987654321 "
        "in PE); without it, bare digits begin with their country code."
    )

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        if value is None:
            return None
        code = v.require_str(field, value).strip().upper()
        if not code:
            return None
        if not phone.is_country(code):
            raise FieldError(field, "must be an ISO 3166 alpha-2 country code, e.g. PE, or null")
        return code

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {"type": "string", "maxLength": 2}

    def output_schema(self) -> Schema:
        return {"type": "string", "minLength": 2, "maxLength": 2}


_STAGES_SEED = 0x73_74_67_65  # a workspace's stages of one kind, among the advisory locks
_NEXT_STAGE_POSITION = select(func.coalesce(func.max(stages.c.position), 0) + 1).where(
    stages.c.workspace_id == bindparam("_ws"), stages.c.kind == bindparam("_kind")
)


class _NextPosition(Default):
    """A new stage goes last among the stages of its kind (positions start at 1)."""

    order = 1

    async def value(self, creation: Creation) -> Any:
        params = {"_ws": creation.workspace_id, "_kind": creation.values["kind"]}
        # Stages of one kind created at once (on two nodes) take turns: each reads the last
        # position after the one before it was written, and no two share a position.
        name = f"{creation.workspace_id}:{creation.values['kind']}"
        await locks.hold(creation.conn, _STAGES_SEED, name)
        return int(await creation.conn.fetchval(_NEXT_STAGE_POSITION, params))


# fmt: off
STAGE = FieldTable("stage", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("kind", STAGE_KIND, "kind", REQUIRED, shapes=HIDDEN),
    Field("name", NAME, "name", REQUIRED),
    Field("order", POSITION, "position", default=_NextPosition()),
])
TAG = FieldTable("tag", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("name", NAME, "name", REQUIRED),
    Field("color", TEXT, "color", NULL, OPTIONAL),
])
SEGMENTATION = FieldTable("segmentation", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("name", NAME, "name", REQUIRED),
])
AGENT = FieldTable("agent", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("name", NAME, "name", REQUIRED),
    Field("email", EMAIL, "email", REQUIRED),
])
# fmt: on


def _item_list(
    items: FieldTable, table: Any, order_by: tuple[str, ...], **equal: str
) -> Callable[[Any, str], ColumnElement[Any]]:
    """The workspace's items of one kind, inside the workspace's own SELECT."""

    def shown(workspace: Any, dialect: str) -> ColumnElement[Any]:
        c = table.c
        # The workspace's id as the statement's parameter, not a correlation with the
        # workspace's row: Citus runs each list on the shard of that workspace, which it
        # cannot do for a subquery correlated with a reference table's row.
        where = and_(
            c.workspace_id == bindparam("_ws"), *(c[name] == value for name, value in equal.items())
        )
        order = [c[name] for name in order_by]
        return items.aggregated(table, dialect, parent=workspace, where=where, order_by=order)

    return shown


def _items(wire: str, items: FieldTable, table: Any, *order: str, **equal: str) -> Field:
    return Field(wire, Rows(items), None, shown=_item_list(items, table, order, **equal))


# fmt: off
WORKSPACE = FieldTable("workspace", [
    Field("id", ID, "id", default=RECORD_ID),
    # Optional on create (contract N): none given, one is chosen (workspaces/service.py).
    Field("name", NAME, "name", OPTIONAL, UPDATE),
    Field("timezone", Timezone(), "timezone", OPTIONAL, UPDATE, default="UTC"),
    _items("contactStages", STAGE, stages, "position", "id", kind="contact"),
    _items("opportunityStages", STAGE, stages, "position", "id", kind="opportunity"),
    _items("segmentations", SEGMENTATION, segmentations, "created_at", "id"),
    _items("tags", TAG, tags, "created_at", "id"),
    _items("agents", AGENT, agents, "created_at", "id"),
    Field("createdAt", TIMESTAMP, "created_at", default=NOW),
    Field("updatedAt", TIMESTAMP, "updated_at", default=NOW),
    # Contract J.2: agents see and change only what is assigned to them (or to nobody).
    Field("agentsSeeOnlyAssigned", BOOLEAN, "agents_see_only_assigned", UPDATE, default=False,
          description="true: users with the role agent see only the records assigned to "
                      "their agents or to none (J.2)."),
    Field("defaultCountry", Country(), "default_country", NULL, UPDATE),
])
# fmt: on
