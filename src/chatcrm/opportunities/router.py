"""Opportunity endpoints (contract A.1, B.3): the record operations (api/record_routes.py),
the delete and the activity log."""

from __future__ import annotations

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import closed_object, component
from chatcrm.api.parameters import WORKSPACE_HEADER, WORKSPACE_QUERY, query_names
from chatcrm.api.record_routes import (
    RecordApi,
    add_activity_operation,
    add_delete_operation,
    add_record_operations,
    add_restore_operation,
)
from chatcrm.api.routing import Routes
from chatcrm.core import messages as m
from chatcrm.opportunities.activities import FIELDS as ACTIVITY_FIELDS
from chatcrm.opportunities.contact_names import contact_names
from chatcrm.opportunities.fields import FIELDS
from chatcrm.opportunities.kind import OPPORTUNITY, OPPORTUNITY_ACTIVITIES
from chatcrm.opportunities.listing import FILTERS
from chatcrm.opportunities.pipeline import pipeline
from chatcrm.records import activities, visibility
from chatcrm.records.fields import FULL
from chatcrm.records.schemas import shape_schema

routes = Routes("opportunities")

_OUTCOME = {
    "type": "object",
    "properties": {"count": {"type": "integer"}, "totalAmount": {"type": "number"}},
    "required": ["count", "totalAmount"],
    "additionalProperties": False,
}


PIPELINE_PARAMS = (WORKSPACE_HEADER, WORKSPACE_QUERY)


# Before the record operations: `/api/opportunity/pipeline` is not an opportunity id.
@routes.operation(
    "GET",
    "/api/opportunity/pipeline",
    operation_id="opportunityPipeline",
    summary="The pipeline: per stage the count and total amount; won and lost by month",
    message=m.LIST_OBTAINED,
    answer=closed_object(
        {
            "workspaceId": {"type": "string"},
            "stages": {
                "type": "array",
                "items": closed_object(
                    {
                        "stageId": {"type": "string"},
                        "name": {"type": "string"},
                        "count": {"type": "integer"},
                        "totalAmount": {"type": "number"},
                    }
                ),
            },
            "months": {
                "type": "array",
                "items": closed_object(
                    {"month": {"type": "string"}, "won": _OUTCOME, "lost": _OUTCOME}
                ),
            },
        }
    ),
    params=PIPELINE_PARAMS,
    errors=(),
)
async def read_pipeline(call: Call) -> Response:
    call.reject_unknown_query(query_names(PIPELINE_PARAMS))
    workspace_id = await call.workspace()
    return ok(m.LIST_OBTAINED, await pipeline(call.conn, workspace_id))


RECORD = component("Opportunity", shape_schema(FIELDS, FULL))

add_record_operations(
    routes,
    RecordApi(
        kind=OPPORTUNITY,
        path="/api/opportunity",
        id_param="opportunityId",
        filters=FILTERS,
        read_schema=RECORD,
        written_schema=RECORD,
        operation_ids=(
            "listOpportunities",
            "getOpportunity",
            "updateOpportunity",
            "createOpportunity",
        ),
        summaries=(
            "List opportunities (newest first)",
            "Get opportunity",
            "Update Opportunity",
            "Create Opportunity",
        ),
        updated=(m.OPPORTUNITY_UPDATED, "oportunity"),  # one p, as the original service
        created=(m.OPPORTUNITY_CREATED, "opportunity"),
        update_errors=(),
        update_description="The record is under `oportunity` (one p), as the original service.",
        board_total="amount",
        board_contact_names=contact_names,
    ),
)


add_delete_operation(
    routes,
    OPPORTUNITY,
    path="/api/opportunity/{opportunityId}",
    id_param="opportunityId",
    operation_id="deleteOpportunity",
    message=m.OPPORTUNITY_DELETED,
)
add_activity_operation(
    routes,
    OPPORTUNITY_ACTIVITIES,
    path="/api/opportunity/{opportunityId}/agent/activities",
    id_param="opportunityId",
    operation_id="createOpportunityActivity",
)

ACTIVITY_LIST_PARAMS = (WORKSPACE_HEADER, WORKSPACE_QUERY)


@routes.operation(
    "GET",
    "/api/opportunity/{opportunityId}/agent/activities",
    operation_id="listOpportunityActivities",
    summary="An opportunity's activities (oldest first)",
    message=m.OPPORTUNITY_ACTIVITIES_OBTAINED,
    answer={
        "type": "object",
        "properties": {
            "opportunityId": {"type": "string"},
            "data": {
                "type": "array",
                "items": component("OpportunityActivity", shape_schema(ACTIVITY_FIELDS, FULL)),
            },
        },
        "required": ["opportunityId", "data"],
        "additionalProperties": False,
    },
    params=ACTIVITY_LIST_PARAMS,
    errors=(404,),
)
async def list_opportunity_activities(call: Call, opportunityId: str) -> Response:
    call.reject_unknown_query(query_names(ACTIVITY_LIST_PARAMS))
    workspace_id = await call.workspace()
    await visibility.check(call.conn, OPPORTUNITY, workspace_id, opportunityId)
    rows = await activities.list_all(
        call.conn, OPPORTUNITY_ACTIVITIES, workspace_id=workspace_id, record_id=opportunityId
    )
    return ok(m.OPPORTUNITY_ACTIVITIES_OBTAINED, {"opportunityId": opportunityId, "data": rows})


add_restore_operation(
    routes,
    OPPORTUNITY,
    path="/api/opportunity/{opportunityId}/restore",
    id_param="opportunityId",
    operation_id="restoreOpportunity",
    restored=(m.OPPORTUNITY_RESTORED, "opportunity"),
    written_schema=RECORD,
)
