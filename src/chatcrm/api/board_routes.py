"""`GET /api/<kind>/board` (docs/api.md 2.31): a column per stage of the kind with its count,
(opportunities) total and first cards with their ETags, one column continued with `after`;
the list filters apply. What the console's boards show, in one request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.parameters import WORKSPACE_HEADER, WORKSPACE_QUERY, filter_params, query_names
from chatcrm.api.routing import Param, Routes
from chatcrm.contacts.kind import CONTACT
from chatcrm.core import messages as m
from chatcrm.core.errors import BadRequest
from chatcrm.db.database import Connection
from chatcrm.records import board, listing, visibility
from chatcrm.records.conditional import etag
from chatcrm.records.kind import RecordKind
from chatcrm.records.listing import Filter
from chatcrm.records.types import Schema

# Names of the contacts a board's cards link to (opportunities): (conn, workspace, ids).
ContactNames = Callable[[Connection, str, list[str]], Awaitable[dict[str, str]]]


def _board_column(
    column: board.Column, with_total: bool, names: dict[str, str] | None
) -> dict[str, Any]:
    out: dict[str, Any] = {"stageId": column.stage_id, "name": column.name, "count": column.count}
    if with_total:
        out["totalAmount"] = column.total
    if names is None:
        out["cards"] = [{"etag": etag(v.version), "record": v.record} for v in column.cards]
    else:
        out["cards"] = [
            {
                "etag": etag(v.version),
                "record": v.record,
                "contactName": names.get(v.record["contactId"]),
            }
            for v in column.cards
        ]
    out["next"] = column.next
    return out


def _board_schema(record: Schema, with_total: bool, with_names: bool) -> Schema:
    properties: dict[str, Schema] = {
        "stageId": {"type": "string"},
        "name": {"type": "string"},
        "count": {"type": "integer"},
    }
    if with_total:
        properties["totalAmount"] = {"type": "number"}
    properties["cards"] = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "etag": {"type": "string"},
                "record": record,
                **({"contactName": {"type": ["string", "null"]}} if with_names else {}),
            },
            "required": ["etag", "record", *(["contactName"] if with_names else [])],
            "additionalProperties": False,
        },
    }
    properties["next"] = {"type": ["string", "null"]}
    column = {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "workspaceId": {"type": "string"},
            "columns": {"type": "array", "items": column},
        },
        "required": ["workspaceId", "columns"],
        "additionalProperties": False,
    }


def add_board_operation(
    routes: Routes,
    kind: RecordKind,
    *,
    path: str,
    filters: tuple[Filter, ...],
    record_schema: Schema,
    total: str | None,
    contact_names: ContactNames | None,
) -> None:
    async def read_board(call: Call) -> Response:
        call.reject_unknown_query(query_names(board_params))
        workspace_id = await call.workspace()
        query = call.request.query_params
        stage_text = call.query("stageId") or None
        after_text = call.query("after") or None
        if after_text and not stage_text:
            raise BadRequest.field("after", "'after' continues one column: send its stageId too.")
        filtering, size = listing.read_filters(
            board_filters,
            {**query, "pageSize": query.get("pageSize") or str(board.DEFAULT_CARDS)},
            call.conn.dialect,
        )
        columns = await board.read_board(
            call.conn,
            kind,
            workspace_id=workspace_id,
            filters=board_filters,
            filtering=filtering,
            stage_id=stage_filter.parse(stage_text) if stage_text else None,
            after=board.read_position(after_text) if after_text else None,
            size=size,
            total=total,
        )
        names = None
        if contact_names is not None:
            linked = {v.record["contactId"] for c in columns for v in c.cards}
            linked.discard("")
            if visibility.current() is not None:  # no name of a contact it may not see (J.2)
                linked = {
                    i for i in linked if await visibility.sees(call.conn, CONTACT, workspace_id, i)
                }
            names = await contact_names(call.conn, workspace_id, sorted(linked))
        return ok(m.LIST_OBTAINED, {"workspaceId": workspace_id, "columns": [
            _board_column(column, total is not None, names) for column in columns
        ]})  # fmt: skip

    # The board's columns are its stages: its stageId picks one column, not a filter.
    stage_filter = next(f for f in filters if f.name == "stageId")
    board_filters = tuple(f for f in filters if f is not stage_filter)
    board_params = (
        WORKSPACE_HEADER,
        WORKSPACE_QUERY,
        *filter_params(board_filters),
        Param("stageId", "query", "Only this stage's column."),
        Param("after", "query", "With stageId: the column's `next`, for the cards after it."),
        Param("pageSize", "query", f"Cards per column, 1 to 100 (default {board.DEFAULT_CARDS})."),
    )
    routes.add(
        read_board,
        method="GET",
        path=path,
        operation_id=f"{kind.name}Board",
        summary=f"The {kind.name}s board: a column per stage with its count and first cards",
        message=m.LIST_OBTAINED,
        answer=_board_schema(record_schema, total is not None, contact_names is not None),
        params=board_params,
        errors=(400, 422),
    )
