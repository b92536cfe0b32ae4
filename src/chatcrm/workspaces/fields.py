"""The field tables of a workspace and of its set-up items (contract B.3, C): stages, tags,
segmentations and agents."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import ColumnElement, and_, type_coerce

from chatcrm.core import values as v
from chatcrm.core.errors import FieldError
from chatcrm.db.jsonagg import json_array_of_objects
from chatcrm.db.schema import agents, segmentations, stages, tags
from chatcrm.records import types as t
from chatcrm.records.fields import (
    FULL,
    NOW,
    OPTIONAL,
    RECORD_ID,
    REQUIRED,
    Creation,
    Default,
    Field,
    FieldTable,
)
from chatcrm.records.schemas import shape_schema

STAGE_KINDS = ("contact", "opportunity")
HIDDEN = frozenset[str]()


class Timezone(t.ValueType):
    """An IANA time zone name."""

    description = "An IANA time zone name, e.g. America/Lima."

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        name = v.required_text(field, value, max_len=64)
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise FieldError(field, "must be an IANA time zone, e.g. America/Lima") from exc
        return name

    def input_schema(self, *, nullable: bool = False) -> t.Schema:
        return {"type": "string", "minLength": 1, "maxLength": 64}


class _NextPosition(Default):
    """A new stage goes last among the stages of its kind (positions start at 1)."""

    order = 1

    async def value(self, creation: Creation) -> Any:
        from chatcrm.workspaces import repository

        return await repository.next_stage_position(
            creation.conn, creation.workspace_id, creation.values["kind"]
        )


def _name() -> Field:
    return Field(wire="name", type=t.Text(nonblank=True), column="name", create=REQUIRED)


def _id() -> Field:
    return Field(wire="id", type=t.Identifier(), column="id", default=RECORD_ID)


STAGE = FieldTable(
    "stage",
    [
        _id(),
        Field(
            wire="kind",
            type=t.Word(STAGE_KINDS, 'must be "contact" or "opportunity"'),
            column="kind",
            create=REQUIRED,
            shapes=HIDDEN,
        ),
        _name(),
        Field(wire="order", type=t.WholeNumber(), column="position", default=_NextPosition()),
    ],
)

TAG = FieldTable(
    "tag",
    [
        _id(),
        _name(),
        Field(wire="color", type=t.Text(), column="color", nullable=True, create=OPTIONAL),
    ],
)

SEGMENTATION = FieldTable("segmentation", [_id(), _name()])

AGENT = FieldTable(
    "agent",
    [_id(), _name(), Field(wire="email", type=t.Email(), column="email", create=REQUIRED)],
)


class ItemList(t.ValueType):
    """A workspace's set-up items of one kind, each in its field table's shape."""

    def __init__(self, items: FieldTable) -> None:
        self.items = items

    def output_schema(self) -> t.Schema:
        return {"type": "array", "items": shape_schema(self.items, FULL)}


def _item_list(
    items: FieldTable, table: Any, order_by: tuple[str, ...], **equal: str
) -> Callable[[Any, str], ColumnElement[Any]]:
    """The SELECT expression of the workspace's items (a JSON array inside its SELECT)."""

    def shown(workspace: Any, dialect: str) -> ColumnElement[Any]:
        c = table.c
        pairs = [(f.wire, f.type.wire_sql(c[f.column], dialect)) for f in items.shape(FULL)]
        where = and_(
            c.workspace_id == workspace.c.id, *(c[name] == value for name, value in equal.items())
        )
        aggregate = json_array_of_objects(
            dialect=dialect,
            pairs=pairs,
            from_=table,
            where=where,
            parent=workspace,
            order_by=[c[name] for name in order_by],
        )
        return type_coerce(aggregate, t.AggregatedJson())

    return shown


def _items(wire: str, items: FieldTable, table: Any, *order: str, **equal: str) -> Field:
    return Field(wire=wire, type=ItemList(items), shown=_item_list(items, table, order, **equal))


WORKSPACE = FieldTable(
    "workspace",
    [
        _id(),
        _name(),
        Field(wire="timezone", type=Timezone(), column="timezone", create=OPTIONAL, default="UTC"),
        _items("contactStages", STAGE, stages, "position", "id", kind="contact"),
        _items("opportunityStages", STAGE, stages, "position", "id", kind="opportunity"),
        _items("segmentations", SEGMENTATION, segmentations, "created_at", "id"),
        _items("tags", TAG, tags, "created_at", "id"),
        _items("agents", AGENT, agents, "created_at", "id"),
        Field(wire="createdAt", type=t.Timestamp(), column="created_at", default=NOW),
        Field(wire="updatedAt", type=t.Timestamp(), column="updated_at", default=NOW),
    ],
)
