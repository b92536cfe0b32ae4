"""What a change of some contact fields sets beyond their own column (contract B.1):
solving, the variables merge, the tags, and the computed fields shown with a contact."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, and_, bindparam, delete, insert, select, type_coerce

from chatcrm.core import values as v
from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.jsontext import load_exact, to_text
from chatcrm.core.timestamps import iso_sql
from chatcrm.db.database import Connection
from chatcrm.db.jsonagg import json_array_of_objects
from chatcrm.db.schema import agents, contact_tags, tags
from chatcrm.records.changes import After, Change, Effect
from chatcrm.records.defaults import Creation
from chatcrm.records.types import AggregatedJson


class _Solved(Effect):
    """`isSolved: true` sets solvedDate (now) and solvedByAgentId (an agent named with it,
    else the assigned agent, else null); `false` clears both."""

    sets = ("solvedByAgentId", "solvedDate")

    async def apply(self, change: Change) -> None:
        assert change.current is not None
        if change.clean["isSolved"]:
            solver = change.clean.get("solvedByAgentId")
            if solver is None:
                solver = change.clean.get("assignedAgentId", change.current["assigned_agent_id"])
            change.columns.update(is_solved=True, solved_date=change.now, solved_by_agent_id=solver)
        else:
            change.columns.update(is_solved=False, solved_date=None, solved_by_agent_id=None)


def merged_variables(stored: str, given: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The stored variables (JSON text) with the given ones set by name, in first-seen
    order; 422 past the limit."""
    merged = {item["name"]: item["value"] for item in load_exact(stored)}
    for item in given:
        merged[item["name"]] = item["value"]
    if len(merged) > v.VARIABLES_MAX:
        raise ValidationFailed(
            [FieldError("variables", f"a contact can hold at most {v.VARIABLES_MAX} variables")]
        )
    return [{"name": k, "value": x} for k, x in merged.items()]


class _MergeVariables(Effect):
    """Variables merge by name: concurrent clients setting different variables all win."""

    async def apply(self, change: Change) -> None:
        assert change.current is not None
        merged = merged_variables(change.current["variables"], change.clean["variables"])
        change.columns["variables"] = to_text(merged)


_ct = contact_tags.c
_TAGS_OF = (
    _ct.workspace_id == bindparam("_ws"),
    _ct.contact_id == bindparam("_id"),
)
_TAG_ASSIGNMENTS = select(_ct.tag_id, _ct.assigned_at).where(*_TAGS_OF)
_DELETE_TAGS = delete(contact_tags).where(*_TAGS_OF)
_INSERT_TAG = insert(contact_tags)


async def tag_assignments(
    conn: Connection, workspace_id: str, contact_id: str
) -> dict[str, datetime]:
    rows = await conn.fetch(_TAG_ASSIGNMENTS, {"_ws": workspace_id, "_id": contact_id})
    return {row["tag_id"]: row["assigned_at"] for row in rows}


async def replace_tags(
    conn: Connection,
    workspace_id: str,
    contact_id: str,
    tag_ids: Iterable[str],
    *,
    kept: dict[str, datetime],
    now: datetime,
) -> None:
    """Make the contact's tags exactly `tag_ids`, in that order; kept tags keep their date."""
    ordered = list(tag_ids)
    await conn.execute(_DELETE_TAGS, {"_ws": workspace_id, "_id": contact_id})
    if ordered:
        await conn.executemany(
            _INSERT_TAG,
            [
                {
                    "workspace_id": workspace_id,
                    "contact_id": contact_id,
                    "tag_id": tag_id,
                    "position": position,
                    "assigned_at": kept.get(tag_id, now),
                }
                for position, tag_id in enumerate(ordered)
            ],
        )


class _Tags(After):
    """`tags` replaces the set, in the order given; a kept tag keeps its assignmentDate,
    a new one gets now."""

    async def write(self, change: Change | Creation, value: Any, *, created: bool) -> None:
        conn, ws, contact_id = change.conn, change.workspace_id, change.record_id
        if created:
            if value:
                await replace_tags(conn, ws, contact_id, value, kept={}, now=change.now)
            return
        kept = await tag_assignments(conn, ws, contact_id)
        await replace_tags(conn, ws, contact_id, value, kept=kept, now=change.now)


def agent_name(table: Any, dialect: str) -> ColumnElement[Any]:
    """assignedAgentName follows assignedAgentId: the agent's name, looked up when read."""
    c = table.c
    # The request's workspace, not the outer row's: docs/scaling.md 3.4 (one shard).
    return (
        select(agents.c.name)
        .where(agents.c.workspace_id == bindparam("_ws"), agents.c.id == c.assigned_agent_id)
        .scalar_subquery()
    )


def tag_list(table: Any, dialect: str) -> ColumnElement[Any]:
    """The contact's tags `{id, name, color, assignmentDate}`, in the order given."""
    c = table.c
    aggregate = json_array_of_objects(
        dialect=dialect,
        pairs=[
            ("id", tags.c.id),
            ("name", tags.c.name),
            ("color", tags.c.color),
            ("assignmentDate", iso_sql(_ct.assigned_at, dialect)),
        ],
        from_=contact_tags.join(
            tags, and_(tags.c.workspace_id == _ct.workspace_id, tags.c.id == _ct.tag_id)
        ),
        where=and_(_ct.workspace_id == bindparam("_ws"), _ct.contact_id == c.id),
        parent=table,
        order_by=[_ct.position],
    )
    return type_coerce(aggregate, AggregatedJson())


SOLVED = _Solved()
MERGE_VARIABLES = _MergeVariables()
TAGS = _Tags()
