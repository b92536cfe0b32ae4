"""The OpenAPI document, built from the route table (api/routing.py) and the field tables.

For every operation: its parameters (required ones marked required), its request body,
and every answer — the success shape inside the envelope with its headers, and each
error status with the error envelope. Nothing is inferred from function signatures, so
the document says what the server does.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from chatcrm import __version__
from chatcrm.api.routing import ApiRoute, Operation, Param, api_routes
from chatcrm.auth import scopes
from chatcrm.core import messages as m
from chatcrm.records.types import Schema

_REF = "#/components/schemas/{}"
_components: dict[str, Schema] = {}


def closed_object(properties: dict[str, Schema]) -> Schema:
    """An object with exactly these keys, every one of them present (an answer's `data`)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def component(name: str, schema: Schema) -> Schema:
    """A named schema of the document's components; returns the reference to it."""
    existing = _components.setdefault(name, schema)
    assert existing == schema, f"two schemas named {name}"
    return {"$ref": _REF.format(name)}


def page_of(owner_key: str, item: Schema) -> Schema:
    """A page of a list: `{<owner_key>, continuationToken, data}`."""
    return {
        "type": "object",
        "properties": {
            owner_key: {"type": "string"},
            "continuationToken": {
                "type": ["string", "null"],
                "description": "Pass back to get the next page; null at the end.",
            },
            "data": {"type": "array", "items": item},
        },
        "required": [owner_key, "continuationToken", "data"],
        "additionalProperties": False,
    }


# The error codes each status can carry (contract section 5).
_CODES: dict[int, tuple[str, ...]] = {
    400: (m.BAD_REQUEST, m.INVALID_CONTINUATION_TOKEN, m.INVALID_CURSOR, m.INVALID_TOKEN),
    401: (
        m.UNAUTHORIZED,
        m.WORKSPACE_REQUIRED,
        m.SESSION_EXPIRED,
        m.INVALID_CREDENTIALS,
        m.TWO_FACTOR_REQUIRED,
    ),
    403: (m.FORBIDDEN, m.PERMISSION_DENIED, m.CSRF_FAILED),
    404: (
        m.CONTACT_NOT_FOUND,
        m.OPPORTUNITY_NOT_FOUND,
        m.WEBHOOK_NOT_FOUND,
        m.USER_NOT_FOUND,
        m.CHANNEL_NOT_FOUND,
        m.MESSAGE_NOT_FOUND,
        m.NOT_FOUND,
    ),
    409: (
        m.DUPLICATE_CONTACT,
        m.IDEMPOTENCY_KEY_REUSED,
        m.CONTACT_DELETED_CONFLICT,
        m.DUPLICATE_USER,
        m.LAST_OWNER,
        m.DUPLICATE_CHANNEL,
        m.MESSAGE_NOT_FAILED,
    ),
    412: (m.PRECONDITION_FAILED,),
    413: (m.PAYLOAD_TOO_LARGE,),
    415: (m.UNSUPPORTED_MEDIA_TYPE,),
    422: (m.VALIDATION_ERROR, m.NO_CHANNEL, m.WINDOW_CLOSED),
    429: (m.RATE_LIMITED, m.TOO_MANY_ATTEMPTS),
    503: (m.SERVICE_UNAVAILABLE,),
}
_WHEN = {
    400: "Malformed request: a body or query parameter that cannot be read, an unknown "
    "parameter, a structural mistake in an update body, a bad continuation token",
    401: "No valid API key (UNAUTHORIZED), no workspace named (WORKSPACE_REQUIRED), a session "
    "that ended (SESSION_EXPIRED), a refused sign-in (INVALID_CREDENTIALS, "
    "TWO_FACTOR_REQUIRED)",
    403: "A workspace this caller cannot use, or header and workspaceId differ (FORBIDDEN); "
    "outside the caller's scopes (PERMISSION_DENIED, data.required); a session's change "
    "without its CSRF token or from another origin (CSRF_FAILED)",
    404: "Unknown id (or of another workspace)",
    409: "A phone or email another contact holds, an Idempotency-Key used for another "
    "request, an e-mail another user holds, a change that leaves no active owner, a "
    "phoneNumberId another channel holds (DUPLICATE_CHANNEL), a retry of a message that has "
    "not failed (MESSAGE_NOT_FAILED)",
    412: "If-Match names another version",
    413: "Body over the size limit (1 MiB)",
    415: "A body declared with a non-JSON content type",
    422: "Invalid values, all of them named in data.errors; a send without a channel "
    "(NO_CHANNEL) or outside the 24-hour window (WINDOW_CLOSED)",
    429: "Over the API key's rate limit, or sign-in throttled (TOO_MANY_ATTEMPTS)",
    503: "The database (or, for a media, the channel) is unreachable; retry after "
    "Retry-After seconds",
}

_REQUEST_ID = {
    "description": "The request's id (the client's X-Request-Id when it sent one).",
    "required": True,
    "schema": {"type": "string", "minLength": 1},
}
_RATE_HEADERS = {
    name: {"description": text, "schema": {"type": "integer", "minimum": 0}}
    for name, text in (
        ("RateLimit-Limit", "Requests the key may burst (when limits are on)."),
        ("RateLimit-Remaining", "Requests left in the burst right now."),
        ("RateLimit-Reset", "Seconds until the burst is whole again."),
    )
}
_RETRY_AFTER = {
    "description": "Seconds to wait before retrying.",
    "required": True,
    "schema": {"type": "integer", "minimum": 0},
}


# One invalid value (contract section 5): in error answers, and per item of a batch.
FIELD_ERROR: Schema = {
    "type": "object",
    "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
    "required": ["field", "message"],
    "additionalProperties": False,
}


def _error_envelope(status: int) -> Schema:
    data = {
        "type": "object",
        "properties": {
            "errors": {"type": "array", "items": FIELD_ERROR},
            "existingId": {"type": "string", "description": "On DUPLICATE_CONTACT."},
            "required": {
                "type": "string",
                "description": "On PERMISSION_DENIED: the scope the operation needs (then "
                "the only key).",
            },
        },
    }
    return {
        "type": "object",
        "properties": {
            "success": {"const": False},
            "code": {"const": status},
            "errorCode": {"enum": list(_CODES.get(status, (m.BAD_REQUEST,)))},
            "message": {"type": "string", "minLength": 1},
            "data": {"anyOf": [{"type": "null"}, data]},
        },
        "required": ["success", "code", "errorCode", "message", "data"],
        "additionalProperties": False,
    }


def _success_envelope(op: Operation) -> Schema:
    return {
        "type": "object",
        "properties": {
            "success": {"const": True},
            "code": {"const": 200},
            "errorCode": {"type": "null"},
            "message": {"const": op.message},
            "data": op.answer if op.answer is not None else {"type": "null"},
        },
        "required": ["success", "code", "errorCode", "message", "data"],
        "additionalProperties": False,
    }


def statuses(op: Operation) -> list[int]:
    """Every status an operation can answer besides 200."""
    out = set(op.errors)
    if op.authenticated:
        # Any authenticated operation: a malformed query parameter (400), no valid key or
        # no workspace (401), a workspace the key cannot use (403), the rate limit (429),
        # the database unreachable (503).
        out |= {400, 401, 403, 429, 503}
    if op.body is not None:
        # 422 too: a body's `workspaceId` that is not a string, even where no body field is.
        out |= {400, 413, 415, 422}
    if op.method == "POST" and op.authenticated:
        out |= {409}  # an Idempotency-Key used for another request
    return sorted(out)


def _parameter(param: Param) -> Schema:
    return {
        "name": param.name,
        "in": param.where,
        "required": param.required,
        "description": param.description,
        "schema": param.schema,
    }


def _operation(route: ApiRoute) -> Schema:
    op = route.operation
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": {"type": "string", "minLength": 1}}
        for name in route.param_names
    ]
    parameters += [_parameter(p) for p in op.params]
    success_headers: dict[str, Any] = {"X-Request-Id": _REQUEST_ID}
    if op.authenticated:
        success_headers.update(_RATE_HEADERS)
    if op.etag:
        success_headers["ETag"] = {
            "description": "The record's version, for If-Match.",
            "required": True,
            "schema": {"type": "string", "pattern": '^"[0-9]+"$'},
        }
    if op.enveloped:
        success = {"application/json": {"schema": _success_envelope(op)}}
    else:
        plain: Schema = {"type": "string", **({"format": "binary"} if op.binary else {})}
        success = {op.content_type: {"schema": plain}}
    responses: dict[str, Any] = {
        "200": {
            "description": op.message or "Success",
            "headers": success_headers,
            "content": success,
        }
    }
    for status in statuses(op):
        headers: dict[str, Any] = {"X-Request-Id": _REQUEST_ID}
        if op.authenticated and status != 401:
            headers.update(_RATE_HEADERS)
        if status in (429, 503):
            headers["Retry-After"] = _RETRY_AFTER
        responses[str(status)] = {
            "description": _WHEN[status],
            "headers": headers,
            # An operation of no envelope and no caller (Meta's verification) refuses in text.
            "content": {"application/json": {"schema": _error_envelope(status)}}
            if op.enveloped or op.authenticated
            else {"text/plain": {"schema": {"type": "string"}}},
        }
    out: Schema = {
        "operationId": op.operation_id,
        "summary": op.summary,
        "tags": [op.tag],
        "parameters": parameters,
        "responses": responses,
    }
    if op.description:
        out["description"] = op.description
    if op.body is not None:
        out["requestBody"] = {
            "required": op.body_required,
            "content": {"application/json": {"schema": op.body}},
        }
    requirement = scopes.ROUTE_SCOPES[op.operation_id]
    if op.authenticated and requirement is not None:
        # Contract J.2: the scope(s) the operation needs, with a key or a console session
        # (OpenAPI 3.1 lets non-OAuth schemes list the roles they require); any one of the
        # requirements is enough. SIGNED_IN: any caller at all.
        needed = [[s] if s else [] for s in requirement]
        out["security"] = [{scheme: list(n)} for n in needed for scheme in SECURITY_SCHEMES]
    return out


SECURITY_SCHEMES = {
    "apiKey": {
        "type": "http",
        "scheme": "bearer",
        "description": "An API key: `Authorization: Bearer ccrm_…`",
    },
    "session": {
        "type": "apiKey",
        "in": "cookie",
        "name": "chatcrm_session",
        "description": "A console session (POST /api/session); changes also need the "
        "X-CSRF-Token header.",
    },
}


def document(app: FastAPI) -> Schema:
    paths: dict[str, Schema] = {}
    for route in api_routes(app.router.routes):
        paths.setdefault(route.operation.path, {})[route.operation.method.lower()] = _operation(
            route
        )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": app.title,
            "version": __version__,
            "description": app.description,
        },
        "paths": paths,
        "components": {
            "schemas": dict(sorted(_components.items())),
            "securitySchemes": SECURITY_SCHEMES,
        },
    }


def install(app: FastAPI) -> None:
    """Serve the document built from the route table (once, then kept)."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = document(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
