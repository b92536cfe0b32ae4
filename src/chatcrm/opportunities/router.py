"""Opportunity endpoints (contract A.1, B.3)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from chatcrm.api import messages as m
from chatcrm.api import params
from chatcrm.api.body import read_json_object
from chatcrm.api.conditional import etag
from chatcrm.api.deps import (
    Caller,
    Codec,
    Db,
    IfMatch,
    WorkspaceHeader,
    check_body_workspace,
    require_query,
    select_workspace,
)
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import json_body, responses
from chatcrm.opportunities import fields, listing, service
from chatcrm.opportunities.schemas import (
    OpportunityActivityBody,
    OpportunityById,
    OpportunityCreateBody,
    OpportunityCreated,
    OpportunityDeleted,
    OpportunityPage,
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


_WS_QUERY = Query(default=None, description="The workspace (or send x-workspace-id).")


@router.get(
    "/api/opportunity",
    operation_id="listOpportunities",
    summary="List opportunities (newest first)",
    responses=responses(OpportunityPage, 400, 401, 403, 422),
)
async def list_opportunities(
    request: Request,
    caller: Caller,
    db: Db,
    codec: Codec,
    x_workspace_id: WorkspaceHeader = None,
    workspaceId: str | None = _WS_QUERY,
    continuationToken: str | None = Query(default=None),
    pageSize: str | None = Query(default=None, description="1 to 100; default 20."),
    q: str | None = Query(default=None, description="In name, description or code."),
    stageId: str | None = Query(default=None),
    assignedAgentId: str | None = Query(default=None),
    contactId: str | None = Query(default=None),
    winLossStatus: str | None = Query(default=None, description="0 open, 1 won, 2 lost."),
    updatedSince: str | None = Query(default=None, description="ISO 8601 date-time."),
) -> Response:
    params.reject_unknown(request, listing.LIST_PARAMS)
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, query=workspaceId)
    filters = listing.OpportunityFilters(
        q=params.text_param(q),
        stage_id=params.text_param(stageId),
        assigned_agent_id=params.text_param(assignedAgentId),
        contact_id=params.text_param(contactId),
        win_loss_status=params.int_choice_param("winLossStatus", winLossStatus, fields.WIN_LOSS),
        updated_since=params.timestamp_param("updatedSince", updatedSince),
    )
    rows, token = await listing.list_page(
        db,
        codec,
        workspace_id=workspace_id,
        filters=filters,
        token=params.text_param(continuationToken),
        size=params.page_size(pageSize),
    )
    return ok(
        m.LIST_PAGE_OBTAINED,
        {
            "workspaceId": workspace_id,
            "continuationToken": token,
            "data": [opportunity(row) for row in rows],
        },
    )


@router.get(
    "/api/opportunity/{opportunityId}",
    operation_id="getOpportunity",
    summary="Get opportunity",
    responses=responses(OpportunityById, 401, 403, 404),
)
async def get_opportunity(
    request: Request,
    opportunityId: str,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
    workspaceId: str | None = _WS_QUERY,
) -> Response:
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, query=workspaceId)
    row = await service.get(db, workspace_id, opportunityId)
    return ok(
        m.LIST_OBTAINED,
        {"opportunityId": opportunityId, "data": [opportunity(row)]},
        headers={"ETag": etag(row)},
    )


@router.delete(
    "/api/opportunity/{opportunityId}",
    operation_id="deleteOpportunity",
    summary="Delete opportunity (soft)",
    responses=responses(OpportunityDeleted, 401, 403, 404, 412),
)
async def delete_opportunity(
    request: Request,
    opportunityId: str,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
    if_match: IfMatch = None,
    workspaceId: str | None = _WS_QUERY,
) -> Response:
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, query=workspaceId)
    await service.delete(
        db,
        workspace_id=workspace_id,
        opportunity_id=opportunityId,
        key_id=caller.key_id,
        if_match=if_match,
    )
    return ok(m.OPPORTUNITY_DELETED, {"id": opportunityId})


@router.post(
    "/api/opportunity/{opportunityId}/agent/activities",
    operation_id="createOpportunityActivity",
    summary="Record an opportunity activity",
    responses=responses(None, 400, 401, 403, 404, 413, 415, 422),
    openapi_extra=json_body(OpportunityActivityBody),
)
async def create_opportunity_activity(
    request: Request,
    opportunityId: str,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
) -> Response:
    body = await read_json_object(request)
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, body=body)
    await service.add_activity(
        db,
        workspace_id=workspace_id,
        opportunity_id=opportunityId,
        key_id=caller.key_id,
        body=body,
    )
    return ok(m.ACTIVITY_RECORDED, None)
