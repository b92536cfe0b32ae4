"""Contact endpoints (contract A.2, A.3, B.3)."""

from __future__ import annotations

from typing import Any

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
from chatcrm.contacts import listing, removal, service
from chatcrm.contacts.schemas import (
    ContactActivityBody,
    ContactActivityPage,
    ContactById,
    ContactCreateBody,
    ContactPage,
    ContactUpdateBody,
    ContactWritten,
    DeleteBatchBody,
    DeleteBatchResult,
)
from chatcrm.contacts.serialize import contact_full, contact_read
from chatcrm.core import messages as m
from chatcrm.db.database import Row
from chatcrm.records.conditional import etag

router = APIRouter(tags=["contacts"])

_FILTERS = [
    query_param("q", "Substring of name, lastname, email, or phone digits."),
    query_param("stageId", "Only contacts in this stage."),
    query_param("assignedAgentId", "Only contacts assigned to this agent."),
    query_param("tag", "Only contacts with this tag id."),
    query_param("isSolved", "true or false.", schema={"type": "boolean"}),
    query_param("updatedSince", "ISO 8601: changed at or after.", schema={"format": "date-time"}),
]


@router.get(
    "/api/contact",
    operation_id="listContacts",
    summary="List contacts (newest first)",
    responses=responses(ContactPage, 400, 401, 403, 422),
    openapi_extra=operation(WORKSPACE_HEADER, WORKSPACE_QUERY, *PAGE_PARAMS, *_FILTERS),
)
async def list_contacts(call: Caller) -> Response:
    params.reject_unknown(call.request, listing.LIST_PARAMS)
    workspace_id = await call.workspace()
    q = call.query
    filters = listing.ContactFilters(
        q=params.text_param(q("q")),
        stage_id=params.text_param(q("stageId")),
        assigned_agent_id=params.text_param(q("assignedAgentId")),
        tag=params.text_param(q("tag")),
        is_solved=params.bool_param("isSolved", q("isSolved")),
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
            "data": [contact_read(row) for row in rows],
        },
    )


def _search_result(rows: list[Row]) -> dict[str, Any]:
    return {
        "contactId": rows[0]["id"] if rows else "",
        "data": [contact_read(row) for row in rows],
    }


@router.get(
    "/api/contact/searchByEmail",
    operation_id="searchContactByEmail",
    summary="Get contact by email (case-insensitive)",
    responses=responses(ContactById, 400, 401, 403, 422),
    openapi_extra=operation(
        WORKSPACE_HEADER,
        WORKSPACE_QUERY,
        query_param("email", "The address to look for.", required=True),
    ),
)
async def search_by_email(call: Caller) -> Response:
    params.reject_unknown(call.request, ("email", "workspaceId"))
    workspace_id = await call.workspace()
    rows = await listing.search_by_email(call.conn, workspace_id, call.required_query("email"))
    return ok(m.LIST_OBTAINED, _search_result(rows))


@router.get(
    "/api/contact/searchByCellphone",
    operation_id="searchContactByCellphone",
    summary="Get contact by phone (WhatsApp number or sender phone)",
    responses=responses(ContactById, 400, 401, 403, 422),
    openapi_extra=operation(
        WORKSPACE_HEADER,
        WORKSPACE_QUERY,
        query_param("cellphone", "The number, any formatting.", required=True),
    ),
)
async def search_by_cellphone(call: Caller) -> Response:
    params.reject_unknown(call.request, ("cellphone", "workspaceId"))
    workspace_id = await call.workspace()
    rows = await listing.search_by_cellphone(
        call.conn, workspace_id, call.required_query("cellphone")
    )
    return ok(m.LIST_OBTAINED, _search_result(rows))


@router.post(
    "/api/contact/delete-batch",
    operation_id="deleteContacts",
    summary="Delete contacts (soft, at most 500)",
    responses=responses(DeleteBatchResult, 400, 401, 403, 409, 413, 415, 422),
    openapi_extra=operation(WORKSPACE_HEADER, IDEMPOTENCY_KEY, body=DeleteBatchBody),
)
async def delete_contacts(call: Caller) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    result = await removal.delete_batch(
        call.conn, workspace_id=workspace_id, key_id=call.key_id, body=body
    )
    return ok(m.CONTACTS_DELETED, result)


@router.get(
    "/api/contact/{contactId}",
    operation_id="getContactById",
    summary="Get contact by contact ID",
    responses=responses(ContactById, 401, 403, 404),
    openapi_extra=operation(WORKSPACE_HEADER, WORKSPACE_QUERY),
)
async def get_contact(contactId: str, call: Caller) -> Response:
    workspace_id = await call.workspace()
    row = await service.get(call.conn, workspace_id, contactId)
    return ok(
        m.LIST_OBTAINED,
        {"contactId": contactId, "data": [contact_read(row)]},
        headers={"ETag": etag(row)},
    )


@router.put(
    "/api/contact",
    operation_id="updateContact",
    summary="Update Contact",
    responses=responses(ContactWritten, 400, 401, 403, 404, 409, 412, 413, 415, 422),
    openapi_extra=operation(
        WORKSPACE_HEADER,
        IF_MATCH,
        query_param("id", "The contact id.", required=True),
        query_param("workspaceId", "Equal to the header.", required=True),
        body=ContactUpdateBody,
    ),
)
async def update_contact(call: Caller) -> Response:
    workspace_id = await call.workspace(header_required=True, query_required=True)
    contact_id = call.required_query("id")
    body = await read_json_object(call.request)
    check_body_workspace(body, workspace_id)
    row = await service.update(
        call.conn,
        workspace_id=workspace_id,
        contact_id=contact_id,
        body=body,
        if_match=call.header("if-match"),
    )
    return ok(
        m.CONTACT_UPDATED,
        {"id": contact_id, "contact": contact_full(row)},
        headers={"ETag": etag(row)},
    )


@router.post(
    "/api/contact",
    operation_id="createContact",
    summary="Create Contact",
    responses=responses(ContactWritten, 400, 401, 403, 409, 413, 415, 422),
    openapi_extra=operation(WORKSPACE_HEADER, IDEMPOTENCY_KEY, body=ContactCreateBody),
)
async def create_contact(call: Caller) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    row = await service.create(call.conn, workspace_id=workspace_id, body=body)
    return ok(
        m.CONTACT_CREATED,
        {"id": row["id"], "contact": contact_full(row)},
        headers={"ETag": etag(row)},
    )


@router.post(
    "/api/contact/{contactId}/activities",
    operation_id="createContactActivity",
    summary="Record a contact activity",
    responses=responses(None, 400, 401, 403, 404, 409, 413, 415, 422),
    openapi_extra=operation(WORKSPACE_HEADER, IDEMPOTENCY_KEY, body=ContactActivityBody),
)
async def create_contact_activity(contactId: str, call: Caller) -> Response:
    body = await call.read_body()
    workspace_id = await call.workspace(query=False, body=body)
    await removal.add_activity(
        call.conn, workspace_id=workspace_id, contact_id=contactId, key_id=call.key_id, body=body
    )
    return ok(m.ACTIVITY_RECORDED, None)


@router.get(
    "/api/contact/{contactId}/activities",
    operation_id="listContactActivities",
    summary="A contact's activities (oldest first)",
    responses=responses(ContactActivityPage, 400, 401, 403, 404, 422),
    openapi_extra=operation(WORKSPACE_HEADER, WORKSPACE_QUERY, *PAGE_PARAMS),
)
async def list_contact_activities(contactId: str, call: Caller) -> Response:
    params.reject_unknown(call.request, ("workspaceId", "continuationToken", "pageSize"))
    workspace_id = await call.workspace()
    rows, token = await removal.list_activities(
        call.conn,
        await call.codec(),
        workspace_id=workspace_id,
        contact_id=contactId,
        token=params.text_param(call.query("continuationToken")),
        size=params.page_size(call.query("pageSize")),
    )
    return ok(
        m.ACTIVITIES_OBTAINED,
        {
            "contactId": contactId,
            "continuationToken": token,
            "data": [removal.activity(row) for row in rows],
        },
    )
