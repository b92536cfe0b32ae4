"""The operations every record kind has (list, get by id, update, create, add an activity),
written once; a feature declares what is its own (paths, names, messages, answer keys).

Each endpoint reads its request in the contract's order (docs/api.md 1.9).
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.responses import Response

from chatcrm.api.board_routes import ContactNames, add_board_operation
from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import page_of
from chatcrm.api.parameters import (
    IDEMPOTENCY_KEY,
    IF_MATCH,
    PAGE,
    PAGE_SIZE,
    SHAPE,
    WORKSPACE_HEADER,
    WORKSPACE_QUERY,
    filter_params,
    query_names,
)
from chatcrm.api.routing import Param, Routes
from chatcrm.core import messages as m
from chatcrm.core.errors import BadRequest
from chatcrm.core.ids import is_id
from chatcrm.events import reading
from chatcrm.events.router import AFTER, events_page
from chatcrm.records import activities as activity_log
from chatcrm.records import listing, restore, statements, visibility, writing
from chatcrm.records.activities import ActivityKind
from chatcrm.records.conditional import etag
from chatcrm.records.kind import RecordKind
from chatcrm.records.listing import Filter
from chatcrm.records.schemas import WORKSPACE_ID, create_body_schema, update_body_schema
from chatcrm.records.types import Schema


@dataclass(frozen=True)
class RecordApi:
    """What the shared operations of one record kind are called and answer."""

    kind: RecordKind
    path: str  # `/api/contact`: lists, updates and creates; `/{id_param}` below it: gets
    id_param: str  # the path parameter, and the id key of a get's answer
    filters: tuple[Filter, ...]
    read_schema: Schema  # the record in its read shape (gets, lists)
    written_schema: Schema  # the record as updates and creates answer it
    operation_ids: tuple[str, str, str, str]  # list, get, update, create
    summaries: tuple[str, str, str, str]
    updated: tuple[str, str]  # the update's message, and its answer's record key
    created: tuple[str, str]  # the create's message, and its answer's record key
    update_errors: tuple[int, ...]  # beyond 404, 412 and 422
    update_workspace_query_required: bool = False
    update_description: str = ""
    board_total: str | None = None  # the money column a board column totals (opportunities)
    # Names of the contacts a board's cards link to (opportunities): (conn, workspace, ids).
    board_contact_names: ContactNames | None = None


def _with_id(id_key: str, key: str, schema: Schema) -> Schema:
    return {
        "type": "object",
        "properties": {id_key: {"type": "string"}, key: schema},
        "required": [id_key, key],
        "additionalProperties": False,
    }


def add_record_operations(routes: Routes, api: RecordApi) -> None:
    kind, list_params = (
        api.kind,
        (WORKSPACE_HEADER, WORKSPACE_QUERY, *PAGE, SHAPE, *filter_params(api.filters)),
    )

    async def list_records(call: Call) -> Response:
        call.reject_unknown_query(query_names(list_params))
        workspace_id = await call.workspace()
        query = call.request.query_params
        filtering, size = listing.read_filters(api.filters, query, call.conn.dialect)
        views, token = await listing.list_page(
            call.conn,
            kind,
            await call.codec(),
            filters=api.filters,
            workspace_id=workspace_id,
            filtering=filtering,
            token=call.query("continuationToken") or None,
            size=size,
        )
        records = [v.record for v in views]
        page = {"workspaceId": workspace_id, "continuationToken": token, "data": records}
        return ok(m.LIST_PAGE_OBTAINED, page)

    async def get_record(call: Call, **path: str) -> Response:
        # Other query parameters are ignored, as on updates and deletes (docs/api.md 5.19).
        record_id = path[api.id_param]
        workspace_id = await call.workspace()
        shape = kind.written_shape if listing.read_shape(call.query("shape")) else kind.read_shape
        await visibility.check(call.conn, kind, workspace_id, record_id)
        view = await writing.get(call.conn, kind, workspace_id, record_id, shape=shape)
        data = {api.id_param: record_id, "data": [view.record]}
        return ok(m.LIST_OBTAINED, data, headers={"ETag": etag(view.version)})

    async def update_record(call: Call) -> Response:
        workspace_id = await call.workspace(
            header_required=True, query_required=api.update_workspace_query_required
        )
        record_id = call.required_query("id")
        body = await call.read_update_body(workspace_id)
        await visibility.check(call.conn, kind, workspace_id, record_id)
        view = await writing.update(
            call.conn,
            kind,
            workspace_id=workspace_id,
            record_id=record_id,
            body=body,
            if_match=call.if_match(),
        )
        message, key = api.updated
        return ok(
            message, {"id": record_id, key: view.record}, headers={"ETag": etag(view.version)}
        )

    async def create_record(call: Call) -> Response:
        body = await call.read_body()
        workspace_id = await call.workspace(query=False, body=body)
        view = await writing.create(
            call.conn, kind, workspace_id=workspace_id, key_id=call.key_id, body=body
        )
        message, key = api.created
        return ok(message, {"id": view.id, key: view.record}, headers={"ETag": etag(view.version)})

    async def record_history(call: Call, **path: str) -> Response:
        call.reject_unknown_query(query_names(history_params))
        record_id = path[api.id_param]
        workspace_id = await call.workspace()
        size = listing.read_page_size(call.query("pageSize"))
        # Deleted records keep their history (an audit trail); never seen: 404.
        if (
            not is_id(record_id)
            or await statements.version(call.conn, kind, workspace_id, record_id) is None
        ):
            raise kind.not_found(record_id)
        await visibility.check(call.conn, kind, workspace_id, record_id)
        page = await reading.read(
            call.conn,
            call.request.app.state.events,
            workspace_id,
            after=call.query("after") or None,
            size=size,
            history_of=record_id,
        )
        return ok(m.EVENTS_OBTAINED, {"id": record_id, "events": page.events, "next": page.next})

    get_params = (WORKSPACE_HEADER, WORKSPACE_QUERY, SHAPE)
    history_params = (WORKSPACE_HEADER, WORKSPACE_QUERY, AFTER, PAGE_SIZE)
    list_id, get_id, update_id, create_id = api.operation_ids
    list_summary, get_summary, update_summary, create_summary = api.summaries
    routes.add(
        list_records,
        method="GET",
        path=api.path,
        operation_id=list_id,
        summary=list_summary,
        message=m.LIST_PAGE_OBTAINED,
        # `shape=full` lists records as updates show them.
        answer=page_of("workspaceId", {"anyOf": [api.read_schema, api.written_schema]})
        if api.read_schema is not api.written_schema
        else page_of("workspaceId", api.read_schema),
        params=list_params,
        errors=(422,),
    )
    # Before the gets: `board` is not an id.
    add_board_operation(
        routes,
        kind,
        path=f"{api.path}/board",
        filters=api.filters,
        record_schema=api.written_schema,
        total=api.board_total,
        contact_names=api.board_contact_names,
    )
    routes.add(
        get_record,
        method="GET",
        path=f"{api.path}/{{{api.id_param}}}",
        operation_id=get_id,
        summary=get_summary,
        message=m.LIST_OBTAINED,
        answer=_with_id(
            api.id_param,
            "data",
            {"type": "array", "items": {"anyOf": [api.read_schema, api.written_schema]}}
            if api.read_schema is not api.written_schema
            else {"type": "array", "items": api.read_schema},
        ),
        params=get_params,
        errors=(404, 422),
        etag=True,
    )
    routes.add(
        record_history,
        method="GET",
        path=f"{api.path}/{{{api.id_param}}}/history",
        operation_id=f"{kind.name}History",
        summary=f"History of a {kind.name}: its events, oldest first (deleted ones too)",
        message=m.EVENTS_OBTAINED,
        answer=events_page("id"),
        params=history_params,
        errors=(400, 404, 422),
    )
    required = api.update_workspace_query_required
    routes.add(
        update_record,
        method="PUT",
        path=api.path,
        operation_id=update_id,
        summary=update_summary,
        description=api.update_description,
        message=api.updated[0],
        answer=_with_id("id", api.updated[1], api.written_schema),
        params=(
            WORKSPACE_HEADER.but(required=True),
            IF_MATCH,
            Param("id", "query", f"The {kind.name} id.", required=True),
            WORKSPACE_QUERY.but(required=required) if required else WORKSPACE_QUERY,
        ),
        body=update_body_schema(kind.fields, implicit=True),
        errors=(404, 412, 422, *api.update_errors),
        etag=True,
    )
    routes.add(
        create_record,
        method="POST",
        path=api.path,
        operation_id=create_id,
        summary=create_summary,
        message=api.created[0],
        answer=_with_id("id", api.created[1], api.written_schema),
        params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
        body=create_body_schema(kind.fields),
        errors=(422,),
        etag=True,
    )


def add_activity_operation(
    routes: Routes, activities: ActivityKind, *, path: str, id_param: str, operation_id: str
) -> None:
    """`POST <path>`: record an activity of the record `{id_param}` names."""

    async def add_activity(call: Call, **path_params: str) -> Response:
        body = await call.read_body()
        workspace_id = await call.workspace(query=False, body=body)
        await visibility.check(call.conn, activities.owner, workspace_id, path_params[id_param])
        await activity_log.add(
            call.conn,
            activities,
            workspace_id=workspace_id,
            record_id=path_params[id_param],
            key_id=call.key_id,
            body=body,
        )
        return ok(m.ACTIVITY_RECORDED, None)

    routes.add(
        add_activity,
        method="POST",
        path=path,
        operation_id=operation_id,
        summary=f"Record an activity of the {activities.owner.name}",
        message=m.ACTIVITY_RECORDED,
        answer=None,
        params=(WORKSPACE_HEADER, IDEMPOTENCY_KEY),
        body=create_body_schema(activities.fields),
        errors=(404, 422),
    )


# The body of an operation that needs none: at most the workspace.
WORKSPACE_ONLY_BODY: Schema = {
    "type": "object",
    "properties": {"workspaceId": WORKSPACE_ID},
    "additionalProperties": False,
}


async def read_workspace_only(call: Call) -> str:
    """The workspace of a POST that carries no fields (a restore): the body, if any, may
    hold `workspaceId` and nothing else (400 naming any other key)."""
    body = await call.read_body(required=False)
    for key in body:
        if key != "workspaceId":
            raise BadRequest.field(
                key, f"Unexpected body key '{key}': this operation takes only workspaceId."
            )
    return await call.workspace(body=body)


def add_delete_operation(
    routes: Routes,
    kind: RecordKind,
    *,
    path: str,
    id_param: str,
    operation_id: str,
    message: str,
) -> None:
    """`DELETE <path>`: soft-delete the record `{id_param}` names (`If-Match` applies)."""

    async def delete_record(call: Call, **path_params: str) -> Response:
        record_id = path_params[id_param]
        workspace_id = await call.workspace()
        await visibility.check(call.conn, kind, workspace_id, record_id)
        await writing.delete_one(
            call.conn,
            kind,
            workspace_id=workspace_id,
            record_id=record_id,
            key_id=call.key_id,
            if_match=call.if_match(),
        )
        return ok(message, {"id": record_id})

    routes.add(
        delete_record,
        method="DELETE",
        path=path,
        operation_id=operation_id,
        summary=f"Delete {kind.name} (soft)",
        message=message,
        answer={
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
            "additionalProperties": False,
        },
        params=(WORKSPACE_HEADER, WORKSPACE_QUERY, IF_MATCH),
        errors=(404, 412),
    )


def add_restore_operation(
    routes: Routes,
    kind: RecordKind,
    *,
    path: str,
    id_param: str,
    operation_id: str,
    restored: tuple[str, str],
    written_schema: Schema,
    errors: tuple[int, ...] = (),
) -> None:
    """`POST <path>`: bring back the soft-deleted record `{id_param}` names (contract E.2)."""
    message, key = restored

    async def restore_record(call: Call, **path_params: str) -> Response:
        record_id = path_params[id_param]
        workspace_id = await read_workspace_only(call)
        await visibility.check(call.conn, kind, workspace_id, record_id)
        view = await restore.restore(
            call.conn,
            kind,
            workspace_id=workspace_id,
            record_id=record_id,
            if_match=call.if_match(),
        )
        return ok(
            message, {"id": record_id, key: view.record}, headers={"ETag": etag(view.version)}
        )

    routes.add(
        restore_record,
        method="POST",
        path=path,
        operation_id=operation_id,
        summary=f"Restore a deleted {kind.name}",
        description=f"A live or unknown {kind.name} id is a 404.",
        message=message,
        answer=_with_id("id", key, written_schema),
        params=(WORKSPACE_HEADER, WORKSPACE_QUERY, IF_MATCH, IDEMPOTENCY_KEY),
        body=WORKSPACE_ONLY_BODY,
        body_required=False,
        errors=(404, 412, *errors),
        etag=True,
    )
