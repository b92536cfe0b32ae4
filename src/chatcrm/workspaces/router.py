"""Workspace endpoints: read (B.3) and set-up (contract C)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Table
from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import component
from chatcrm.api.parameters import IDEMPOTENCY_KEY, WORKSPACE_HEADER
from chatcrm.api.routing import Endpoint, Routes
from chatcrm.core import messages as m
from chatcrm.core.errors import Forbidden
from chatcrm.db.schema import agents, segmentations, stages, tags
from chatcrm.records.fields import FULL, FieldTable
from chatcrm.records.schemas import create_body_schema, shape_schema, update_body_schema
from chatcrm.workspaces import service
from chatcrm.workspaces.fields import AGENT, SEGMENTATION, STAGE, TAG, WORKSPACE

routes = Routes("workspaces")

VIEW = component("Workspace", shape_schema(WORKSPACE, FULL))


@routes.operation(
    "GET",
    "/api/workspace/{workspaceId}",
    operation_id="getWorkspace",
    summary="Get workspace",
    message=m.WORKSPACE_OBTAINED,
    answer=VIEW,
    params=(WORKSPACE_HEADER,),
)
async def get_workspace(call: Call, workspaceId: str) -> Response:
    workspace_id = await call.workspace(path=workspaceId)
    return ok(m.WORKSPACE_OBTAINED, await service.workspace_view(call.conn, workspace_id))


@routes.operation(
    "PUT",
    "/api/workspace/{workspaceId}",
    operation_id="updateWorkspace",
    summary="Update a workspace's name, timezone or agentsSeeOnlyAssigned",
    message=m.WORKSPACE_UPDATED,
    answer=VIEW,
    params=(WORKSPACE_HEADER,),
    body=update_body_schema(WORKSPACE, implicit=True),
    errors=(422,),
)
async def update_workspace(call: Call, workspaceId: str) -> Response:
    workspace_id = await call.workspace(path=workspaceId)
    body = await call.read_update_body(workspace_id)
    return ok(m.WORKSPACE_UPDATED, await service.update_workspace(call.conn, workspace_id, body))


@routes.operation(
    "GET",
    "/api/workspace",
    operation_id="listWorkspaces",
    summary="The workspaces of the key's account (oldest first)",
    message=m.WORKSPACES_OBTAINED,
    answer={
        "type": "object",
        "properties": {
            "data": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}, "name": {"type": "string"}},
                    "required": ["id", "name"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["data"],
        "additionalProperties": False,
    },
    params=(WORKSPACE_HEADER,),
)
async def list_workspaces(call: Call) -> Response:
    call.reject_unknown_query(())
    # Not needed (the key's account decides), but a workspace named must be one the key
    # may use, as everywhere: never silently ignored.
    await call.check_header_workspace()
    found = await service.account_workspaces(call.conn, call.account_id)
    limited = call.principal.workspace_ids  # agents, viewers, keys of some workspaces (J)
    if limited is not None:
        found = [w for w in found if w["id"] in limited]
    return ok(m.WORKSPACES_OBTAINED, {"data": found})


@routes.operation(
    "POST",
    "/api/workspace",
    operation_id="createWorkspace",
    summary="Create a workspace for the key's account",
    message=m.WORKSPACE_CREATED,
    answer=VIEW,
    params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
    body=create_body_schema(WORKSPACE),
    errors=(403, 422),
)
async def create_workspace(call: Call) -> Response:
    if call.principal.workspace_ids is not None:
        # A key limited to some workspaces (J.5) would make one outside its own list: one
        # it could not use, in an account it reaches only in part.
        raise Forbidden("This API key is limited to some workspaces: it cannot create a workspace.")
    body = await call.read_body()
    if call.header("x-workspace-id") or body.get("workspaceId") not in (None, ""):
        # Not needed here (the new workspace belongs to the key's account), but a workspace
        # named must be one the key may use, as everywhere: never silently ignored.
        await call.workspace(query=False, body=body)
    name, timezone = service.workspace_values(body)
    await call.conn.begin()
    workspace_id = await service.create_workspace(
        call.conn, account_id=call.account_id, name=name, timezone=timezone
    )
    return ok(m.WORKSPACE_CREATED, await service.workspace_view(call.conn, workspace_id))


def _setup_endpoint(message: str, items: FieldTable, table: Table) -> Endpoint:
    async def endpoint(call: Call, workspaceId: str) -> Response:
        workspace_id = await call.workspace(path=workspaceId)
        body = await call.read_update_body(workspace_id)
        await call.conn.begin()
        item: dict[str, Any] = await service.add_item(call.conn, items, table, workspace_id, body)
        return ok(message, item)

    return endpoint


for path, operation_id, summary, message, items, table in (
    ("stages", "createStage", "Add a stage", m.STAGE_CREATED, STAGE, stages),
    ("tags", "createTag", "Add a tag", m.TAG_CREATED, TAG, tags),
    (
        "segmentations",
        "createSegmentation",
        "Add a segmentation",
        m.SEGMENTATION_CREATED,
        SEGMENTATION,
        segmentations,
    ),
    ("agents", "createAgent", "Add an agent", m.AGENT_CREATED, AGENT, agents),
):
    routes.add(
        _setup_endpoint(message, items, table),
        method="POST",
        path=f"/api/workspace/{{workspaceId}}/{path}",
        operation_id=operation_id,
        summary=summary,
        message=message,
        answer=component(items.name.capitalize(), shape_schema(items, FULL)),
        params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
        body=create_body_schema(items),
        errors=(422,),
    )
