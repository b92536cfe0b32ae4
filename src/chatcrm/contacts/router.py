"""Contact endpoints (contract A.2, A.3, B.3)."""

from __future__ import annotations

from typing import Any

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
from chatcrm.db.database import Row

router = APIRouter(tags=["contacts"])

_WS_QUERY = Query(default=None, description="The workspace (or send x-workspace-id).")


@router.get(
    "/api/contact",
    operation_id="listContacts",
    summary="List contacts (newest first)",
    responses=responses(ContactPage, 400, 401, 403, 422),
)
async def list_contacts(
    request: Request,
    caller: Caller,
    db: Db,
    codec: Codec,
    x_workspace_id: WorkspaceHeader = None,
    workspaceId: str | None = _WS_QUERY,
    continuationToken: str | None = Query(default=None),
    pageSize: str | None = Query(default=None, description="1 to 100; default 20."),
    q: str | None = Query(default=None, description="In name, lastname, email or phone."),
    stageId: str | None = Query(default=None),
    assignedAgentId: str | None = Query(default=None),
    tag: str | None = Query(default=None, description="A tag id."),
    isSolved: str | None = Query(default=None, description="true or false."),
    updatedSince: str | None = Query(default=None, description="ISO 8601 date-time."),
) -> Response:
    params.reject_unknown(request, listing.LIST_PARAMS)
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, query=workspaceId)
    filters = listing.ContactFilters(
        q=params.text_param(q),
        stage_id=params.text_param(stageId),
        assigned_agent_id=params.text_param(assignedAgentId),
        tag=params.text_param(tag),
        is_solved=params.bool_param("isSolved", isSolved),
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
)
async def search_by_email(
    request: Request,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
    email: str | None = Query(default=None, description="Required."),
    workspaceId: str | None = _WS_QUERY,
) -> Response:
    params.reject_unknown(request, ("email", "workspaceId"))
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, query=workspaceId)
    rows = await listing.search_by_email(db, workspace_id, require_query("email", email))
    return ok(m.LIST_OBTAINED, _search_result(rows))


@router.get(
    "/api/contact/searchByCellphone",
    operation_id="searchContactByCellphone",
    summary="Get contact by phone (WhatsApp number or sender phone)",
    responses=responses(ContactById, 400, 401, 403, 422),
)
async def search_by_cellphone(
    request: Request,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
    cellphone: str | None = Query(default=None, description="Required; any formatting."),
    workspaceId: str | None = _WS_QUERY,
) -> Response:
    params.reject_unknown(request, ("cellphone", "workspaceId"))
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, query=workspaceId)
    rows = await listing.search_by_cellphone(
        db, workspace_id, require_query("cellphone", cellphone)
    )
    return ok(m.LIST_OBTAINED, _search_result(rows))


@router.post(
    "/api/contact/delete-batch",
    operation_id="deleteContacts",
    summary="Delete contacts (soft, at most 500)",
    responses=responses(DeleteBatchResult, 400, 401, 403, 413, 415, 422),
    openapi_extra=json_body(DeleteBatchBody),
)
async def delete_contacts(
    request: Request,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
) -> Response:
    body = await read_json_object(request)
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, body=body)
    result = await removal.delete_batch(
        db, workspace_id=workspace_id, key_id=caller.key_id, body=body
    )
    return ok(m.CONTACTS_DELETED, result)


@router.get(
    "/api/contact/{contactId}",
    operation_id="getContactById",
    summary="Get contact by contact ID",
    responses=responses(ContactById, 401, 403, 404),
)
async def get_contact(
    request: Request,
    contactId: str,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
    workspaceId: str | None = Query(default=None),
) -> Response:
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, query=workspaceId)
    row = await service.get(db, workspace_id, contactId)
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
    openapi_extra=json_body(ContactUpdateBody),
)
async def update_contact(
    request: Request,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
    if_match: IfMatch = None,
    id: str | None = Query(default=None, description="The contact id (required)."),
    workspaceId: str | None = Query(default=None, description="Required; equal to the header."),
) -> Response:
    workspace_id = await select_workspace(
        request,
        caller,
        header=x_workspace_id,
        query=workspaceId,
        header_required=True,
        query_required=True,
    )
    contact_id = require_query("id", id)
    body = await read_json_object(request)
    check_body_workspace(body, workspace_id)
    row = await service.update(
        db, workspace_id=workspace_id, contact_id=contact_id, body=body, if_match=if_match
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
    openapi_extra=json_body(ContactCreateBody),
)
async def create_contact(
    request: Request,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
) -> Response:
    body = await read_json_object(request)
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, body=body)
    row = await service.create(db, workspace_id=workspace_id, body=body)
    return ok(
        m.CONTACT_CREATED,
        {"id": row["id"], "contact": contact_full(row)},
        headers={"ETag": etag(row)},
    )


@router.post(
    "/api/contact/{contactId}/activities",
    operation_id="createContactActivity",
    summary="Record a contact activity",
    responses=responses(None, 400, 401, 403, 404, 413, 415, 422),
    openapi_extra=json_body(ContactActivityBody),
)
async def create_contact_activity(
    request: Request,
    contactId: str,
    caller: Caller,
    db: Db,
    x_workspace_id: WorkspaceHeader = None,
) -> Response:
    body = await read_json_object(request)
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, body=body)
    await removal.add_activity(
        db, workspace_id=workspace_id, contact_id=contactId, key_id=caller.key_id, body=body
    )
    return ok(m.ACTIVITY_RECORDED, None)


@router.get(
    "/api/contact/{contactId}/activities",
    operation_id="listContactActivities",
    summary="A contact's activities (oldest first)",
    responses=responses(ContactActivityPage, 400, 401, 403, 404, 422),
)
async def list_contact_activities(
    request: Request,
    contactId: str,
    caller: Caller,
    db: Db,
    codec: Codec,
    x_workspace_id: WorkspaceHeader = None,
    workspaceId: str | None = _WS_QUERY,
    continuationToken: str | None = Query(default=None),
    pageSize: str | None = Query(default=None, description="1 to 100; default 20."),
) -> Response:
    params.reject_unknown(request, ("workspaceId", "continuationToken", "pageSize"))
    workspace_id = await select_workspace(request, caller, header=x_workspace_id, query=workspaceId)
    rows, token = await removal.list_activities(
        db,
        codec,
        workspace_id=workspace_id,
        contact_id=contactId,
        token=params.text_param(continuationToken),
        size=params.page_size(pageSize),
    )
    return ok(
        m.ACTIVITIES_OBTAINED,
        {
            "contactId": contactId,
            "continuationToken": token,
            "data": [removal.activity(row) for row in rows],
        },
    )
