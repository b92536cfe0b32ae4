"""Workspaces: creation with default stages, the workspace view, and set-up items."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table

from chatcrm.core.errors import NotFound, require_valid
from chatcrm.core.ids import new_id
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection
from chatcrm.db.schema import stages, workspaces
from chatcrm.records import bodies
from chatcrm.records.defaults import Creation
from chatcrm.records.fields import FULL, FieldTable
from chatcrm.records.writing import fill
from chatcrm.workspaces import repository as repo
from chatcrm.workspaces.fields import WORKSPACE

DEFAULT_CONTACT_STAGES = ("New", "In progress", "Follow-up", "Closed")
DEFAULT_OPPORTUNITY_STAGES = ("Qualification", "Proposal", "Negotiation", "Closing")
# A workspace created without a name gets this one, or the first of "My workspace 2",
# "My workspace 3"… that no other workspace of its account has (contract N), told apart
# as a person tells names apart: " my workspace 2" is taken by "My workspace 2".
DEFAULT_NAME = "My workspace"


def free_name(taken: set[str]) -> str:
    seen = {t.strip().casefold() for t in taken}
    name, number = DEFAULT_NAME, 1
    while name.casefold() in seen:
        number += 1
        name = f"{DEFAULT_NAME} {number}"
    return name


async def create_workspace(
    conn: Connection, *, account_id: str, name: str | None = None, timezone: str = "UTC"
) -> str:
    """A new workspace of the account, with the default contact and opportunity stages;
    without a name, one no other workspace of the account has."""
    # Every create of the account waits here for the one under way (so two nameless ones
    # never pick the same name, nor a named one take the name just picked).
    taken = await repo.account_names(conn, account_id)
    if name is None:
        name = free_name(taken)
    workspace_id = new_id()
    now = utcnow()
    await repo.insert_row(
        conn,
        workspaces,
        {
            "id": workspace_id,
            "account_id": account_id,
            "name": name,
            "timezone": timezone,
            "created_at": now,
            "updated_at": now,
        },
    )
    for kind, names in (
        ("contact", DEFAULT_CONTACT_STAGES),
        ("opportunity", DEFAULT_OPPORTUNITY_STAGES),
    ):
        for position, stage_name in enumerate(names, start=1):
            await repo.insert_row(
                conn,
                stages,
                {
                    "workspace_id": workspace_id,
                    "id": new_id(),
                    "kind": kind,
                    "name": stage_name,
                    "position": position,
                    "created_at": now,
                },
            )
    return workspace_id


def workspace_values(body: dict[str, Any]) -> tuple[str | None, str]:
    """(name, timezone) of a new workspace, from a create body (400 / 422); no name: None."""
    given = bodies.create_body(WORKSPACE, body)
    require_valid(given.errors)
    return given.clean.get("name"), given.clean.get("timezone", "UTC")


async def update_workspace(
    conn: Connection, workspace_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """The A.1 body (or E.1's form) over name, timezone and agentsSeeOnlyAssigned (J.2)."""
    names = bodies.update_names(
        WORKSPACE,
        body,
        record_id=workspace_id,
        id_source="the workspace id of the path",
        implicit=True,
    )
    given = bodies.update_values(WORKSPACE, names, body)
    require_valid(given.errors)
    columns: dict[str, Any] = {}
    for wire, value in given.clean.items():
        columns.update(WORKSPACE[wire].store(value))
    columns["updated_at"] = utcnow()
    await conn.begin()
    await repo.update_workspace(conn, workspace_id, columns)
    return await workspace_view(conn, workspace_id)


async def workspace_view(conn: Connection, workspace_id: str) -> dict[str, Any]:
    view = await repo.workspace_view(conn, workspace_id)
    if view is None:  # access was checked before, so this is a workspace deleted meanwhile
        raise NotFound(f"No workspace with id '{workspace_id}'.")
    return view


async def add_item(
    conn: Connection, items: FieldTable, table: Table, workspace_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """A new set-up item of the workspace (a stage, a tag…), shown as its field table says."""
    given = bodies.create_body(items, body)
    require_valid(given.errors)
    now = utcnow()
    creation = Creation(conn, workspace_id, new_id(), "", now, {})
    await fill(items, given, creation)
    row: dict[str, Any] = {"workspace_id": workspace_id, "created_at": now}
    for f in items:
        row.update(f.store(creation.values[f.wire]))
    await repo.insert_row(conn, table, row)
    await repo.touch_workspace(conn, workspace_id, now)
    return {f.wire: creation.values[f.wire] for f in items.shape(FULL)}


async def account_workspaces(conn: Connection, account_id: str) -> list[dict[str, Any]]:
    """`{id, name}` of every workspace of the account, oldest first (creation, then id)."""
    rows = await repo.list_workspaces(conn, account_id)
    return [{"id": row["id"], "name": row["name"]} for row in rows]
