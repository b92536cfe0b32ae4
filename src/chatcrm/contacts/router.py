"""Contact endpoints (contract A.2, A.3, B.3)."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import component, page_of
from chatcrm.api.parameters import (
    IDEMPOTENCY_KEY,
    IF_MATCH,
    PAGE,
    PAGE_SIZE,
    WORKSPACE_HEADER,
    WORKSPACE_QUERY,
    filter_params,
    query_names,
)
from chatcrm.api.routing import Param, Routes
from chatcrm.contacts import activities, listing, removal
from chatcrm.contacts.fields import FIELDS
from chatcrm.contacts.kind import CONTACT
from chatcrm.core import messages as m
from chatcrm.records import activities as activity_log
from chatcrm.records import listing as lists
from chatcrm.records import writing
from chatcrm.records.conditional import etag
from chatcrm.records.fields import FULL, READ
from chatcrm.records.schemas import create_body_schema, shape_schema, update_body_schema
from chatcrm.records.statements import View

routes = Routes("contacts")

CONTACT_READ = component("ContactRead", shape_schema(FIELDS, READ))
CONTACT_FULL = component("Contact", shape_schema(FIELDS, FULL))
BY_ID = {
    "type": "object",
    "properties": {
        "contactId": {"type": "string"},
        "data": {"type": "array", "items": CONTACT_READ},
    },
    "required": ["contactId", "data"],
    "additionalProperties": False,
}
WRITTEN = {
    "type": "object",
    "properties": {"id": {"type": "string"}, "contact": CONTACT_FULL},
    "required": ["id", "contact"],
    "additionalProperties": False,
}
LIST_PARAMS = (WORKSPACE_HEADER, WORKSPACE_QUERY, *PAGE, *filter_params(listing.FILTERS))
EMAIL = Param("email", "query", "The address to look for (case-insensitive).", required=True)
CELLPHONE = Param(
    "cellphone",
    "query",
    "The number, any formatting; matches the WhatsApp or sender phone.",
    required=True,
)


@routes.operation(
    "GET",
    "/api/contact",
    operation_id="listContacts",
    summary="List contacts (newest first)",
    message=m.LIST_PAGE_OBTAINED,
    answer=page_of("workspaceId", CONTACT_READ),
    params=LIST_PARAMS,
    errors=(422,),
)
async def list_contacts(call: Call) -> Response:
    call.reject_unknown_query(query_names(LIST_PARAMS))
    workspace_id = await call.workspace()
    filtering, size = lists.read_filters(
        listing.FILTERS, call.request.query_params, call.conn.dialect
    )
    views, token = await lists.list_page(
        call.conn,
        CONTACT,
        await call.codec(),
        filters=listing.FILTERS,
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


def _found(views: list[View]) -> dict[str, Any]:
    return {"contactId": views[0].id if views else "", "data": [v.record for v in views]}


@routes.operation(
    "GET",
    "/api/contact/searchByEmail",
    operation_id="searchContactByEmail",
    summary="Get contact by email (case-insensitive)",
    message=m.LIST_OBTAINED,
    answer=BY_ID,
    params=(WORKSPACE_HEADER, WORKSPACE_QUERY, EMAIL),
    errors=(422,),
)
async def search_by_email(call: Call) -> Response:
    call.reject_unknown_query(("email", "workspaceId"))
    workspace_id = await call.workspace()
    views = await listing.search_by_email(call.conn, workspace_id, call.required_query("email"))
    return ok(m.LIST_OBTAINED, _found(views))


@routes.operation(
    "GET",
    "/api/contact/searchByCellphone",
    operation_id="searchContactByCellphone",
    summary="Get contact by phone (WhatsApp number or sender phone)",
    message=m.LIST_OBTAINED,
    answer=BY_ID,
    params=(WORKSPACE_HEADER, WORKSPACE_QUERY, CELLPHONE),
    errors=(422,),
)
async def search_by_cellphone(call: Call) -> Response:
    call.reject_unknown_query(("cellphone", "workspaceId"))
    workspace_id = await call.workspace()
    views = await listing.search_by_cellphone(
        call.conn, workspace_id, call.required_query("cellphone")
    )
    return ok(m.LIST_OBTAINED, _found(views))


@routes.operation(
    "POST",
    "/api/contact/delete-batch",
    operation_id="deleteContacts",
    summary=f"Delete contacts (soft, at most {removal.MAX_BATCH})",
    message=m.CONTACTS_DELETED,
    answer={
        "type": "object",
        "properties": {
            "deletedIds": {"type": "array", "items": {"type": "string"}},
            "notFoundIds": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["deletedIds", "notFoundIds"],
        "additionalProperties": False,
    },
    params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
    body=create_body_schema(removal.BODY),
    errors=(422,),
)
async def delete_contacts(call: Call) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    result = await removal.delete_batch(
        call.conn, workspace_id=workspace_id, key_id=call.key_id, body=body
    )
    return ok(m.CONTACTS_DELETED, result)


@routes.operation(
    "GET",
    "/api/contact/{contactId}",
    operation_id="getContactById",
    summary="Get contact by contact ID",
    message=m.LIST_OBTAINED,
    answer=BY_ID,
    params=(WORKSPACE_HEADER, WORKSPACE_QUERY),
    errors=(404,),
    etag=True,
)
async def get_contact(call: Call, contactId: str) -> Response:
    workspace_id = await call.workspace()
    view = await writing.get(call.conn, CONTACT, workspace_id, contactId, shape=READ)
    return ok(
        m.LIST_OBTAINED,
        {"contactId": contactId, "data": [view.record]},
        headers={"ETag": etag(view.version)},
    )


@routes.operation(
    "PUT",
    "/api/contact",
    operation_id="updateContact",
    summary="Update Contact",
    message=m.CONTACT_UPDATED,
    answer=WRITTEN,
    params=(
        WORKSPACE_HEADER.but(required=True),
        IF_MATCH,
        Param("id", "query", "The contact id.", required=True),
        WORKSPACE_QUERY.but(required=True, description="The workspace; equal to the header."),
    ),
    body=update_body_schema(FIELDS),
    errors=(404, 409, 412, 422),
    etag=True,
)
async def update_contact(call: Call) -> Response:
    workspace_id = await call.workspace(header_required=True, query_required=True)
    contact_id = call.required_query("id")
    body = await call.read_update_body(workspace_id)
    view = await writing.update(
        call.conn,
        CONTACT,
        workspace_id=workspace_id,
        record_id=contact_id,
        body=body,
        if_match=call.header("if-match"),
    )
    return ok(
        m.CONTACT_UPDATED,
        {"id": contact_id, "contact": view.record},
        headers={"ETag": etag(view.version)},
    )


@routes.operation(
    "POST",
    "/api/contact",
    operation_id="createContact",
    summary="Create Contact",
    message=m.CONTACT_CREATED,
    answer=WRITTEN,
    params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
    body=create_body_schema(FIELDS),
    errors=(409, 422),
    etag=True,
)
async def create_contact(call: Call) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    view = await writing.create(
        call.conn, CONTACT, workspace_id=workspace_id, key_id=call.key_id, body=body
    )
    return ok(
        m.CONTACT_CREATED,
        {"id": view.id, "contact": view.record},
        headers={"ETag": etag(view.version)},
    )


@routes.operation(
    "POST",
    "/api/contact/{contactId}/activities",
    operation_id="createContactActivity",
    summary="Record a contact activity",
    message=m.ACTIVITY_RECORDED,
    answer=None,
    params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
    body=create_body_schema(activities.FIELDS),
    errors=(404, 422),
)
async def create_contact_activity(call: Call, contactId: str) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    await activity_log.add(
        call.conn,
        activities.CONTACT_ACTIVITIES,
        workspace_id=workspace_id,
        record_id=contactId,
        key_id=call.key_id,
        body=body,
    )
    return ok(m.ACTIVITY_RECORDED, None)


ACTIVITY_PARAMS = (WORKSPACE_HEADER, WORKSPACE_QUERY, *PAGE)


@routes.operation(
    "GET",
    "/api/contact/{contactId}/activities",
    operation_id="listContactActivities",
    summary="A contact's activities (oldest first)",
    message=m.ACTIVITIES_OBTAINED,
    answer=page_of(
        "contactId", component("ContactActivity", shape_schema(activities.FIELDS, FULL))
    ),
    params=ACTIVITY_PARAMS,
    errors=(404, 422),
)
async def list_contact_activities(call: Call, contactId: str) -> Response:
    call.reject_unknown_query(query_names(ACTIVITY_PARAMS))
    workspace_id = await call.workspace()
    codec = await call.codec()
    token = call.query("continuationToken") or None
    size = lists.read_page_size(call.query(PAGE_SIZE.name))
    rows, next_token = await activity_log.list_page(
        call.conn,
        activities.CONTACT_ACTIVITIES,
        codec,
        workspace_id=workspace_id,
        record_id=contactId,
        token=token,
        size=size,
    )
    return ok(
        m.ACTIVITIES_OBTAINED,
        {"contactId": contactId, "continuationToken": next_token, "data": rows},
    )
