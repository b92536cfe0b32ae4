"""`GET /api/events`: the events feed of a workspace (contract D.2)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import component
from chatcrm.api.parameters import (
    PAGE_SIZE,
    WORKSPACE_HEADER,
    WORKSPACE_QUERY,
    or_empty,
    query_names,
)
from chatcrm.api.routing import Param, Routes
from chatcrm.core import messages as m
from chatcrm.core.errors import FieldError, require_valid
from chatcrm.events import feed, reading
from chatcrm.events.types import FAMILIES, RECORD_TYPES
from chatcrm.records import listing
from chatcrm.records.types import Schema

routes = Routes("events")
T = TypeVar("T")

EVENT = component(
    "Event",
    {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": "^evt_"},
            "type": {"type": "string", "enum": list(RECORD_TYPES)},
            "workspaceId": {"type": "string"},
            "createdAt": {"type": "string", "format": "date-time"},
            "recordId": {"type": ["string", "null"]},
            "recordVersion": {"type": ["integer", "null"]},
            "changed": {"type": "array", "items": {"type": "string"}},
            "data": {"type": "object"},
            "actor": {
                "type": "object",
                "description": "Who acted (contract J.4): a user, a key, a channel, or the "
                "service itself (system, name chatcrm).",
                "properties": {
                    "type": {"type": "string", "enum": ["user", "key", "channel", "system"]},
                    "id": {"type": ["string", "null"]},
                    "name": {"type": "string"},
                },
                "required": ["type", "id", "name"],
                "additionalProperties": False,
            },
        },
        "required": [
            "id",
            "type",
            "workspaceId",
            "createdAt",
            "recordId",
            "recordVersion",
            "changed",
            "data",
            "actor",
        ],
    },
)


def events_page(owner_key: str) -> Schema:
    """`{<owner_key>, events, next}`."""
    return {
        "type": "object",
        "properties": {
            owner_key: {"type": "string"},
            "events": {"type": "array", "items": EVENT},
            "next": {
                "type": ["string", "null"],
                "description": "Pass back as `after`: the last event's id, or the `after` "
                "given when there was none.",
            },
        },
        "required": [owner_key, "events", "next"],
    }


AFTER = Param(
    "after",
    "query",
    "An event id (the `next` of the previous answer); omit to start from the oldest "
    "retained event. The feed (not a history) also takes `end`: from its current end.",
)
TYPES = Param(
    "types",
    "query",
    "Comma-separated event types or families, or * for all: "
    + ", ".join((*FAMILIES, *RECORD_TYPES))
    + ".",
)
RECORD = Param("recordId", "query", "Only the events of this contact or opportunity.")
WAIT = Param(
    "wait",
    "query",
    "Seconds (0 to 30) to hold the request when no event follows `after`; it answers as "
    "soon as one is committed.",
    # Empty counts as absent, as for every query value of the feed.
    schema=or_empty({"type": "number", "minimum": 0, "maximum": feed.MAX_WAIT_SECONDS}),
)
PARAMS = (WORKSPACE_HEADER, WORKSPACE_QUERY, AFTER, TYPES, RECORD, PAGE_SIZE, WAIT)


def _parsed(parse: Callable[[str], T], text: str | None, default: T, errors: list[FieldError]) -> T:
    """A query value parsed, or its default (absent or empty); its error collected."""
    if not text:
        return default
    try:
        return parse(text)
    except FieldError as exc:
        errors.append(exc)
        return default


@routes.operation(
    "GET",
    "/api/events",
    operation_id="listEvents",
    summary="Events feed",
    message=m.EVENTS_OBTAINED,
    answer=events_page("workspaceId"),
    params=PARAMS,
    errors=(400, 422),
)
async def list_events(call: Call) -> Response:
    call.reject_unknown_query(query_names(PARAMS))
    workspace_id = await call.workspace()
    errors: list[FieldError] = []
    size = listing.page_size(call.query("pageSize"), errors)
    types = _parsed(feed.parse_types, call.query("types"), None, errors)
    wait = _parsed(feed.parse_wait, call.query("wait"), 0.0, errors)
    require_valid(errors)
    page = await reading.read(
        call.conn,
        call.request.app.state.events,
        workspace_id,
        after=call.query("after") or None,
        size=size,
        types=types,
        record_id=call.query("recordId") or None,
        wait=wait,
        gone=call.request.is_disconnected,
        still_allowed=lambda: call.still_allowed(workspace_id),
    )
    data = {"workspaceId": workspace_id, "events": page.events, "next": page.next}
    return ok(m.EVENTS_OBTAINED, data)
