"""One ordered table of fields per resource (design.md, "Each field described once").

A `Field` says, for one wire name: what it holds (its type), its column, whether null is a
value, whether it is set on create (and its default) or on update, what it sets as a
consequence, and which shapes show it. A `FieldTable` derives from that alone the key
order and SELECT list of every shape, the columns of the database table, the columns an
update writes, and (records/bodies.py, records/schemas.py) the validation of create and
update bodies and the OpenAPI schemas. Adding a field is one line here and a migration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Column, ColumnElement, ForeignKeyConstraint

from chatcrm.records.types import Reference, ValueType

REQUIRED, OPTIONAL = "required", "optional"
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


@dataclass
class Change:
    """An update being turned into column values (records/writing.py)."""

    conn: Any
    kind: Any
    workspace_id: str
    record_id: str
    clean: dict[str, Any]  # the named fields' validated values, by wire name
    now: datetime
    current: dict[str, Any] | None  # the stored columns, under row lock; None: one statement
    columns: dict[str, Any] = field(default_factory=dict)
    # Columns set by an SQL expression of the row (named builders, so statements can be
    # cached by their shape), and the bound values those expressions use.
    expressions: dict[str, Callable[[Any], ColumnElement[Any]]] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)


class Effect:
    """What a change of a field sets beyond its own column. `direct`: it needs neither the
    stored record nor the database, so an update of such fields is one statement."""

    direct = False
    sets: tuple[str, ...] = ()  # wire names it sets (documentation; the events' `changed`)

    async def apply(self, change: Change) -> None:
        raise NotImplementedError


class After:
    """Rows of other tables written with the record (a contact's tags): after its insert,
    or after its update."""

    async def write(self, change: Change | Creation, value: Any, *, created: bool) -> None:
        raise NotImplementedError


# A computed output: the SELECT expression of the field, given the record's table.
Shown = Callable[[Any, str], ColumnElement[Any]]


@dataclass(frozen=True, kw_only=True)
class Field:
    wire: str
    type: ValueType
    column: str | None = None  # None: shown from `shown`, or stored elsewhere (`after`)
    nullable: bool = False  # null is a value (in bodies, in the column, in answers)
    create: str | None = None  # REQUIRED, OPTIONAL or None (set by the service)
    update: bool = False  # may be named in `paramToUpdate`
    shapes: frozenset[str] = BOTH  # the shapes that show it (empty: never shown)
    aliases: tuple[str, ...] = ()  # other body names accepted for it on create
    default: Any = None  # on create, when not given: a value or a `Default`
    stamps: tuple[str, ...] = ()  # timestamp fields set to now when this one changes
    effect: Effect | None = None
    after: After | None = None
    shown: Shown | None = None
    filter: bool = False  # lists filter on it by equality (`?<wire>=`)
    description: str = ""

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
        return self.stamps + (self.effect.sets if self.effect else ())

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
            for stamped in f.stamps:
                assert stamped in self.by_wire, f"{name}.{f.wire} stamps unknown {stamped}"
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

    def __getitem__(self, wire: str) -> Field:
        return self.by_wire[wire]

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    def shape(self, name: str) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if name in f.shapes)

    def filters(self) -> tuple[Field, ...]:
        return tuple(f for f in self.fields if f.filter)

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

    def all_direct(self, names: list[str]) -> bool:
        return all(self.by_wire[name].direct for name in names)
