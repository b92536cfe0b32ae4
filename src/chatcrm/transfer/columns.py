"""The CSV columns of contacts and opportunities, derived from their field tables.

A column is a creatable field's wire name, or one of the columns that name things the way a
person does: `phone` (internalWhatsappNumber), `stage`, `agent`, `segmentation` (a name, an
email or an id), `tags` (names or ids), `var:<name>` (one variable of a contact) and, for
opportunities, `contact` (a contact's id, phone or email) and `activities` (a JSON array).
Export writes the same columns."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import Enum

from chatcrm.contacts.fields import FIELDS as CONTACT_FIELDS
from chatcrm.opportunities.fields import FIELDS as OPPORTUNITY_FIELDS
from chatcrm.records.fields import Field, FieldTable
from chatcrm.transfer.cells import read_item, unsendable
from chatcrm.transfer.problems import BadInput

VARIABLE_PREFIX = "var:"
# Creatable fields that are not columns: the workspace is the one imported into, and an
# import marks what it creates as imported (creationTypeId 2).
_NOT_COLUMNS = frozenset({"workspaceId", "creationTypeId"})
# The columns a rejects file adds (the row's line in the file read, and why it failed);
# they are ignored on import, so a rejects file can be fixed and imported again as it is.
ERROR_COLUMN = "error"
LINE_COLUMN = "line"  # written first by earlier versions' rejects files: read, ignored
IGNORED_COLUMNS = frozenset({ERROR_COLUMN, LINE_COLUMN})


class Role(Enum):
    """How a column's cells become a body value."""

    FIELD = "the field's own value"
    STAGE = "a stage name or id"
    AGENT = "an agent email or id"
    SEGMENTATION = "a segmentation name or id"
    TAGS = "tag names or ids, ;-separated"
    VARIABLE = "one variable's value"
    CONTACT = "a contact id, phone or email"
    ACTIVITIES = "an opportunity's activities, a JSON array"


@dataclass(frozen=True)
class Column:
    name: str
    role: Role
    # The body key the column fills (`variables` for every var: column).
    wire: str
    # The field of that key: its type decides how a FIELD cell is read.
    field: Field


# Columns naming a reference the way a person does: column → (role, the field it fills).
_NAMED = {
    "stage": (Role.STAGE, "stageId"),
    "agent": (Role.AGENT, "assignedAgentId"),
    "segmentation": (Role.SEGMENTATION, "segmentationId"),
}


@dataclass(frozen=True)
class RecordColumns:
    """Every column one kind of record reads and writes."""

    kind: str
    table: FieldTable
    # Fixed columns by header name.
    named: dict[str, Column]
    # Whether var:<name> columns are read.
    variables: bool
    # What export writes before the var: columns, in this order.
    export_names: tuple[str, ...]

    def read_header(self, header: Sequence[str]) -> list[Column | None]:
        """The columns of a file's header, in order (None: a rejects file's `error` column,
        ignored). Unknown, repeated or clashing columns are refused before anything is
        sent."""
        if not header or all(not name.strip() for name in header):
            raise BadInput("the file has no header row")
        named = header[: named_width(header)]
        out: list[Column | None] = []
        filled: dict[str, str] = {}
        variable_columns: set[str] = set()  # `var:` headers, which fill `variables` too
        for raw in named:
            name = raw.strip()
            column = self.column(raw)
            if column is None:
                out.append(None)
                continue
            key = column.name if column.role is Role.VARIABLE else column.wire
            if key in filled:
                raise BadInput(f'columns "{filled[key]}" and "{name}" both set {column.wire}')
            filled[key] = name
            if column.role is Role.VARIABLE and "variables" in self.named:
                whole = filled.setdefault("variables", name)
                if whole != name and whole not in variable_columns:  # `variables` came first
                    raise BadInput(f'columns "{whole}" and "{name}" both set variables')
                variable_columns.add(name)
            out.append(column)
        return out

    def column(self, name: str) -> Column | None:
        """The column a header names: case-insensitive, surrounding spaces ignored (a
        variable's own name keeps its case). An unknown name is refused with the closest
        known one, if any."""
        raw, name = name, name.strip()
        folded = name.casefold()
        by_folded = {known.casefold(): column for known, column in self.named.items()}
        if folded in by_folded:
            return by_folded[folded]
        if folded in IGNORED_COLUMNS:
            return None
        if self.variables and folded.startswith(VARIABLE_PREFIX):
            # Blanks at its edges escaped by export are the variable's own (cells.read_item).
            variable = read_item(raw.lstrip()[len(VARIABLE_PREFIX) :])
            if not variable:
                raise BadInput(f'column "{name}" names no variable')
            # Its name goes with every row's value: it would fail them all.
            why = unsendable(variable)
            if why is not None:
                shown = name.replace("\x00", "\\x00")  # not a NUL on the terminal
                raise BadInput(f'column "{shown}": {why}')
            return Column(variable, Role.VARIABLE, "variables", self.table["variables"])
        known = ", ".join(self.named) + (", var:<name>" if self.variables else "")
        if not name:
            raise BadInput(f"the header has an empty column name (columns: {known})")
        close = difflib.get_close_matches(folded, list(by_folded), n=1)
        hint = f'did you mean "{_original(self.named, close[0])}"? ' if close else ""
        raise BadInput(f'unknown column "{name}" for {self.kind} ({hint}columns: {known})')


def named_width(header: Sequence[str]) -> int:
    """How many columns of a header are read. Nameless columns at the end are a
    spreadsheet's cells touched past the data (`name,email,,`): left out, their cells then
    read as a row's extra ones (refused only when one holds something). A nameless column
    before a named one is refused (`RecordColumns.read_header`)."""
    width = len(header)
    while width and not header[width - 1].strip():
        width -= 1
    return width


def _original(named: dict[str, Column], folded: str) -> str:
    return next(known for known in named if known.casefold() == folded)


def _record_columns(
    kind: str,
    table: FieldTable,
    extra: dict[str, tuple[Role, str]],
    *,
    variables: bool,
    first: tuple[str, ...],
    after_create: tuple[str, ...] = (),
    aliases: dict[str, str] | None = None,
) -> RecordColumns:
    creatable = [
        f
        for f in table
        if (f.create is not None or f.wire in after_create) and f.wire not in _NOT_COLUMNS
    ]
    named: dict[str, Column] = {}
    for f in creatable:
        role = Role.TAGS if f.wire == "tags" else Role.FIELD
        named[f.wire] = Column(f.wire, role, f.wire, f)
    for name, (role, wire) in {**_NAMED, **extra}.items():
        named[name] = Column(name, role, wire, table[wire])
    # Other wire names of a field (a create body's): read, never written by export.
    for name, wire in (aliases or {}).items():
        named[name] = Column(name, Role.FIELD, wire, table[wire])
    # Export: each creatable field under its person-friendly column, var: columns after.
    friendly = {wire: name for name, (_, wire) in {**_NAMED, **extra}.items()}
    exported = [friendly.get(f.wire, f.wire) for f in creatable if f.wire != "variables"]
    export_names = tuple(dict.fromkeys([*first, *exported]))
    return RecordColumns(kind, table, named, variables, export_names)


# Fields a create does not take, set by an update right after it (import) so that an
# exported record comes back as it was: a solved contact stays solved, a won or lost
# opportunity stays won or lost.
CONTACT_AFTER_CREATE = ("isSolved",)
CONTACT_COLUMNS = _record_columns(
    "contacts",
    CONTACT_FIELDS,
    {"phone": (Role.FIELD, "internalWhatsappNumber")},
    variables=True,
    first=("name", "lastname", "email", "phone"),
    after_create=CONTACT_AFTER_CREATE,
)
OPPORTUNITY_AFTER_CREATE = ("winLossStatus",)
OPPORTUNITY_COLUMNS = _record_columns(
    "opportunities",
    OPPORTUNITY_FIELDS,
    {"contact": (Role.CONTACT, "contactId")},
    variables=False,
    first=("name", "amount", "contact"),
    after_create=OPPORTUNITY_AFTER_CREATE,
    # Create Opportunity's original name for the agent (contract B.3).
    aliases={"assignedComercialId": "assignedAgentId"},
)
# An opportunity's activities (B.2: part of its record) as one JSON cell, written last:
# what an import adds to the opportunity, each activity that it does not hold yet.
ACTIVITIES_COLUMN = Column(
    "activities", Role.ACTIVITIES, "activities", OPPORTUNITY_FIELDS["activities"]
)
OPPORTUNITY_COLUMNS = replace(
    OPPORTUNITY_COLUMNS,
    named={**OPPORTUNITY_COLUMNS.named, "activities": ACTIVITIES_COLUMN},
    export_names=(*OPPORTUNITY_COLUMNS.export_names, "activities"),
)
COLUMNS = {"contacts": CONTACT_COLUMNS, "opportunities": OPPORTUNITY_COLUMNS}
