"""Workspaces: creation with default stages, the workspace view, and set-up items."""

from __future__ import annotations

from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from chatcrm.api.bodyrules import create_values, require_valid
from chatcrm.core import values as v
from chatcrm.core.errors import FieldError, NotFound
from chatcrm.core.ids import new_id
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db.database import Connection
from chatcrm.workspaces import repository as repo

DEFAULT_CONTACT_STAGES = ("New", "In progress", "Follow-up", "Closed")
DEFAULT_OPPORTUNITY_STAGES = ("Qualification", "Proposal", "Negotiation", "Closing")
STAGE_KINDS = ("contact", "opportunity")


def timezone_name(field: str, value: object) -> str:
    name = v.required_text(field, value, max_len=64)
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise FieldError(field, "must be an IANA time zone, e.g. America/Lima") from exc
    return name


async def create_workspace(
    conn: Connection, *, account_id: str, name: str, timezone: str = "UTC"
) -> str:
    """A new workspace of the account, with the default contact and opportunity stages."""
    workspace_id = new_id()
    now = utcnow()
    await repo.insert_workspace(
        conn,
        workspace_id=workspace_id,
        account_id=account_id,
        name=name,
        timezone=timezone,
        now=now,
    )
    for kind, names in (
        ("contact", DEFAULT_CONTACT_STAGES),
        ("opportunity", DEFAULT_OPPORTUNITY_STAGES),
    ):
        for position, stage_name in enumerate(names, start=1):
            await repo.insert_stage(
                conn,
                workspace_id=workspace_id,
                stage_id=new_id(),
                kind=kind,
                name=stage_name,
                position=position,
                now=now,
            )
    return workspace_id


async def workspace_view(conn: Connection, workspace_id: str) -> dict[str, Any]:
    row = await repo.get_workspace(conn, workspace_id)
    if row is None:  # access was checked before, so this is a workspace deleted meanwhile
        raise NotFound(f"No workspace with id '{workspace_id}'.")
    stage_rows = await repo.list_stages(conn, workspace_id)

    def stages_of(kind: str) -> list[dict[str, Any]]:
        return [
            {"id": s["id"], "name": s["name"], "order": s["position"]}
            for s in stage_rows
            if s["kind"] == kind
        ]

    return {
        "id": row["id"],
        "name": row["name"],
        "timezone": row["timezone"],
        "contactStages": stages_of("contact"),
        "opportunityStages": stages_of("opportunity"),
        "segmentations": [
            {"id": s["id"], "name": s["name"]}
            for s in await repo.list_segmentations(conn, workspace_id)
        ],
        "tags": [
            {"id": t["id"], "name": t["name"], "color": t["color"]}
            for t in await repo.list_tags(conn, workspace_id)
        ],
        "agents": [
            {"id": a["id"], "name": a["name"], "email": a["email"]}
            for a in await repo.list_agents(conn, workspace_id)
        ],
        "createdAt": iso(row["created_at"]),
        "updatedAt": iso(row["updated_at"]),
    }


def _stage_kind(field: str, value: object) -> str:
    if value not in STAGE_KINDS:
        raise FieldError(field, 'must be "contact" or "opportunity"')
    assert isinstance(value, str)
    return value


def _name(field: str, value: object) -> str:
    return v.required_text(field, value)


def _agent_email(field: str, value: object) -> str:
    email = v.email(field, value, nullable=False)
    assert email is not None
    return email


async def add_stage(conn: Connection, workspace_id: str, body: dict[str, Any]) -> dict[str, Any]:
    clean, errors = create_values(
        body,
        allowed=frozenset({"kind", "name"}),
        required=("kind", "name"),
        validators={"kind": _stage_kind, "name": _name},
    )
    require_valid(errors)
    now = utcnow()
    position = await repo.next_stage_position(conn, workspace_id, clean["kind"])
    stage_id = new_id()
    await repo.insert_stage(
        conn,
        workspace_id=workspace_id,
        stage_id=stage_id,
        kind=clean["kind"],
        name=clean["name"],
        position=position,
        now=now,
    )
    await repo.touch_workspace(conn, workspace_id, now)
    return {"id": stage_id, "name": clean["name"], "order": position}


async def add_tag(conn: Connection, workspace_id: str, body: dict[str, Any]) -> dict[str, Any]:
    clean, errors = create_values(
        body,
        allowed=frozenset({"name", "color"}),
        required=("name",),
        validators={"name": _name, "color": lambda f, x: v.text(f, x, nullable=True)},
    )
    require_valid(errors)
    now = utcnow()
    tag_id = new_id()
    color = clean.get("color")
    await repo.insert_tag(
        conn, workspace_id=workspace_id, tag_id=tag_id, name=clean["name"], color=color, now=now
    )
    await repo.touch_workspace(conn, workspace_id, now)
    return {"id": tag_id, "name": clean["name"], "color": color}


async def add_segmentation(
    conn: Connection, workspace_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    clean, errors = create_values(
        body, allowed=frozenset({"name"}), required=("name",), validators={"name": _name}
    )
    require_valid(errors)
    now = utcnow()
    segmentation_id = new_id()
    await repo.insert_segmentation(
        conn,
        workspace_id=workspace_id,
        segmentation_id=segmentation_id,
        name=clean["name"],
        now=now,
    )
    await repo.touch_workspace(conn, workspace_id, now)
    return {"id": segmentation_id, "name": clean["name"]}


async def add_agent(conn: Connection, workspace_id: str, body: dict[str, Any]) -> dict[str, Any]:
    clean, errors = create_values(
        body,
        allowed=frozenset({"name", "email"}),
        required=("name", "email"),
        validators={"name": _name, "email": _agent_email},
    )
    require_valid(errors)
    now = utcnow()
    agent_id = new_id()
    await repo.insert_agent(
        conn,
        workspace_id=workspace_id,
        agent_id=agent_id,
        name=clean["name"],
        email=clean["email"],
        now=now,
    )
    await repo.touch_workspace(conn, workspace_id, now)
    return {"id": agent_id, "name": clean["name"], "email": clean["email"]}


def workspace_values(body: dict[str, Any]) -> tuple[str, str]:
    """(name, timezone) of a new workspace."""
    clean, errors = create_values(
        body,
        allowed=frozenset({"name", "timezone"}),
        required=("name",),
        validators={"name": _name, "timezone": timezone_name},
        workspace_key=False,
    )
    require_valid(errors)
    return clean["name"], clean.get("timezone", "UTC")
