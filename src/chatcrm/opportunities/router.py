"""Opportunity endpoints (contract A.1, B.3)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from chatcrm.api import messages as m
from chatcrm.api.body import read_json_object
from chatcrm.api.conditional import etag
from chatcrm.api.deps import (
    Caller,
    Db,
    IfMatch,
    WorkspaceHeader,
    check_body_workspace,
    require_query,
    select_workspace,
)
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import json_body, responses
from chatcrm.opportunities import service
from chatcrm.opportunities.schemas import (
    OpportunityCreateBody,
    OpportunityCreated,
    OpportunityUpdateBody,
    OpportunityUpdated,
)
from chatcrm.opportunities.serialize import opportunity

router = APIRouter(tags=["opportunities"])


@router.put(
    "/api/opportunity",
    operation_id="updateOpportunity",
    summary="Update Opportunity",
    responses=responses(OpportunityUpdated, 400, 401, 403, 404, 412, 413, 415, 422),
    openapi_extra=json_body(OpportunityUpdateBody),
)
async def update_opportunity(
    request: Request,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
    if_match: IfMatch = None,
    id: str | None = Query(default=None, description="The opportunity id (required)."),
    workspaceId: str | None = Query(default=None, description="Optional; equal to the header."),
) -> Response:
    workspace_id = await select_workspace(
        request, caller, header=x_workspace_id, query=workspaceId, header_required=True
    )
    opportunity_id = require_query("id", id)
    body = await read_json_object(request)
    check_body_workspace(body, workspace_id)
    row = await service.update(
        db,
        workspace_id=workspace_id,
        opportunity_id=opportunity_id,
        body=body,
        if_match=if_match,
    )
    return ok(
        m.OPPORTUNITY_UPDATED,
        {"id": opportunity_id, "oportunity": opportunity(row)},
        headers={"ETag": etag(row)},
    )


@router.post(
    "/api/opportunity",
    operation_id="createOpportunity",
    summary="Create Opportunity",
    responses=responses(OpportunityCreated, 400, 401, 403, 413, 415, 422),
    openapi_extra=json_body(OpportunityCreateBody),
)
async def create_opportunity(
    request: Request,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
) -> Response:
    body = await read_json_object(request)
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, body=body)
    row = await service.create(db, workspace_id=workspace_id, key_id=caller.key_id, body=body)
    return ok(
        m.OPPORTUNITY_CREATED,
        {"id": row["id"], "opportunity": opportunity(row)},
        headers={"ETag": etag(row)},
    )
