"""Contact endpoints (contract A.2, A.3, B.3)."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from chatcrm.api import messages as m
from chatcrm.api.body import read_json_object
from chatcrm.api.conditional import etag
from chatcrm.api.deps import (
    Caller,
    Db,
    IfMatch,
    WorkspaceHeader,
    check_body_workspace,
    require_query,
    select_workspace,
)
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import json_body, responses
from chatcrm.contacts import service
from chatcrm.contacts.schemas import (
    ContactById,
    ContactCreateBody,
    ContactUpdateBody,
    ContactWritten,
)
from chatcrm.contacts.serialize import contact_full, contact_read

router = APIRouter(tags=["contacts"])


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
