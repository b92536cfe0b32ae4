"""The types of lists: files, variables and tag ids (records/types.py says what a type gives)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, type_coerce
from sqlalchemy import Text as SqlText

from chatcrm.core import values as v
from chatcrm.core.jsontext import to_text
from chatcrm.records.fields import FULL, FieldTable
from chatcrm.records.schemas import shape_schema
from chatcrm.records.types import JsonText, Schema, ValueType


class _JsonList(ValueType):
    """A list kept as JSON text in its column, shown as stored."""

    sql_type = SqlText()
    empty: Any = ()  # shown as []

    def store(self, value: Any) -> Any:
        return to_text(value)

    def wire_sql(self, column: Any, dialect: str) -> ColumnElement[Any]:
        return type_coerce(column, JsonText())


class Files(_JsonList):
    description = "File references (URLs or names), at most 100."

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        return v.files(field, value)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {
            "type": "array",
            "maxItems": v.FILES_MAX,
            "items": {"type": "string", "minLength": 1, "maxLength": v.FILE_REF_MAX},
        }


_VARIABLE_VALUE: Schema = {"type": ["string", "number", "boolean", "null"]}


class Variables(_JsonList):
    description = "Named values `{name, value}`; a later name replaces an earlier one."

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        return v.variables(field, value)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        return {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": v.NAME_MAX,
                        "pattern": r"\S",
                    },
                    "value": _VARIABLE_VALUE,
                },
                "required": ["name", "value"],
                "additionalProperties": False,
            },
        }


class TagIds(ValueType):
    """Tag ids (or `{id}` objects) in; the tags as objects out (see the field's shown)."""

    target = "tag"
    empty: Any = ()  # shown as []
    description = "Tag ids of the workspace (or {id} objects); duplicates collapse."

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        return v.tag_ids(field, value)

    def input_schema(self, *, nullable: bool = False) -> Schema:
        item = {"type": "string", "minLength": 1}
        return {
            "type": "array",
            "items": {
                "anyOf": [item, {"type": "object", "properties": {"id": item}, "required": ["id"]}]
            },
        }

    def output_schema(self) -> Schema:
        return {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "name": {"type": "string"},
                    "color": {"type": ["string", "null"]},
                    "assignmentDate": {"type": "string", "format": "date-time"},
                },
                "required": ["id", "name", "color", "assignmentDate"],
                "additionalProperties": False,
            },
        }


# The list types most fields are of.
FILES = Files()
VARIABLES = Variables()
TAG_IDS = TagIds()


class Rows(ValueType):
    """Rows of another table shown inside a record (its activities, a workspace's stages),
    each as that table's field table shows it (`FieldTable.aggregated`)."""

    def __init__(self, fields: FieldTable) -> None:
        self.fields = fields

    def output_schema(self) -> Schema:
        return {"type": "array", "items": shape_schema(self.fields, FULL)}
