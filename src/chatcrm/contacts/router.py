"""Contact endpoints (contract A.2, A.3, B.3): the record operations (api/record_routes.py),
the searches, the batch delete and the activity log."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import FIELD_ERROR, component, page_of
from chatcrm.api.parameters import (
    IDEMPOTENCY_KEY,
    IF_MATCH,
    PAGE,
    PAGE_SIZE,
    WORKSPACE_HEADER,
    WORKSPACE_QUERY,
    query_names,
)
from chatcrm.api.record_routes import (
    RecordApi,
    add_activity_operation,
    add_delete_operation,
    add_record_operations,
    add_restore_operation,
)
from chatcrm.api.routing import Param, Routes
from chatcrm.contacts import activities, listing, merge, removal, upsert
from chatcrm.contacts.fields import FIELDS
from chatcrm.contacts.kind import CONTACT
from chatcrm.core import messages as m
from chatcrm.records import activities as activity_log
from chatcrm.records import listing as lists
from chatcrm.records import visibility
from chatcrm.records.conditional import etag
from chatcrm.records.fields import FULL, READ
from chatcrm.records.schemas import create_body_schema, shape_schema
from chatcrm.records.statements import View

routes = Routes("contacts")

CONTACT_READ = component("ContactRead", shape_schema(FIELDS, READ))
FOUND = {
    "type": "object",
    "properties": {
        "contactId": {"type": "string", "description": "The first match, or empty."},
        "data": {"type": "array", "items": CONTACT_READ},
    },
    "required": ["contactId", "data"],
    "additionalProperties": False,
}


def _found(views: list[View]) -> dict[str, Any]:
    return {"contactId": views[0].id if views else "", "data": [v.record for v in views]}


@routes.operation(
    "GET",
    "/api/contact/searchByEmail",
    operation_id="searchContactByEmail",
    summary="Get contact by email (case-insensitive)",
    message=m.LIST_OBTAINED,
    answer=FOUND,
    params=(
        WORKSPACE_HEADER,
        WORKSPACE_QUERY,
        Param("email", "query", "The address to look for (any case).", required=True),
    ),
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
    answer=FOUND,
    params=(
        WORKSPACE_HEADER,
        WORKSPACE_QUERY,
        Param("cellphone", "query", "The number, any formatting.", required=True),
    ),
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


_ERRORS = {"type": "array", "items": FIELD_ERROR}
# An item is a Create Contact body (a match needs no name). The request is accepted
# whatever its items hold: an item that is no such body fails alone, and its result says
# why (E.2), so the document allows anything there too, as the server does.
_ITEM = {
    "anyOf": [
        {**create_body_schema(FIELDS), "required": []},
        {"description": "Anything else is accepted too; the item then fails, alone."},
    ]
}


@routes.operation(
    "POST",
    "/api/contact/upsert-batch",
    operation_id="upsertContacts",
    summary=f"Create or update contacts, matched by phone or email (at most {upsert.MAX_ITEMS})",
    description="Each item is atomic on its own; with `dryRun`, nothing is written.",
    message=m.CONTACTS_UPSERTED,
    answer={
        "type": "object",
        "properties": {
            **{n: {"type": "integer"} for n in upsert.STATUSES},
            "results": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "index": {"type": "integer"},
                        "status": {"type": "string", "enum": list(upsert.STATUSES)},
                        "id": {"type": ["string", "null"]},
                        "errors": _ERRORS,
                    },
                    "required": ["index", "status", "id", "errors"],
                    "additionalProperties": False,
                },
            },
        },
        "required": [*upsert.STATUSES, "results"],
        "additionalProperties": False,
    },
    params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
    body={
        "type": "object",
        "properties": {
            "workspaceId": {"type": "string"},
            "matchBy": {"type": "string", "enum": list(upsert.MATCH_BY), "default": "auto"},
            "dryRun": {"type": "boolean", "default": False},
            "contacts": {
                "type": "array",
                "minItems": 1,
                "maxItems": upsert.MAX_ITEMS,
                "items": _ITEM,
            },
        },
        "required": ["contacts"],
        "additionalProperties": False,
    },
    errors=(422,),
)
async def upsert_contacts(call: Call) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    result = await upsert.upsert_batch(
        call.conn, workspace_id=workspace_id, key_id=call.key_id, body=body
    )
    return ok(m.CONTACTS_UPSERTED, result)


# After the searches: `/api/contact/searchByEmail` is not a contact id.
add_record_operations(
    routes,
    RecordApi(
        kind=CONTACT,
        path="/api/contact",
        id_param="contactId",
        filters=listing.FILTERS,
        read_schema=CONTACT_READ,
        written_schema=component("Contact", shape_schema(FIELDS, FULL)),
        operation_ids=("listContacts", "getContactById", "updateContact", "createContact"),
        summaries=(
            "List contacts (newest first)",
            "Get contact by contact ID",
            "Update Contact",
            "Create Contact",
        ),
        updated=(m.CONTACT_UPDATED, "contact"),
        created=(m.CONTACT_CREATED, "contact"),
        update_errors=(409,),
        update_workspace_query_required=True,
    ),
)
add_activity_operation(
    routes,
    activities.CONTACT_ACTIVITIES,
    path="/api/contact/{contactId}/activities",
    id_param="contactId",
    operation_id="createContactActivity",
)
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
    await visibility.check(call.conn, CONTACT, workspace_id, contactId)
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


# --- contract E.2: one contact's delete, restore and merge --------------------------------


add_delete_operation(
    routes,
    CONTACT,
    path="/api/contact/{contactId}",
    id_param="contactId",
    operation_id="deleteContact",
    message=m.CONTACT_DELETED,
)
add_restore_operation(
    routes,
    CONTACT,
    path="/api/contact/{contactId}/restore",
    id_param="contactId",
    operation_id="restoreContact",
    restored=(m.CONTACT_RESTORED, "contact"),
    written_schema=component("Contact", shape_schema(FIELDS, FULL)),
    errors=(409,),
)


@routes.operation(
    "POST",
    "/api/contact/merge",
    operation_id="mergeContacts",
    summary=f"Merge up to {merge.MAX_DUPLICATES} duplicate contacts into one",
    description=(
        "All or nothing. The primary keeps its values and fills its empty ones from the "
        "duplicates (in the order given); tags and variables are united; activities and "
        "live opportunities move to the primary; the duplicates are deleted (soft). "
        "If-Match applies to the primary."
    ),
    message=m.CONTACTS_MERGED,
    answer={
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "contact": component("Contact", shape_schema(FIELDS, FULL)),
        },
        "required": ["id", "contact"],
        "additionalProperties": False,
    },
    params=(WORKSPACE_HEADER, IF_MATCH, IDEMPOTENCY_KEY),
    body=create_body_schema(merge.BODY),
    errors=(404, 412, 422),
    etag=True,
)
async def merge_contacts(call: Call) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    if visibility.current() is not None:  # every contact named must be one the agent sees
        named = [body.get("primaryId"), *(body.get("duplicateIds") or [])]
        for contact_id in named:
            if isinstance(contact_id, str):
                await visibility.check(call.conn, CONTACT, workspace_id, contact_id)
    view = await merge.merge(
        call.conn,
        workspace_id=workspace_id,
        key_id=call.key_id,
        body=body,
        if_match=call.if_match(),
    )
    return ok(
        m.CONTACTS_MERGED,
        {"id": view.id, "contact": view.record},
        headers={"ETag": etag(view.version)},
    )
