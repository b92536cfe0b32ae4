"""Message endpoints (contract K.1): the conversation, send, record, read, retry, media."""

from __future__ import annotations

from urllib.parse import quote

from starlette.background import BackgroundTask
from starlette.responses import Response, StreamingResponse

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import closed_object, component
from chatcrm.api.parameters import IDEMPOTENCY_KEY, WORKSPACE_HEADER, WORKSPACE_QUERY, query_names
from chatcrm.api.routing import Param, Routes
from chatcrm.api.static_files import NOSNIFF
from chatcrm.channels import graph
from chatcrm.channels import repository as channels
from chatcrm.channels.sending import http_client
from chatcrm.contacts.kind import CONTACT
from chatcrm.core import messages as m
from chatcrm.core.errors import ServiceUnavailable
from chatcrm.core.jsontext import load_exact
from chatcrm.messages import bodies, service
from chatcrm.messages.errors import MediaGone, NoMedia
from chatcrm.messages.record import SCHEMA
from chatcrm.records import visibility
from chatcrm.records.types import Schema

routes = Routes("messages")

MESSAGE_SCHEMA = component("Message", SCHEMA)
CONVERSATION = "/api/contact/{contactId}/messages"
READ_PARAMS = (WORKSPACE_HEADER, WORKSPACE_QUERY)
POST_PARAMS = (WORKSPACE_HEADER, IDEMPOTENCY_KEY)
PAGE_PARAMS = (
    *READ_PARAMS,
    Param("before", "query", "A message id: the page of messages older than it."),
    Param(
        "pageSize",
        "query",
        f"1 to {service.PAGE_SIZE_MAX} (default {service.PAGE_SIZE_DEFAULT}).",
        schema={"type": "integer", "minimum": 1, "maximum": service.PAGE_SIZE_MAX},
    ),
)


WITH_ID = closed_object({"id": {"type": "string"}, "message": MESSAGE_SCHEMA})
NO_FIELDS: Schema = {
    "type": "object",
    "properties": {"workspaceId": {"type": "string"}},
    "additionalProperties": False,
}


async def _contact(call: Call, contact_id: str, workspace_id: str) -> None:
    await visibility.check(call.conn, CONTACT, workspace_id, contact_id)


@routes.operation(
    "GET",
    CONVERSATION,
    operation_id="listMessages",
    summary="A contact's conversation (newest page first; each page oldest first)",
    message=m.MESSAGES_OBTAINED,
    answer=closed_object(
        {
            "contactId": {"type": "string"},
            "messages": {"type": "array", "items": MESSAGE_SCHEMA},
            "before": {
                "type": ["string", "null"],
                "description": "Pass as `before` for the older page; null at the first message.",
            },
        }
    ),
    params=PAGE_PARAMS,
    errors=(404, 422),
)
async def list_messages(call: Call, contactId: str) -> Response:
    call.reject_unknown_query(query_names(PAGE_PARAMS))
    workspace_id = await call.workspace()
    size = service.page_size(call.query("pageSize"))
    await _contact(call, contactId, workspace_id)
    page = await service.conversation(
        call.conn,
        workspace_id=workspace_id,
        contact_id=contactId,
        before=call.query("before") or None,
        size=size,
    )
    return ok(m.MESSAGES_OBTAINED, page)


@routes.operation(
    "POST",
    CONVERSATION,
    operation_id="sendMessage",
    summary="Send a WhatsApp message (text within 24 h of the last inbound one, or a template)",
    message=m.MESSAGE_QUEUED,
    answer=WITH_ID,
    params=POST_PARAMS,
    body=bodies.SEND_SCHEMA,
    errors=(404, 422),
)
async def send_message(call: Call, contactId: str) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    send = bodies.send_body(body)
    await _contact(call, contactId, workspace_id)
    message = await service.queue(
        call.conn,
        workspace_id=workspace_id,
        contact_id=contactId,
        send=send,
        actor=call.principal.actor(),
        sending_channel=await channels.sending(call.conn, workspace_id),
    )
    return ok(m.MESSAGE_QUEUED, {"id": message["id"], "message": message})


@routes.operation(
    "POST",
    f"{CONVERSATION}/record",
    operation_id="recordMessage",
    summary="Record a message exchanged elsewhere, without sending it",
    message=m.MESSAGE_RECORDED,
    answer=WITH_ID,
    params=POST_PARAMS,
    body=bodies.RECORD_SCHEMA,
    errors=(404, 422),
)
async def record_message(call: Call, contactId: str) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    given = bodies.record_body(body)
    await _contact(call, contactId, workspace_id)
    message = await service.record(
        call.conn,
        workspace_id=workspace_id,
        contact_id=contactId,
        given=given,
        actor=call.principal.actor(),
    )
    return ok(m.MESSAGE_RECORDED, {"id": message["id"], "message": message})


@routes.operation(
    "POST",
    f"{CONVERSATION}/read",
    operation_id="markConversationRead",
    summary="Mark the conversation read (isRead true; a read receipt for WhatsApp)",
    message=m.CONVERSATION_READ,
    answer=closed_object({"contactId": {"type": "string"}, "isRead": {"type": "boolean"}}),
    params=POST_PARAMS,
    body=NO_FIELDS,
    body_required=False,
    errors=(404,),
)
async def mark_read(call: Call, contactId: str) -> Response:
    body = await call.read_body(required=False)
    workspace_id = await call.workspace(query=False, body=body)
    bodies.no_fields(body)
    await _contact(call, contactId, workspace_id)
    await service.mark_read(call.conn, workspace_id=workspace_id, contact_id=contactId)
    return ok(m.CONVERSATION_READ, {"contactId": contactId, "isRead": True})


@routes.operation(
    "POST",
    "/api/message/{messageId}/retry",
    operation_id="retryMessage",
    summary="Queue a failed outbound message again (the same message)",
    message=m.MESSAGE_RETRIED,
    answer=WITH_ID,
    params=POST_PARAMS,
    body=NO_FIELDS,
    body_required=False,
    errors=(404, 409),
)
async def retry_message(call: Call, messageId: str) -> Response:
    body = await call.read_body(required=False)
    workspace_id = await call.workspace(query=False, body=body)
    bodies.no_fields(body)
    message = await service.retry(
        call.conn,
        workspace_id=workspace_id,
        message_id=messageId,
        sending_channel=await channels.sending(call.conn, workspace_id),
    )
    return ok(m.MESSAGE_RETRIED, {"id": messageId, "message": message})


@routes.operation(
    "GET",
    "/api/message/{messageId}/media",
    operation_id="getMessageMedia",
    summary="The bytes of a message's media, fetched through its channel",
    message="",
    answer=None,
    params=READ_PARAMS,
    errors=(404, 503),
    enveloped=False,
    content_type="application/octet-stream",
    binary=True,
    description=(
        "Streamed with the media's own content type; shown inline only when it is a "
        "picture, sound or video (else a download), never run (Content-Security-Policy "
        "sandbox, nosniff)."
    ),
)
async def get_media(call: Call, messageId: str) -> Response:
    workspace_id = await call.workspace()
    row = await service.get_row(call.conn, workspace_id, messageId)
    media = load_exact(row["media"]) if row["media"] else None
    if not media or not media.get("id") or row["channel_id"] is None:
        raise NoMedia(messageId)
    channel = await channels.get(call.conn, workspace_id, row["channel_id"])
    if channel is None:
        raise NoMedia(messageId)
    # The answer streams after the request's transaction ends: nothing is held meanwhile.
    await call.conn.commit()
    settings = call.request.app.state.settings
    client = http_client(settings)
    try:
        kind, chunks, answer = await graph.media(
            client,
            graph.Access.of(channel),
            media["id"],
            allow_private=settings.webhook_allow_private,
        )
    except graph.MediaUnavailable as exc:
        await client.aclose()
        if exc.gone:  # expired or deleted at the channel: there is no media to give
            raise MediaGone(messageId, str(exc)) from exc
        raise ServiceUnavailable(f"The channel could not give this media: {exc}") from exc

    async def close() -> None:
        await answer.aclose()
        await client.aclose()

    # The content type as the channel gave it (media_type would add "; charset=utf-8" to
    # a text/* one: a claim about bytes that are not this service's).
    return StreamingResponse(
        chunks,
        headers={"content-type": kind, **_media_headers(kind, media.get("fileName"))},
        background=BackgroundTask(close),
    )


# What a sender's file may be shown as, in the service's own origin: pictures, sound and
# video. Anything else (an HTML page, an SVG, a PDF) is a download: opened in a tab of this
# origin, a page a customer sent would run with the reader's session.
_SHOWN_INLINE = ("image/jpeg", "image/png", "image/gif", "image/webp", "audio/", "video/")
# And whatever it is, it runs nothing, loads nothing, and is not sniffed into something
# else (as raw files are served by code hosts).
_MEDIA_POLICY = "default-src 'none'; style-src 'unsafe-inline'; sandbox"


def _media_headers(kind: str, file_name: object) -> dict[str, str]:
    inline = kind.lower().startswith(_SHOWN_INLINE)
    disposition = "inline" if inline else "attachment"
    if isinstance(file_name, str) and file_name:
        disposition += f"; filename*=UTF-8''{quote(file_name, safe='')}"
    return {
        "Content-Disposition": disposition,
        "Content-Security-Policy": _MEDIA_POLICY,
        **NOSNIFF,
    }
