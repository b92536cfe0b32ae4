"""OpenAPI helpers. Bodies are read and validated by our own code (exact types, exact
messages), so request schemas are attached to operations here, for documentation and for
clients and test tools that generate requests from `/openapi.json`."""

from __future__ import annotations

from typing import Any, Generic, TypeVar

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import BaseModel, ConfigDict, Field

T = TypeVar("T")

_REF = "#/components/schemas/{model}"
_body_models: dict[str, type[BaseModel]] = {}


class Envelope(BaseModel, Generic[T]):
    """Every response: exactly these five keys, in this order."""

    success: bool
    code: int
    errorCode: str | None
    message: str
    data: T


class FieldProblem(BaseModel):
    field: str
    message: str


class ErrorData(BaseModel):
    model_config = ConfigDict(extra="allow")
    errors: list[FieldProblem]
    existingId: str | None = Field(default=None, description="On DUPLICATE_CONTACT.")


class ErrorEnvelope(BaseModel):
    success: bool = Field(description="Always false.")
    code: int = Field(description="Equals the HTTP status.")
    errorCode: str = Field(description="Stable UPPER_SNAKE code (contract section 5).")
    message: str
    data: ErrorData | None


_ERROR_TEXT = {
    400: "Malformed request (BAD_REQUEST, INVALID_CONTINUATION_TOKEN)",
    401: "No valid API key (UNAUTHORIZED) or no workspace named (WORKSPACE_REQUIRED)",
    403: "Workspace not usable with this key, or header and workspaceId differ (FORBIDDEN)",
    404: "Unknown id, or of another workspace",
    409: "Conflict (DUPLICATE_CONTACT, IDEMPOTENCY_KEY_REUSED)",
    412: "Stale If-Match (PRECONDITION_FAILED)",
    413: "Body over 1 MiB (PAYLOAD_TOO_LARGE)",
    415: "Body with a non-JSON content type (UNSUPPORTED_MEDIA_TYPE)",
    422: "Invalid value (VALIDATION_ERROR)",
    429: "Rate limit exceeded (RATE_LIMITED)",
    503: "Database unreachable (SERVICE_UNAVAILABLE)",
}


def responses(
    data_model: Any, *errors: int, authenticated: bool = True
) -> dict[int | str, dict[str, Any]]:
    """The documented answers of an operation: the 200 envelope and the listed errors."""
    out: dict[int | str, dict[str, Any]] = {
        200: {"model": Envelope[data_model], "description": "Success"}
    }
    # Any authenticated operation may answer: 400 (a malformed query parameter), 401 (no
    # valid key), 429 (rate limit) and 503 (database unreachable).
    always = {400, 401, 429, 503} if authenticated else set()
    for status in sorted({*errors, *always}):
        out[status] = {"model": ErrorEnvelope, "description": _ERROR_TEXT[status]}
    return out


def json_body(model: type[BaseModel], *, required: bool = True) -> dict[str, Any]:
    """`openapi_extra` describing a JSON request body by a pydantic model."""
    _body_models[model.__name__] = model
    return {
        "requestBody": {
            "required": required,
            "content": {
                "application/json": {"schema": {"$ref": _REF.format(model=model.__name__)}}
            },
        }
    }


def install(app: FastAPI) -> None:
    """Build the document once, adding the request-body schemas to its components."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            components = schema.setdefault("components", {}).setdefault("schemas", {})
            for name, model in _body_models.items():
                body_schema = model.model_json_schema(ref_template=_REF)
                for def_name, definition in body_schema.pop("$defs", {}).items():
                    components.setdefault(def_name, definition)
                components[name] = body_schema
            schema["components"]["securitySchemes"] = {
                "apiKey": {
                    "type": "http",
                    "scheme": "bearer",
                    "description": "An API key: `Authorization: Bearer ccrm_…`",
                }
            }
            for path, operations in schema.get("paths", {}).items():
                if path.startswith("/api/"):
                    for spec in operations.values():
                        spec["security"] = [{"apiKey": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


# --- parameters read by hand in the routes (see api/deps.py), documented here --------------


def header_param(name: str, description: str, *, required: bool = False) -> dict[str, Any]:
    return {
        "name": name,
        "in": "header",
        "required": required,
        "description": description,
        "schema": {"type": "string"},
    }


def query_param(
    name: str,
    description: str,
    *,
    required: bool = False,
    schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "in": "query",
        "required": required,
        "description": description,
        "schema": schema or {"type": "string"},
    }


WORKSPACE_HEADER = header_param("x-workspace-id", "The workspace the request acts in.")
IF_MATCH = header_param("If-Match", "Apply the change only to this version (its ETag).")
IDEMPOTENCY_KEY = header_param(
    "Idempotency-Key", "Retry-safe POST: the first answer is stored 24 h and replayed."
)
WORKSPACE_QUERY = query_param("workspaceId", "The workspace (or send x-workspace-id).")
PAGE_PARAMS = [
    query_param("continuationToken", "From the previous page; omit for the first page."),
    query_param(
        "pageSize",
        "1 to 100 (default 20).",
        schema={"type": "integer", "minimum": 1, "maximum": 100},
    ),
]


def operation(*params: dict[str, Any], body: type[BaseModel] | None = None) -> dict[str, Any]:
    """`openapi_extra` of an operation: its hand-read parameters and its JSON body."""
    extra: dict[str, Any] = {"parameters": list(params)} if params else {}
    if body is not None:
        extra.update(json_body(body))
    return extra
