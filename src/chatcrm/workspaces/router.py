"""Workspace endpoints: read (B.3) and set-up (contract C)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel
from starlette.responses import Response

from chatcrm.api.body import read_json_object
from chatcrm.api.deps import Caller, check_body_workspace
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import IDEMPOTENCY_KEY, WORKSPACE_HEADER, operation, responses
from chatcrm.core import messages as m
from chatcrm.db.database import Connection
from chatcrm.workspaces import schemas, service

router = APIRouter(tags=["workspaces"])


@router.get(
    "/api/workspace/{workspaceId}",
    operation_id="getWorkspace",
    summary="Get workspace",
    responses=responses(schemas.Workspace, 401, 403),
    openapi_extra=operation(WORKSPACE_HEADER),
)
async def get_workspace(workspaceId: str, call: Caller) -> Response:
    workspace_id = await call.workspace(path=workspaceId)
    view = await service.workspace_view(call.conn, workspace_id)
    return ok(m.WORKSPACE_OBTAINED, view)


@router.post(
    "/api/workspace",
    operation_id="createWorkspace",
    summary="Create a workspace for the key's account",
    responses=responses(schemas.Workspace, 400, 401, 403, 409, 413, 415, 422),
    openapi_extra=operation(IDEMPOTENCY_KEY, body=schemas.WorkspaceCreateBody),
)
async def create_workspace(call: Caller) -> Response:
    body = await call.read_body()
    if call.header("x-workspace-id") or body.get("workspaceId") not in (None, ""):
        # Not needed here (the new workspace belongs to the key's account), but a workspace
        # named must be one the key may use, as everywhere: never silently ignored.
        await call.workspace(query=False, body=body)
    name, timezone = service.workspace_values({k: v for k, v in body.items() if k != "workspaceId"})
    await call.conn.begin()
    workspace_id = await service.create_workspace(
        call.conn, account_id=call.account_id, name=name, timezone=timezone
    )
    view = await service.workspace_view(call.conn, workspace_id)
    return ok(m.WORKSPACE_CREATED, view)


AddItem = Callable[[Connection, str, dict[str, Any]], Awaitable[dict[str, Any]]]


def _setup_route(
    path: str,
    operation_id: str,
    summary: str,
    message: str,
    add: AddItem,
    body_model: type[BaseModel],
    data_model: type[BaseModel],
) -> None:
    async def endpoint(workspaceId: str, call: Caller) -> Response:
        workspace_id = await call.workspace(path=workspaceId)
        body = await read_json_object(call.request)
        check_body_workspace(body, workspace_id)
        await call.conn.begin()
        item = await add(call.conn, workspace_id, body)
        return ok(message, item)

    router.add_api_route(
        f"/api/workspace/{{workspaceId}}/{path}",
        endpoint,
        methods=["POST"],
        operation_id=operation_id,
        summary=summary,
        responses=responses(data_model, 400, 401, 403, 409, 413, 415, 422),
        openapi_extra=operation(WORKSPACE_HEADER, IDEMPOTENCY_KEY, body=body_model),
    )


_setup_route(
    "stages",
    "createStage",
    "Add a stage",
    m.STAGE_CREATED,
    service.add_stage,
    schemas.StageCreateBody,
    schemas.Stage,
)
_setup_route(
    "tags",
    "createTag",
    "Add a tag",
    m.TAG_CREATED,
    service.add_tag,
    schemas.TagCreateBody,
    schemas.TagItem,
)
_setup_route(
    "segmentations",
    "createSegmentation",
    "Add a segmentation",
    m.SEGMENTATION_CREATED,
    service.add_segmentation,
    schemas.SegmentationCreateBody,
    schemas.Segmentation,
)
_setup_route(
    "agents",
    "createAgent",
    "Add an agent",
    m.AGENT_CREATED,
    service.add_agent,
    schemas.AgentCreateBody,
    schemas.Agent,
)
