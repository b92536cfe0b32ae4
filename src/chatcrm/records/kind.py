"""A record kind: what contacts and opportunities are to the code they share.

The shared machinery (reading, writing, listing, deleting, activities; records/) works over
a `RecordKind`: its field table, its database table (built from the field table), its
not-found error, the kind of stages it moves through, and the few rules of its own (hooks).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import (
    Column,
    ForeignKeyConstraint,
    Index,
    Integer,
    PrimaryKeyConstraint,
    Table,
    text,
)

from chatcrm.core.errors import ServiceError
from chatcrm.db.schema import metadata
from chatcrm.db.types import UTCDateTime
from chatcrm.records.bodies import Given
from chatcrm.records.fields import FieldTable

# Hooks: a kind's own rules, called by the shared flows (records/writing.py).
CheckBody = Callable[[Given], None]  # more 400s or 422s of a create or update body
BeforeWrite = Callable[[Any, "Write"], Awaitable[None]]
# Before a soft-deleted record comes back: (connection, workspace id, its stored columns).
BeforeRestore = Callable[[Any, str, Mapping[str, Any]], Awaitable[None]]


@dataclass
class Write:
    """A create or an update about to be written: what a kind's hooks may look at."""

    workspace_id: str
    record_id: str
    given: Given
    now: datetime
    created: bool


def _nothing(_: Given) -> None:
    return None


async def _nothing_before(_conn: Any, _write: Write) -> None:
    return None


async def _nothing_before_restore(_conn: Any, _ws: str, _stored: Mapping[str, Any]) -> None:
    return None


@dataclass(frozen=True, eq=False)
class RecordKind:
    name: str  # "contact", "opportunity": also the kind of stage its stageId names
    fields: FieldTable
    table: Table
    not_found: Callable[[str], ServiceError]
    # Columns set to now by every change of the record (besides the hidden modified_at).
    touch: tuple[str, ...] = ()
    # Hidden columns of a new record, from the values of the create body.
    hidden_defaults: Callable[[Given], dict[str, Any]] = lambda _: {}
    # Column values of a soft delete, besides deleted_at, deleted_by and the version.
    deleted: Mapping[str, Any] = field(default_factory=dict)
    # Column values of a restore: what undoes `deleted` (deleted_at and deleted_by go back
    # to null for every kind).
    restored: Mapping[str, Any] = field(default_factory=dict)
    # A restored record goes to the end of its stage column (contacts: contract E.2).
    restore_to_column_end: bool = False
    # A restore's own checks (a contact's phone or email now held by a live one: 409).
    before_restore: BeforeRestore = _nothing_before_restore
    # Record tables its fields may name by id (an opportunity's contact).
    linked: Mapping[str, Any] = field(default_factory=dict)
    check_create: CheckBody = _nothing
    check_update: CheckBody = _nothing
    # Before a create or an update under row lock: the kind's own checks (409 duplicates).
    before_write: BeforeWrite = _nothing_before
    # After a unique index refused the write: raise the kind's 409 (or return to let the
    # database's error through).
    explain_conflict: BeforeWrite = _nothing_before
    # Which records a board column's count and total take (opportunities: the open ones;
    # won and lost cards stay in their column, outside the open pipeline's figures).
    counted: Callable[[Table], Any] | None = None
    # The shape an update or a create answers with (contacts: their update shape).
    written_shape: str = "full"
    read_shape: str = "read"


def _list_indexes(name: str) -> list[Index]:
    """What every record list needs: its order (newest first, the keyset its continuation
    tokens walk), the stage columns of the boards, the shared filters (stage, agent,
    updatedSince), each ending in the list order."""
    return [
        Index(f"ix_{name}_list", "workspace_id", "created_at", "id"),
        Index(f"ix_{name}_stage_order", "workspace_id", "stage_id", "order_in_cards"),
        Index(f"ix_{name}_stage_list", "workspace_id", "stage_id", "created_at", "id"),
        # Partial (migration 0004): SQLite's statistics would count the NULLs as one value.
        Index(
            f"ix_{name}_agent_list",
            "workspace_id",
            "assigned_agent_id",
            "created_at",
            "id",
            sqlite_where=text("assigned_agent_id IS NOT NULL"),
            postgresql_where=text("assigned_agent_id IS NOT NULL"),
        ),
        Index(f"ix_{name}_modified", "workspace_id", "modified_at"),
    ]


def record_table(name: str, fields: FieldTable, *extra: Any) -> Table:
    """The database table of a record kind: workspace first in the key, the fields'
    columns (with a foreign key per reference), the hidden columns and indexes every
    record has, and `extra` (the kind's own hidden columns and indexes)."""
    return Table(
        name,
        metadata,
        *fields.columns(),
        # The record's version: bumped by every change; its ETag (records/conditional.py).
        Column("version", Integer, nullable=False),
        # Time of the last change of any kind; serves `updatedSince`.
        Column("modified_at", UTCDateTime, nullable=False),
        *extra,
        *_list_indexes(name),
        PrimaryKeyConstraint("workspace_id", "id"),
        ForeignKeyConstraint(["workspace_id"], ["workspaces.id"]),
        *fields.foreign_keys(),
    )
