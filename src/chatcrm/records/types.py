"""What a field holds: how a value is checked, stored, shown, documented and filtered on.

Each type gives, for its field table (records/fields.py): `clean` (validation of a JSON
value, with the contract's messages), `sql_type` (the column), `store` (the column value),
`wire_sql` (the SELECT expression that renders the wire value in the database, so reads
need no per-value work in Python), `input_schema` / `output_schema` (JSON Schema for the
OpenAPI document: exactly what the server accepts where JSON Schema can say it, never
less), and `parse_query` (the value of a list filter given in the query string).
"""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import Column, ColumnElement
from sqlalchemy import Text as SqlText
from sqlalchemy.types import TypeDecorator, TypeEngine

from chatcrm.core.jsontext import aggregated

ID_LENGTH = 36
Schema = dict[str, Any]


# --- result types: what the database's wire text becomes in a row --------------------------


class JsonText(TypeDecorator[Any]):
    """Text that is JSON already (stored files and variables, money the database rendered
    as canonical text), put into the answer as it is: never parsed, never rounded."""

    impl = SqlText
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return None if value is None else orjson.Fragment(value.encode())


class AggregatedJson(TypeDecorator[Any]):
    """A JSON array aggregated by the database (a record's tags or activities), re-emitted
    compactly (PostgreSQL's json_build_object writes `{"id" : …}` with spaces)."""

    impl = SqlText
    cache_ok = True

    def process_result_value(self, value: Any, dialect: Any) -> Any:
        return aggregated(value)


def nullable_schema(schema: Schema) -> Schema:
    """The schema, with null allowed too."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return {**schema, "type": [kind, "null"]}
    if "enum" in schema:
        return {**schema, "enum": [*schema["enum"], None]}
    return {"anyOf": [schema, {"type": "null"}]}


class ValueType:
    """The behaviour every type shares; subclasses override what differs."""

    sql_type: TypeEngine[Any] = SqlText()
    description: str = ""
    # A field that may be null shows null (an opportunity's contactId shows "" instead).
    shows_null = True
    # What a field that is not null holds on create when not given.
    empty: Any = None

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        raise NotImplementedError

    def store(self, value: Any) -> Any:
        """The column value of a (non-null) value."""
        return value

    def columns(self, column: str, value: Any) -> dict[str, Any]:
        """Every column a value is kept in (most types: one)."""
        return {column: None if value is None else self.store(value)}

    def sql_columns(self, column: str, *, nullable: bool) -> list[Column[Any]]:
        return [Column(column, self.sql_type, nullable=nullable)]

    def wire_sql(self, column: Any, dialect: str) -> ColumnElement[Any]:
        result: ColumnElement[Any] = column
        return result

    def input_schema(self, *, nullable: bool = False) -> Schema:
        raise NotImplementedError

    def output_schema(self) -> Schema:
        return self.input_schema(nullable=True)

    def parse_query(self, name: str, text: str) -> Any:
        """A list filter's value from the query string (an empty value is absent)."""
        return text

    def query_schema(self) -> Schema:
        """The schema of a list filter's query parameter."""
        return {"type": "string"}
