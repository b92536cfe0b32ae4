"""Webhook endpoints (contract D.4): create, list, get, update, delete, rotate the secret,
send a test event, the delivery log and replays.

Each endpoint reads its request in the contract's order (docs/api.md 1.9); the POSTs
without body fields (rotate, test) take no body, `{}`, or `{"workspaceId"}` only.
"""

from __future__ import annotations

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import NO_STORE, ok
from chatcrm.api.openapi import closed_object, component, page_of
from chatcrm.api.parameters import (
    IDEMPOTENCY_KEY,
    PAGE,
    WORKSPACE_HEADER,
    WORKSPACE_QUERY,
    filter_params,
    query_names,
)
from chatcrm.api.routing import Routes
from chatcrm.core import messages as m
from chatcrm.people import audit
from chatcrm.records import bodies
from chatcrm.records.fields import FULL
from chatcrm.records.schemas import create_body_schema, shape_schema, update_body_schema
from chatcrm.webhooks import deliveries, service
from chatcrm.webhooks.fields import DELIVERY, LISTED, NO_FIELDS, REPLAY, WEBHOOK, WHOLE

routes = Routes("webhooks")

WEBHOOK_SCHEMA = component("Webhook", shape_schema(WEBHOOK, WHOLE))
LISTED_SCHEMA = component("WebhookListed", shape_schema(WEBHOOK, LISTED))
DELIVERY_SCHEMA = component("WebhookDelivery", shape_schema(DELIVERY, FULL))
PATH = "/api/webhook/{webhookId}"
READ_PARAMS = (WORKSPACE_HEADER, WORKSPACE_QUERY)
POST_PARAMS = (WORKSPACE_HEADER, IDEMPOTENCY_KEY)
DELIVERY_PARAMS = (*READ_PARAMS, *PAGE, *filter_params(deliveries.FILTERS))


WITH_ID = closed_object({"id": {"type": "string"}, "webhook": WEBHOOK_SCHEMA})


def _allow_private(call: Call) -> bool:
    return bool(call.request.app.state.settings.webhook_allow_private)


@routes.operation(
    "POST",
    "/api/webhook",
    operation_id="createWebhook",
    summary=f"Create a webhook (at most {service.MAX_PER_WORKSPACE} per workspace)",
    message=m.WEBHOOK_CREATED,
    answer=WITH_ID,
    params=POST_PARAMS,
    body=create_body_schema(WEBHOOK),
    errors=(422,),
)
async def create_webhook(call: Call) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    webhook = await service.create(
        call.conn, workspace_id=workspace_id, body=body, allow_private=_allow_private(call)
    )
    return ok(m.WEBHOOK_CREATED, {"id": webhook["id"], "webhook": webhook})


@routes.operation(
    "GET",
    "/api/webhook",
    operation_id="listWebhooks",
    summary="List webhooks (oldest first, without their secrets)",
    message=m.WEBHOOKS_OBTAINED,
    answer=closed_object(
        {"workspaceId": {"type": "string"}, "data": {"type": "array", "items": LISTED_SCHEMA}}
    ),
    params=READ_PARAMS,
)
async def list_webhooks(call: Call) -> Response:
    call.reject_unknown_query(query_names(READ_PARAMS))
    workspace_id = await call.workspace()
    listed = await service.list_all(call.conn, workspace_id)
    return ok(m.WEBHOOKS_OBTAINED, {"workspaceId": workspace_id, "data": listed})


@routes.operation(
    "GET",
    PATH,
    operation_id="getWebhook",
    summary="Get a webhook (with its secret)",
    message=m.WEBHOOK_OBTAINED,
    answer=WITH_ID,
    params=READ_PARAMS,
    errors=(404,),
)
async def get_webhook(call: Call, webhookId: str) -> Response:
    workspace_id = await call.workspace()
    webhook = await service.get(call.conn, workspace_id=workspace_id, webhook_id=webhookId)
    return ok(m.WEBHOOK_OBTAINED, {"id": webhookId, "webhook": webhook}, headers=NO_STORE)


@routes.operation(
    "PUT",
    PATH,
    operation_id="updateWebhook",
    summary="Update a webhook (paramToUpdate, or the fields alone)",
    description="enabled: true also clears disabledReason and the count of failures.",
    message=m.WEBHOOK_UPDATED,
    answer=WITH_ID,
    params=READ_PARAMS,
    body=update_body_schema(WEBHOOK, implicit=True),
    errors=(404, 422),
)
async def update_webhook(call: Call, webhookId: str) -> Response:
    workspace_id = await call.workspace()
    body = await call.read_update_body(workspace_id)
    webhook = await service.update(
        call.conn,
        workspace_id=workspace_id,
        webhook_id=webhookId,
        body=body,
        allow_private=_allow_private(call),
    )
    return ok(m.WEBHOOK_UPDATED, {"id": webhookId, "webhook": webhook}, headers=NO_STORE)


@routes.operation(
    "DELETE",
    PATH,
    operation_id="deleteWebhook",
    summary="Delete a webhook (its pending deliveries are dropped)",
    message=m.WEBHOOK_DELETED,
    answer=closed_object({"id": {"type": "string"}}),
    params=READ_PARAMS,
    errors=(404,),
)
async def delete_webhook(call: Call, webhookId: str) -> Response:
    workspace_id = await call.workspace()
    await service.delete(call.conn, workspace_id=workspace_id, webhook_id=webhookId)
    return ok(m.WEBHOOK_DELETED, {"id": webhookId})


async def _no_fields(call: Call) -> str:
    """The workspace of a POST without body fields (no body, `{}` or `{"workspaceId"}`);
    any other key is a 400, as on every body."""
    body = await call.read_body(required=False)
    workspace_id = await call.workspace(query=False, body=body)
    bodies.create_body(NO_FIELDS, body)
    return workspace_id


@routes.operation(
    "POST",
    f"{PATH}/rotate-secret",
    operation_id="rotateWebhookSecret",
    summary="Rotate a webhook's secret (the old one signs too for 24 h)",
    message=m.WEBHOOK_SECRET_ROTATED,
    answer=WITH_ID,
    params=POST_PARAMS,
    body=create_body_schema(NO_FIELDS),
    body_required=False,
    errors=(404,),
)
async def rotate_secret(call: Call, webhookId: str) -> Response:
    workspace_id = await _no_fields(call)
    webhook = await service.rotate_secret(
        call.conn, workspace_id=workspace_id, webhook_id=webhookId
    )
    await audit.note(call, "webhook.secret_rotated", webhookId)  # J.6; never the secret
    return ok(m.WEBHOOK_SECRET_ROTATED, {"id": webhookId, "webhook": webhook})


@routes.operation(
    "POST",
    f"{PATH}/test",
    operation_id="testWebhook",
    summary="Queue a webhook.test event for this webhook only",
    message=m.WEBHOOK_TEST_QUEUED,
    answer=closed_object(
        {
            "id": {"type": "string", "description": "The webhook."},
            "eventId": {"type": "string", "description": "The webhook.test event queued."},
        }
    ),
    params=POST_PARAMS,
    body=create_body_schema(NO_FIELDS),
    body_required=False,
    errors=(404,),
)
async def send_test(call: Call, webhookId: str) -> Response:
    workspace_id = await _no_fields(call)
    event_id = await deliveries.queue_test(
        call.conn, workspace_id=workspace_id, webhook_id=webhookId
    )
    return ok(m.WEBHOOK_TEST_QUEUED, {"id": webhookId, "eventId": event_id})


@routes.operation(
    "GET",
    f"{PATH}/deliveries",
    operation_id="listWebhookDeliveries",
    summary="A webhook's deliveries (newest first)",
    message=m.DELIVERIES_OBTAINED,
    answer=page_of("webhookId", DELIVERY_SCHEMA),
    params=DELIVERY_PARAMS,
    errors=(404, 422),
)
async def list_deliveries(call: Call, webhookId: str) -> Response:
    call.reject_unknown_query(query_names(DELIVERY_PARAMS))
    workspace_id = await call.workspace()
    rows, token = await deliveries.list_page(
        call.conn,
        await call.codec(),
        workspace_id=workspace_id,
        webhook_id=webhookId,
        query=call.request.query_params,
        token=call.query("continuationToken") or None,
    )
    page = {"webhookId": webhookId, "continuationToken": token, "data": rows}
    return ok(m.DELIVERIES_OBTAINED, page)


@routes.operation(
    "POST",
    f"{PATH}/replay",
    operation_id="replayWebhook",
    summary="Queue events again for a webhook (one event, or the feed since a time)",
    description="Give exactly one of eventId and since. Succeeded deliveries are sent again.",
    message=m.EVENTS_QUEUED,
    answer=closed_object({"queued": {"type": "integer", "minimum": 0}}),
    params=POST_PARAMS,
    body=create_body_schema(REPLAY),
    errors=(404, 422),
)
async def replay(call: Call, webhookId: str) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    queued = await deliveries.replay(
        call.conn, workspace_id=workspace_id, webhook_id=webhookId, body=body
    )
    return ok(m.EVENTS_QUEUED, {"queued": queued})
