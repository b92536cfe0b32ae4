"""Workspaces and their set-up records: stages, tags, segmentations, agents."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.sql.elements import BindParameter

from chatcrm.db.schema import agents, segmentations, stages, tags, workspaces


async def insert_workspace(
    conn: AsyncConnection,
    *,
    workspace_id: str,
    account_id: str,
    name: str,
    timezone: str,
    now: datetime,
) -> None:
    await conn.execute(
        insert(workspaces).values(
            id=workspace_id,
            account_id=account_id,
            name=name,
            timezone=timezone,
            created_at=now,
            updated_at=now,
        )
    )


async def touch_workspace(conn: AsyncConnection, workspace_id: str, now: datetime) -> None:
    await conn.execute(
        update(workspaces).where(workspaces.c.id == workspace_id).values(updated_at=now)
    )


async def get_workspace(conn: AsyncConnection, workspace_id: str) -> RowMapping | None:
    result = await conn.execute(select(workspaces).where(workspaces.c.id == workspace_id))
    return result.mappings().first()


async def list_stages(conn: AsyncConnection, workspace_id: str) -> list[RowMapping]:
    result = await conn.execute(
        select(stages.c.id, stages.c.kind, stages.c.name, stages.c.position)
        .where(stages.c.workspace_id == workspace_id)
        .order_by(stages.c.kind, stages.c.position)
    )
    return list(result.mappings())


async def list_tags(conn: AsyncConnection, workspace_id: str) -> list[RowMapping]:
    result = await conn.execute(
        select(tags.c.id, tags.c.name, tags.c.color)
        .where(tags.c.workspace_id == workspace_id)
        .order_by(tags.c.created_at, tags.c.id)
    )
    return list(result.mappings())


async def list_segmentations(conn: AsyncConnection, workspace_id: str) -> list[RowMapping]:
    result = await conn.execute(
        select(segmentations.c.id, segmentations.c.name)
        .where(segmentations.c.workspace_id == workspace_id)
        .order_by(segmentations.c.created_at, segmentations.c.id)
    )
    return list(result.mappings())


async def list_agents(conn: AsyncConnection, workspace_id: str) -> list[RowMapping]:
    result = await conn.execute(
        select(agents.c.id, agents.c.name, agents.c.email)
        .where(agents.c.workspace_id == workspace_id)
        .order_by(agents.c.created_at, agents.c.id)
    )
    return list(result.mappings())


async def next_stage_position(conn: AsyncConnection, workspace_id: str, kind: str) -> int:
    result = await conn.execute(
        select(func.coalesce(func.max(stages.c.position), 0) + 1).where(
            stages.c.workspace_id == workspace_id, stages.c.kind == kind
        )
    )
    return int(result.scalar_one())


async def insert_stage(
    conn: AsyncConnection,
    *,
    workspace_id: str,
    stage_id: str,
    kind: str,
    name: str,
    position: int,
    now: datetime,
) -> None:
    await conn.execute(
        insert(stages).values(
            workspace_id=workspace_id,
            id=stage_id,
            kind=kind,
            name=name,
            position=position,
            created_at=now,
        )
    )


async def insert_tag(
    conn: AsyncConnection,
    *,
    workspace_id: str,
    tag_id: str,
    name: str,
    color: str | None,
    now: datetime,
) -> None:
    await conn.execute(
        insert(tags).values(
            workspace_id=workspace_id, id=tag_id, name=name, color=color, created_at=now
        )
    )


async def insert_segmentation(
    conn: AsyncConnection, *, workspace_id: str, segmentation_id: str, name: str, now: datetime
) -> None:
    await conn.execute(
        insert(segmentations).values(
            workspace_id=workspace_id, id=segmentation_id, name=name, created_at=now
        )
    )


async def insert_agent(
    conn: AsyncConnection,
    *,
    workspace_id: str,
    agent_id: str,
    name: str,
    email: str,
    now: datetime,
) -> None:
    await conn.execute(
        insert(agents).values(
            workspace_id=workspace_id, id=agent_id, name=name, email=email, created_at=now
        )
    )


# --- reference checks used by contacts and opportunities (prebuilt: hot paths) ---------------

_WS: BindParameter[str] = bindparam("_ws")
_ID: BindParameter[str] = bindparam("_id")
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
_TAGS = select(tags.c.id).where(
    tags.c.workspace_id == _WS, tags.c.id.in_(bindparam("_ids", expanding=True))
)


async def stage_kind(conn: AsyncConnection, workspace_id: str, stage_id: str) -> str | None:
    result = await conn.execute(_STAGE_KIND, {"_ws": workspace_id, "_id": stage_id})
    return result.scalar_one_or_none()


async def first_stage(conn: AsyncConnection, workspace_id: str, kind: str) -> str | None:
    result = await conn.execute(_FIRST_STAGE, {"_ws": workspace_id, "_kind": kind})
    return result.scalar_one_or_none()


async def agent_exists(conn: AsyncConnection, workspace_id: str, agent_id: str) -> bool:
    result = await conn.execute(_AGENT, {"_ws": workspace_id, "_id": agent_id})
    return result.first() is not None


async def segmentation_exists(
    conn: AsyncConnection, workspace_id: str, segmentation_id: str
) -> bool:
    result = await conn.execute(_SEGMENTATION, {"_ws": workspace_id, "_id": segmentation_id})
    return result.first() is not None


async def existing_tags(
    conn: AsyncConnection, workspace_id: str, tag_ids: Iterable[str]
) -> set[str]:
    wanted = list(tag_ids)
    if not wanted:
        return set()
    result = await conn.execute(_TAGS, {"_ws": workspace_id, "_ids": wanted})
    return set(result.scalars())
