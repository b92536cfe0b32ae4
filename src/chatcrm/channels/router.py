"""Channel endpoints (contract K.2): create, list, get, update, delete. Their audit entries
name the channel, never a secret (J.6)."""

from __future__ import annotations

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import NO_STORE, ok
from chatcrm.api.openapi import closed_object, component
from chatcrm.api.parameters import IDEMPOTENCY_KEY, WORKSPACE_HEADER, WORKSPACE_QUERY, query_names
from chatcrm.api.routing import Routes
from chatcrm.channels import service
from chatcrm.channels.fields import CHANNEL, SHAPE
from chatcrm.core import messages as m
from chatcrm.people import audit
from chatcrm.records.schemas import create_body_schema, shape_schema, update_body_schema
from chatcrm.records.types import Schema

routes = Routes("channels")


def _channel_schema() -> Schema:
    schema = shape_schema(CHANNEL, SHAPE)
    properties = {}
    for key, value in schema["properties"].items():
        properties[key] = value
        if key == "verifyToken":
            properties["webhookUrl"] = {
                "type": "string",
                "description": "Paste into Meta's dashboard: {CHATCRM_PUBLIC_URL}/channels/"
                "whatsapp/{id}.",
            }
    required = list(properties)
    return {**schema, "properties": properties, "required": required}


CHANNEL_SCHEMA = component("Channel", _channel_schema())
PATH = "/api/channel/{channelId}"
READ_PARAMS = (WORKSPACE_HEADER, WORKSPACE_QUERY)
POST_PARAMS = (WORKSPACE_HEADER, IDEMPOTENCY_KEY)


WITH_ID = closed_object({"id": {"type": "string"}, "channel": CHANNEL_SCHEMA})


def _settings(call: Call) -> tuple[bool, str]:
    settings = call.request.app.state.settings
    return bool(settings.webhook_allow_private), str(settings.base_url)


@routes.operation(
    "POST",
    "/api/channel",
    operation_id="createChannel",
    summary="Connect a WhatsApp Business number (accessToken and appSecret are write-only)",
    message=m.CHANNEL_CREATED,
    answer=WITH_ID,
    params=POST_PARAMS,
    body=create_body_schema(CHANNEL),
    errors=(409, 422),
)
async def create_channel(call: Call) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    allow_private, base_url = _settings(call)
    channel = await service.create(
        call.conn,
        workspace_id=workspace_id,
        body=body,
        allow_private=allow_private,
        base_url=base_url,
    )
    await audit.note(call, "channel.created", channel["id"])
    return ok(m.CHANNEL_CREATED, {"id": channel["id"], "channel": channel})


@routes.operation(
    "GET",
    "/api/channel",
    operation_id="listChannels",
    summary="List the workspace's channels (oldest first)",
    message=m.CHANNELS_OBTAINED,
    answer=closed_object({"data": {"type": "array", "items": CHANNEL_SCHEMA}}),
    params=READ_PARAMS,
)
async def list_channels(call: Call) -> Response:
    call.reject_unknown_query(query_names(READ_PARAMS))
    workspace_id = await call.workspace()
    listed = await service.list_all(
        call.conn, workspace_id=workspace_id, base_url=_settings(call)[1]
    )
    return ok(m.CHANNELS_OBTAINED, {"data": listed}, headers=NO_STORE)


@routes.operation(
    "GET",
    PATH,
    operation_id="getChannel",
    summary="Get a channel",
    message=m.CHANNEL_OBTAINED,
    answer=WITH_ID,
    params=READ_PARAMS,
    errors=(404,),
)
async def get_channel(call: Call, channelId: str) -> Response:
    workspace_id = await call.workspace()
    channel = await service.get(
        call.conn, workspace_id=workspace_id, channel_id=channelId, base_url=_settings(call)[1]
    )
    return ok(m.CHANNEL_OBTAINED, {"id": channelId, "channel": channel}, headers=NO_STORE)


@routes.operation(
    "PUT",
    PATH,
    operation_id="updateChannel",
    summary="Update a channel (paramToUpdate)",
    message=m.CHANNEL_UPDATED,
    answer=WITH_ID,
    params=READ_PARAMS,
    body=update_body_schema(CHANNEL, implicit=True),
    errors=(404, 422),
)
async def update_channel(call: Call, channelId: str) -> Response:
    workspace_id = await call.workspace()
    body = await call.read_update_body(workspace_id)
    allow_private, base_url = _settings(call)
    channel, _ = await service.update(
        call.conn,
        workspace_id=workspace_id,
        channel_id=channelId,
        body=body,
        allow_private=allow_private,
        base_url=base_url,
    )
    await audit.note(call, "channel.updated", channelId)
    return ok(m.CHANNEL_UPDATED, {"id": channelId, "channel": channel}, headers=NO_STORE)


@routes.operation(
    "DELETE",
    PATH,
    operation_id="deleteChannel",
    summary="Delete a channel (its messages stay)",
    message=m.CHANNEL_DELETED,
    answer=closed_object({"id": {"type": "string"}}),
    params=READ_PARAMS,
    errors=(404,),
)
async def delete_channel(call: Call, channelId: str) -> Response:
    workspace_id = await call.workspace()
    await service.delete(call.conn, workspace_id=workspace_id, channel_id=channelId)
    await audit.note(call, "channel.deleted", channelId)
    return ok(m.CHANNEL_DELETED, {"id": channelId})
