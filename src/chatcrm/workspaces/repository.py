"""Workspaces and their set-up records: stages, tags, segmentations, agents."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.sql.elements import BindParameter

from chatcrm.db.database import Connection, Row
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import agents, segmentations, stages, tags, workspaces

_WS: BindParameter[str] = bindparam("_ws")
_ID: BindParameter[str] = bindparam("_id")

_INSERT_WORKSPACE = insert(workspaces)
_TOUCH = update(workspaces).where(workspaces.c.id == _WS).values(updated_at=bindparam("_now"))
_GET = select(workspaces).where(workspaces.c.id == _WS)
_STAGES = (
    select(stages.c.id, stages.c.kind, stages.c.name, stages.c.position)
    .where(stages.c.workspace_id == _WS)
    .order_by(stages.c.kind, stages.c.position)
)
_TAG_LIST = (
    select(tags.c.id, tags.c.name, tags.c.color)
    .where(tags.c.workspace_id == _WS)
    .order_by(tags.c.created_at, tags.c.id)
)
_SEGMENTATION_LIST = (
    select(segmentations.c.id, segmentations.c.name)
    .where(segmentations.c.workspace_id == _WS)
    .order_by(segmentations.c.created_at, segmentations.c.id)
)
_AGENT_LIST = (
    select(agents.c.id, agents.c.name, agents.c.email)
    .where(agents.c.workspace_id == _WS)
    .order_by(agents.c.created_at, agents.c.id)
)
_NEXT_STAGE_POSITION = select(func.coalesce(func.max(stages.c.position), 0) + 1).where(
    stages.c.workspace_id == _WS, stages.c.kind == bindparam("_kind")
)
_INSERT_STAGE = insert(stages)
_INSERT_TAG = insert(tags)
_INSERT_SEGMENTATION = insert(segmentations)
_INSERT_AGENT = insert(agents)
# Listings for operators (`chatcrm workspace list`), oldest first.
_LISTING = select(
    workspaces.c.id, workspaces.c.account_id, workspaces.c.name, workspaces.c.created_at
).order_by(workspaces.c.created_at, workspaces.c.id)
_ACCOUNT_LISTING = _LISTING.where(workspaces.c.account_id == bindparam("_account"))


async def insert_workspace(
    conn: Connection,
    *,
    workspace_id: str,
    account_id: str,
    name: str,
    timezone: str,
    now: datetime,
) -> None:
    await conn.execute(
        _INSERT_WORKSPACE,
        {
            "id": workspace_id,
            "account_id": account_id,
            "name": name,
            "timezone": timezone,
            "created_at": now,
            "updated_at": now,
        },
    )


async def touch_workspace(conn: Connection, workspace_id: str, now: datetime) -> None:
    await conn.execute(_TOUCH, {"_ws": workspace_id, "_now": now})


async def get_workspace(conn: Connection, workspace_id: str) -> Row | None:
    return await conn.fetchrow(_GET, {"_ws": workspace_id})


async def list_workspaces(conn: Connection, account_id: str | None = None) -> list[Row]:
    """id, account_id, name, created_at of the workspaces of one account, or of all."""
    if account_id is None:
        return await conn.fetch(_LISTING)
    return await conn.fetch(_ACCOUNT_LISTING, {"_account": account_id})


async def list_stages(conn: Connection, workspace_id: str) -> list[Row]:
    return await conn.fetch(_STAGES, {"_ws": workspace_id})


async def list_tags(conn: Connection, workspace_id: str) -> list[Row]:
    return await conn.fetch(_TAG_LIST, {"_ws": workspace_id})


async def list_segmentations(conn: Connection, workspace_id: str) -> list[Row]:
    return await conn.fetch(_SEGMENTATION_LIST, {"_ws": workspace_id})


async def list_agents(conn: Connection, workspace_id: str) -> list[Row]:
    return await conn.fetch(_AGENT_LIST, {"_ws": workspace_id})


async def next_stage_position(conn: Connection, workspace_id: str, kind: str) -> int:
    return int(await conn.fetchval(_NEXT_STAGE_POSITION, {"_ws": workspace_id, "_kind": kind}))


async def insert_stage(
    conn: Connection,
    *,
    workspace_id: str,
    stage_id: str,
    kind: str,
    name: str,
    position: int,
    now: datetime,
) -> None:
    await conn.execute(
        _INSERT_STAGE,
        {
            "workspace_id": workspace_id,
            "id": stage_id,
            "kind": kind,
            "name": name,
            "position": position,
            "created_at": now,
        },
    )


async def insert_tag(
    conn: Connection,
    *,
    workspace_id: str,
    tag_id: str,
    name: str,
    color: str | None,
    now: datetime,
) -> None:
    await conn.execute(
        _INSERT_TAG,
        {
            "workspace_id": workspace_id,
            "id": tag_id,
            "name": name,
            "color": color,
            "created_at": now,
        },
    )


async def insert_segmentation(
    conn: Connection, *, workspace_id: str, segmentation_id: str, name: str, now: datetime
) -> None:
    await conn.execute(
        _INSERT_SEGMENTATION,
        {"workspace_id": workspace_id, "id": segmentation_id, "name": name, "created_at": now},
    )


async def insert_agent(
    conn: Connection,
    *,
    workspace_id: str,
    agent_id: str,
    name: str,
    email: str,
    now: datetime,
) -> None:
    await conn.execute(
        _INSERT_AGENT,
        {
            "workspace_id": workspace_id,
            "id": agent_id,
            "name": name,
            "email": email,
            "created_at": now,
        },
    )


# --- reference checks used by contacts and opportunities ---------------------------------

_STAGE_KIND = select(stages.c.kind).where(stages.c.workspace_id == _WS, stages.c.id == _ID)
_FIRST_STAGE = (
    select(stages.c.id)
    .where(stages.c.workspace_id == _WS, stages.c.kind == bindparam("_kind"))
    .order_by(stages.c.position, stages.c.id)
    .limit(1)
)
_AGENT = select(agents.c.id).where(agents.c.workspace_id == _WS, agents.c.id == _ID)
_SEGMENTATION = select(segmentations.c.id).where(
    segmentations.c.workspace_id == _WS, segmentations.c.id == _ID
)
_TAGS = {
    dialect: select(tags.c.id).where(
        tags.c.workspace_id == _WS, in_id_list(tags.c.id, "_ids", dialect)
    )
    for dialect in ("postgresql", "sqlite")
}


async def stage_kind(conn: Connection, workspace_id: str, stage_id: str) -> str | None:
    value: str | None = await conn.fetchval(_STAGE_KIND, {"_ws": workspace_id, "_id": stage_id})
    return value


async def first_stage(conn: Connection, workspace_id: str, kind: str) -> str | None:
    value: str | None = await conn.fetchval(_FIRST_STAGE, {"_ws": workspace_id, "_kind": kind})
    return value


async def agent_exists(conn: Connection, workspace_id: str, agent_id: str) -> bool:
    return await conn.fetchrow(_AGENT, {"_ws": workspace_id, "_id": agent_id}) is not None


async def segmentation_exists(conn: Connection, workspace_id: str, segmentation_id: str) -> bool:
    row = await conn.fetchrow(_SEGMENTATION, {"_ws": workspace_id, "_id": segmentation_id})
    return row is not None


async def existing_tags(conn: Connection, workspace_id: str, tag_ids: Iterable[str]) -> set[str]:
    wanted = list(tag_ids)
    if not wanted:
        return set()
    rows = await conn.fetch(
        _TAGS[conn.dialect], {"_ws": workspace_id, "_ids": id_list(wanted, conn.dialect)}
    )
    return {row["id"] for row in rows}
