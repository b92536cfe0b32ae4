"""Opportunity endpoints (contract A.1, B.3)."""

from __future__ import annotations

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import component, page_of
from chatcrm.api.parameters import (
    IDEMPOTENCY_KEY,
    IF_MATCH,
    PAGE,
    WORKSPACE_HEADER,
    WORKSPACE_QUERY,
    filter_params,
    query_names,
)
from chatcrm.api.routing import Param, Routes
from chatcrm.core import messages as m
from chatcrm.opportunities import activities
from chatcrm.opportunities.fields import FIELDS
from chatcrm.opportunities.kind import OPPORTUNITY, OPPORTUNITY_ACTIVITIES
from chatcrm.opportunities.listing import FILTERS
from chatcrm.records import activities as activity_log
from chatcrm.records import listing as lists
from chatcrm.records import writing
from chatcrm.records.conditional import etag
from chatcrm.records.fields import FULL
from chatcrm.records.schemas import create_body_schema, shape_schema, update_body_schema

routes = Routes("opportunities")

RECORD = component("Opportunity", shape_schema(FIELDS, FULL))
LIST_PARAMS = (WORKSPACE_HEADER, WORKSPACE_QUERY, *PAGE, *filter_params(FILTERS))


def _with(key: str, value_schema: object) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {"id": {"type": "string"}, key: value_schema},
        "required": ["id", key],
        "additionalProperties": False,
    }


@routes.operation(
    "PUT",
    "/api/opportunity",
    operation_id="updateOpportunity",
    summary="Update Opportunity",
    description="The answer's record is under `oportunity` (one p), as the original service.",
    message=m.OPPORTUNITY_UPDATED,
    answer=_with("oportunity", RECORD),
    params=(
        WORKSPACE_HEADER.but(required=True),
        IF_MATCH,
        Param("id", "query", "The opportunity id.", required=True),
        WORKSPACE_QUERY,
    ),
    body=update_body_schema(FIELDS),
    errors=(404, 412, 422),
    etag=True,
)
async def update_opportunity(call: Call) -> Response:
    workspace_id = await call.workspace(header_required=True)
    opportunity_id = call.required_query("id")
    body = await call.read_update_body(workspace_id)
    view = await writing.update(
        call.conn,
        OPPORTUNITY,
        workspace_id=workspace_id,
        record_id=opportunity_id,
        body=body,
        if_match=call.header("if-match"),
    )
    return ok(
        m.OPPORTUNITY_UPDATED,
        {"id": opportunity_id, "oportunity": view.record},
        headers={"ETag": etag(view.version)},
    )


@routes.operation(
    "POST",
    "/api/opportunity",
    operation_id="createOpportunity",
    summary="Create Opportunity",
    message=m.OPPORTUNITY_CREATED,
    answer=_with("opportunity", RECORD),
    params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
    body=create_body_schema(FIELDS),
    errors=(422,),
    etag=True,
)
async def create_opportunity(call: Call) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    view = await writing.create(
        call.conn, OPPORTUNITY, workspace_id=workspace_id, key_id=call.key_id, body=body
    )
    return ok(
        m.OPPORTUNITY_CREATED,
        {"id": view.id, "opportunity": view.record},
        headers={"ETag": etag(view.version)},
    )


@routes.operation(
    "GET",
    "/api/opportunity",
    operation_id="listOpportunities",
    summary="List opportunities (newest first)",
    message=m.LIST_PAGE_OBTAINED,
    answer=page_of("workspaceId", RECORD),
    params=LIST_PARAMS,
    errors=(422,),
)
async def list_opportunities(call: Call) -> Response:
    call.reject_unknown_query(query_names(LIST_PARAMS))
    workspace_id = await call.workspace()
    filtering, size = lists.read_filters(FILTERS, call.request.query_params, call.conn.dialect)
    views, token = await lists.list_page(
        call.conn,
        OPPORTUNITY,
        await call.codec(),
        filters=FILTERS,
        workspace_id=workspace_id,
        filtering=filtering,
        token=call.query("continuationToken") or None,
        size=size,
    )
    return ok(
        m.LIST_PAGE_OBTAINED,
        {
            "workspaceId": workspace_id,
            "continuationToken": token,
            "data": [v.record for v in views],
        },
    )


@routes.operation(
    "GET",
    "/api/opportunity/{opportunityId}",
    operation_id="getOpportunity",
    summary="Get opportunity",
    message=m.LIST_OBTAINED,
    answer={
        "type": "object",
        "properties": {
            "opportunityId": {"type": "string"},
            "data": {"type": "array", "items": RECORD},
        },
        "required": ["opportunityId", "data"],
        "additionalProperties": False,
    },
    params=(WORKSPACE_HEADER, WORKSPACE_QUERY),
    errors=(404,),
    etag=True,
)
async def get_opportunity(call: Call, opportunityId: str) -> Response:
    workspace_id = await call.workspace()
    view = await writing.get(call.conn, OPPORTUNITY, workspace_id, opportunityId, shape=FULL)
    return ok(
        m.LIST_OBTAINED,
        {"opportunityId": opportunityId, "data": [view.record]},
        headers={"ETag": etag(view.version)},
    )


@routes.operation(
    "DELETE",
    "/api/opportunity/{opportunityId}",
    operation_id="deleteOpportunity",
    summary="Delete opportunity (soft)",
    message=m.OPPORTUNITY_DELETED,
    answer={
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "additionalProperties": False,
    },
    params=(WORKSPACE_HEADER, WORKSPACE_QUERY, IF_MATCH),
    errors=(404, 412),
)
async def delete_opportunity(call: Call, opportunityId: str) -> Response:
    workspace_id = await call.workspace()
    await writing.delete_one(
        call.conn,
        OPPORTUNITY,
        workspace_id=workspace_id,
        record_id=opportunityId,
        key_id=call.key_id,
        if_match=call.header("if-match"),
    )
    return ok(m.OPPORTUNITY_DELETED, {"id": opportunityId})


@routes.operation(
    "POST",
    "/api/opportunity/{opportunityId}/agent/activities",
    operation_id="createOpportunityActivity",
    summary="Record an opportunity activity",
    message=m.ACTIVITY_RECORDED,
    answer=None,
    params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
    body=create_body_schema(activities.FIELDS),
    errors=(404, 422),
)
async def create_opportunity_activity(call: Call, opportunityId: str) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    await activity_log.add(
        call.conn,
        OPPORTUNITY_ACTIVITIES,
        workspace_id=workspace_id,
        record_id=opportunityId,
        key_id=call.key_id,
        body=body,
    )
    return ok(m.ACTIVITY_RECORDED, None)
