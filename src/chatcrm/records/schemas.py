"""JSON Schemas of a field table: its shapes, its create body and its update body.

They are exactly what the server accepts and answers wherever JSON Schema can say it, and
never stricter (a value the schema refuses is refused by the server too).
"""

from __future__ import annotations

from typing import Any

from chatcrm.records.bodies import PARAM, empty_is_default
from chatcrm.records.fields import REQUIRED, Field, FieldTable
from chatcrm.records.types import Schema, nullable_schema


def _described(schema: Schema, f: Field) -> Schema:
    text = f.description or f.type.description
    return {**schema, "description": text} if text else schema


def _output(f: Field) -> Schema:
    schema = f.type.output_schema()
    if f.nullable and f.type.shows_null:
        schema = nullable_schema(schema)
    return _described(schema, f)


def shape_schema(fields: FieldTable, shape: str) -> Schema:
    """A record in a shape: every key present, in contract order, nothing else."""
    shown = fields.shape(shape)
    return {
        "type": "object",
        "properties": {f.wire: _output(f) for f in shown},
        "required": [f.wire for f in shown],
        "additionalProperties": False,
    }


EMPTY_TEXT: Schema = {"type": "string", "maxLength": 0}
WORKSPACE_ID: Schema = {
    "type": ["string", "null"],
    "description": "The workspace (or send x-workspace-id); must equal the header when both.",
}


def create_body_schema(fields: FieldTable, *, workspace_key: bool = True) -> Schema:
    """A create body: the creatable fields (and their aliases); null means the default."""
    properties: dict[str, Any] = {}
    if workspace_key:
        properties["workspaceId"] = WORKSPACE_ID
    for key, f in fields.create_keys.items():
        schema = f.type.input_schema(nullable=f.nullable)
        if empty_is_default(fields, f):
            schema = {"anyOf": [schema, EMPTY_TEXT]}
        if f.create is not REQUIRED or f.nullable:
            schema = nullable_schema(schema)
        if key != f.wire:
            schema = {**schema, "description": f"Another name of {f.wire}."}
        properties[key] = _described(schema, f) if key == f.wire else schema
    return {
        "type": "object",
        "properties": properties,
        "required": list(fields.required),
        "additionalProperties": False,
    }


def update_body_schema(fields: FieldTable, *, implicit: bool = False) -> Schema:
    """An update body: `paramToUpdate` names the field(s), comma-separated, and the body
    carries each of them with its new value (under its name or an alias). `implicit`:
    `paramToUpdate` may be left out, the body's keys then name the fields (contract E.1)."""
    described = "The field(s) to update, separated by commas; each is in the body."
    if implicit:
        described += " Optional: without it, every key besides id and workspaceId is updated."
    properties: dict[str, Any] = {
        PARAM: {"type": "string", "description": described, "examples": ["name", "name,lastname"]},
        "id": {"type": "string", "description": "Equal to the query parameter id."},
        "workspaceId": WORKSPACE_ID,
    }
    for key, f in fields.update_keys.items():
        schema = f.type.input_schema(nullable=f.nullable)
        schema = _described(nullable_schema(schema) if f.nullable else schema, f)
        if key != f.wire:
            schema = {**schema, "description": f"Another name of {f.wire}."}
        properties[key] = schema
    return {
        "type": "object",
        "properties": properties,
        "required": [] if implicit else [PARAM],
        "additionalProperties": False,
    }
