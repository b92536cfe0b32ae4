"""One ordered table of fields per resource (design.md, "Each field described once").

A `Field` says, for one wire name: what it holds (its type), its column, whether null is a
value, whether it is set on create (and its default) or on update, what it sets as a
consequence, and which shapes show it. A `FieldTable` derives from that alone the key
order and SELECT list of every shape, the columns of the database table, the columns an
update writes, and (records/bodies.py, records/schemas.py) the validation of create and
update bodies and the OpenAPI schemas. Adding a field is one line here and a migration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import MISSING
from enum import Enum
from typing import Any

from sqlalchemy import Column, ColumnElement, ForeignKeyConstraint, type_coerce

from chatcrm.db.jsonagg import json_array_of_objects
from chatcrm.records.changes import After, Effect
from chatcrm.records.scalar_types import Reference
from chatcrm.records.types import AggregatedJson, ValueType

# The shapes a record is shown in: contacts have a read shape (gets, lists, searches) and an
# update shape (updates, creates); other resources have one.
READ, FULL = "read", "full"
BOTH = frozenset({READ, FULL})

# Tables the references point to (records/references.py checks them).
REFERENCE_TABLES = {
    "stage": "stages",
    "agent": "agents",
    "segmentation": "segmentations",
    "contact": "contacts",
}


# A computed output: the SELECT expression of the field, given the record's table.
Shown = Callable[[Any, str], ColumnElement[Any]]


class Flag(Enum):
    """What a field allows, given in its table line after its column."""

    NULL = "null is a value (in bodies, in the column, in answers)"
    OPTIONAL = "may be given on create"
    REQUIRED = "must be given on create"
    UPDATE = "may be named in paramToUpdate"
    READ_HIDDEN = "shown by creates and updates, not by gets, lists and searches"


NULL, OPTIONAL, REQUIRED, UPDATE, READ_HIDDEN = Flag


class Field:
    """One field of a resource, in one line of its table: wire name, type, column (None:
    computed, `shown`, or kept in another table, `after`), then its flags; on create, a
    value not given is `default` (else the type's empty value, or null)."""

    __slots__ = (
        "after",
        "aliases",
        "column",
        "create",
        "default",
        "derives",
        "description",
        "effect",
        "nullable",
        "shapes",
        "shown",
        "stamps",
        "type",
        "update",
        "wire",
    )

    def __init__(
        self,
        wire: str,
        type: ValueType,
        column: str | None = None,
        *flags: Flag,
        default: Any = MISSING,
        stamps: str | tuple[str, ...] = (),
        derives: str | tuple[str, ...] = (),
        effect: Effect | None = None,
        after: After | None = None,
        shown: Shown | None = None,
        aliases: str | tuple[str, ...] = (),
        shapes: frozenset[str] | None = None,
        description: str = "",
    ) -> None:
        self.wire = wire
        self.type = type
        self.column = column
        self.nullable = NULL in flags
        self.create = REQUIRED if REQUIRED in flags else OPTIONAL if OPTIONAL in flags else None
        self.update = UPDATE in flags
        if shapes is None:
            shapes = frozenset({FULL}) if READ_HIDDEN in flags else BOTH
        self.shapes = shapes
        self.aliases = (aliases,) if isinstance(aliases, str) else aliases
        if default is MISSING:
            default = None if self.nullable else type.empty
        self.default = default
        # Timestamp fields set to now when this one changes.
        self.stamps = (stamps,) if isinstance(stamps, str) else stamps
        # Fields computed from this one when read (assignedAgentName from the agent id).
        self.derives = (derives,) if isinstance(derives, str) else derives
        self.effect = effect
        self.after = after
        self.shown = shown
        self.description = description

    @property
    def references(self) -> str | None:
        """What the ids of this field must name in the workspace (checked before writing):
        "stage", "agent", "segmentation", "contact" or "tag"."""
        target: str | None = getattr(self.type, "target", None)
        return target

    @property
    def direct(self) -> bool:
        """An update of it needs neither the stored record nor a check against the database."""
        return (
            self.references is None
            and self.after is None
            and (self.effect is None or self.effect.direct)
        )

    @property
    def sets(self) -> tuple[str, ...]:
        """The other fields a change of this one may set."""
        return self.stamps + self.derives + (self.effect.sets if self.effect else ())

    def store(self, value: Any) -> dict[str, Any]:
        """The column values of this field's value (most fields: one)."""
        if self.column is None:
            return {}
        return self.type.columns(self.column, value)


class FieldTable:
    """The ordered fields of one resource, and everything derived from them."""

    def __init__(self, name: str, fields: list[Field]) -> None:
        self.name = name
        self.fields = tuple(fields)
        self.by_wire = {f.wire: f for f in self.fields}
        assert len(self.by_wire) == len(self.fields), f"{name}: a wire name is repeated"
        for f in self.fields:
            for other in (*f.stamps, *f.derives, *(f.effect.sets if f.effect else ())):
                assert other in self.by_wire, f"{name}.{f.wire} sets unknown {other}"
        self.updatable = tuple(f.wire for f in self.fields if f.update)
        # Shown but never written by an update: naming one is a 400 that says so.
        self.read_only = frozenset(f.wire for f in self.fields if f.shapes and not f.update)
        # Body keys of a create: each field's wire name and aliases → the field.
        self.create_keys: dict[str, Field] = {}
        for f in self.fields:
            if f.create is not None:
                for key in (f.wire, *f.aliases):
                    self.create_keys[key] = f
        self.required = tuple(f.wire for f in self.fields if f.create == REQUIRED)
        # Names an update may use for a field: its wire name and its aliases → the field.
        self.update_keys: dict[str, Field] = {
            key: f for f in self.fields if f.update for key in (f.wire, *f.aliases)
        }

    def __getitem__(self, wire: str) -> Field:
        return self.by_wire[wire]

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def shape(self, name: str) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if name in f.shapes)

    def select_list(self, table: Any, shape: str, dialect: str) -> list[ColumnElement[Any]]:
        """The SELECT expressions of a shape, labelled with the wire names, in key order:
        the database returns the record exactly as the answer shows it."""
        out: list[ColumnElement[Any]] = []
        for f in self.shape(shape):
            if f.shown is not None:
                expression = f.shown(table, dialect)
            else:
                assert f.column is not None, f"{self.name}.{f.wire} has nothing to show"
                expression = f.type.wire_sql(table.c[f.column], dialect)
            out.append(expression.label(f.wire))
        return out

    def aggregated(
        self,
        table: Any,
        dialect: str,
        *,
        parent: Any,
        where: ColumnElement[bool],
        order_by: list[Any],
    ) -> ColumnElement[Any]:
        """Rows of another table (a record's activities, a workspace's stages) as one JSON
        array inside the parent's SELECT, each row in this table's shape, in order."""
        c = table.c
        pairs = [(f.wire, f.type.wire_sql(c[f.column], dialect)) for f in self.shape(FULL)]
        aggregate = json_array_of_objects(
            dialect=dialect, pairs=pairs, from_=table, where=where, parent=parent, order_by=order_by
        )
        return type_coerce(aggregate, AggregatedJson())

    def columns(self) -> list[Column[Any]]:
        """The database columns of the fields (the record's table adds its own)."""
        out: list[Column[Any]] = []
        for f in self.fields:
            if f.column is not None:
                out.extend(f.type.sql_columns(f.column, nullable=f.nullable))
        return out

    def foreign_keys(self) -> list[ForeignKeyConstraint]:
        """Each reference column points at its table, within the same workspace."""
        out = []
        for f in self.fields:
            target = f.references
            if f.column is not None and isinstance(f.type, Reference) and target is not None:
                table = REFERENCE_TABLES[target]
                out.append(
                    ForeignKeyConstraint(
                        ["workspace_id", f.column], [f"{table}.workspace_id", f"{table}.id"]
                    )
                )
        return out

    def changed(
        self,
        clean: Mapping[str, Any],
        *,
        columns: Iterable[str],
        by_statement: Iterable[str] = (),
    ) -> list[str]:
        """What an update set, as an event's `changed` (contract D.1), in key order: the
        named fields, the fields of the columns it wrote (stamps, effects, the columns
        every change touches), the fields derived from the named ones, and `by_statement`
        (what an effect computed inside the statement did set)."""
        wanted: set[str] = {*clean, *by_statement}
        for wire in clean:
            wanted.update(self.by_wire[wire].derives)
        written = set(columns)
        return [f.wire for f in self.fields if f.wire in wanted or f.column in written]

    def all_direct(self, names: list[str]) -> bool:
        return all(self.by_wire[name].direct for name in names)
