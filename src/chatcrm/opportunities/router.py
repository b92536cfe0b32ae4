"""Opportunity endpoints (contract A.1, B.3)."""

from __future__ import annotations

from fastapi import APIRouter
from starlette.responses import Response

from chatcrm.api import params
from chatcrm.api.body import read_json_object
from chatcrm.api.deps import Caller, check_body_workspace
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import (
    IDEMPOTENCY_KEY,
    IF_MATCH,
    PAGE_PARAMS,
    WORKSPACE_HEADER,
    WORKSPACE_QUERY,
    operation,
    query_param,
    responses,
)
from chatcrm.core import messages as m
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
from chatcrm.records.conditional import etag

router = APIRouter(tags=["opportunities"])

_FILTERS = [
    query_param("q", "Substring of name, description or opportCode."),
    query_param("stageId", "Only opportunities in this stage."),
    query_param("assignedAgentId", "Only opportunities assigned to this agent."),
    query_param("contactId", "Only opportunities of this contact."),
    query_param(
        "winLossStatus", "0 open, 1 won, 2 lost.", schema={"type": "integer", "enum": [0, 1, 2]}
    ),
    query_param("updatedSince", "ISO 8601: changed at or after.", schema={"format": "date-time"}),
]


@router.put(
    "/api/opportunity",
    operation_id="updateOpportunity",
    summary="Update Opportunity",
    responses=responses(OpportunityUpdated, 400, 401, 403, 404, 412, 413, 415, 422),
    openapi_extra=operation(
        WORKSPACE_HEADER,
        IF_MATCH,
        query_param("id", "The opportunity id.", required=True),
        query_param("workspaceId", "Optional; equal to the header."),
        body=OpportunityUpdateBody,
    ),
)
async def update_opportunity(call: Caller) -> Response:
    workspace_id = await call.workspace(header_required=True)
    opportunity_id = call.required_query("id")
    body = await read_json_object(call.request)
    check_body_workspace(body, workspace_id)
    row = await service.update(
        call.conn,
        workspace_id=workspace_id,
        opportunity_id=opportunity_id,
        body=body,
        if_match=call.header("if-match"),
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
    responses=responses(OpportunityCreated, 400, 401, 403, 409, 413, 415, 422),
    openapi_extra=operation(WORKSPACE_HEADER, IDEMPOTENCY_KEY, body=OpportunityCreateBody),
)
async def create_opportunity(call: Caller) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    row = await service.create(call.conn, workspace_id=workspace_id, key_id=call.key_id, body=body)
    return ok(
        m.OPPORTUNITY_CREATED,
        {"id": row["id"], "opportunity": opportunity(row)},
        headers={"ETag": etag(row)},
    )


@router.get(
    "/api/opportunity",
    operation_id="listOpportunities",
    summary="List opportunities (newest first)",
    responses=responses(OpportunityPage, 400, 401, 403, 422),
    openapi_extra=operation(WORKSPACE_HEADER, WORKSPACE_QUERY, *PAGE_PARAMS, *_FILTERS),
)
async def list_opportunities(call: Caller) -> Response:
    params.reject_unknown(call.request, listing.LIST_PARAMS)
    workspace_id = await call.workspace()
    q = call.query
    filters = listing.OpportunityFilters(
        q=params.text_param(q("q")),
        stage_id=params.text_param(q("stageId")),
        assigned_agent_id=params.text_param(q("assignedAgentId")),
        contact_id=params.text_param(q("contactId")),
        win_loss_status=params.int_choice_param(
            "winLossStatus", q("winLossStatus"), fields.WIN_LOSS
        ),
        updated_since=params.timestamp_param("updatedSince", q("updatedSince")),
    )
    rows, token = await listing.list_page(
        call.conn,
        await call.codec(),
        workspace_id=workspace_id,
        filters=filters,
        token=params.text_param(q("continuationToken")),
        size=params.page_size(q("pageSize")),
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
    openapi_extra=operation(WORKSPACE_HEADER, WORKSPACE_QUERY),
)
async def get_opportunity(opportunityId: str, call: Caller) -> Response:
    workspace_id = await call.workspace()
    row = await service.get(call.conn, workspace_id, opportunityId)
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
    openapi_extra=operation(WORKSPACE_HEADER, WORKSPACE_QUERY, IF_MATCH),
)
async def delete_opportunity(opportunityId: str, call: Caller) -> Response:
    workspace_id = await call.workspace()
    await service.delete(
        call.conn,
        workspace_id=workspace_id,
        opportunity_id=opportunityId,
        key_id=call.key_id,
        if_match=call.header("if-match"),
    )
    return ok(m.OPPORTUNITY_DELETED, {"id": opportunityId})


@router.post(
    "/api/opportunity/{opportunityId}/agent/activities",
    operation_id="createOpportunityActivity",
    summary="Record an opportunity activity",
    responses=responses(None, 400, 401, 403, 404, 409, 413, 415, 422),
    openapi_extra=operation(WORKSPACE_HEADER, IDEMPOTENCY_KEY, body=OpportunityActivityBody),
)
async def create_opportunity_activity(opportunityId: str, call: Caller) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    await service.add_activity(
        call.conn,
        workspace_id=workspace_id,
        opportunity_id=opportunityId,
        key_id=call.key_id,
        body=body,
    )
    return ok(m.ACTIVITY_RECORDED, None)
