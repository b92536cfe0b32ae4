"""Request dependencies: the database, the authenticated caller, the selected workspace."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from chatcrm.api.errors import (
    ApiError,
    BadRequest,
    Forbidden,
    ValidationFailed,
    WorkspaceRequired,
)
from chatcrm.api.gate import STATE_AUTH_ERROR, STATE_PRINCIPAL
from chatcrm.auth.service import Principal, bearer_token, check_workspace
from chatcrm.core.pagination import TokenCodec
from chatcrm.core.values import FieldError
from chatcrm.db.database import Database
from chatcrm.db.secrets import get_secret

# Declared for the OpenAPI document; authentication itself reads the header below.
_bearer_scheme = HTTPBearer(auto_error=False, description="An API key: `Bearer ccrm_…`")


async def get_db(request: Request) -> Database:
    """Async on purpose: FastAPI runs plain `def` dependencies in a thread pool."""
    db: Database = request.app.state.db
    return db


async def get_principal(
    request: Request,
    _doc: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer_scheme)],
) -> Principal:
    """The caller the gate middleware authenticated, or the reason it could not."""
    state = request.scope.get("state", {})
    principal: Principal | None = state.get(STATE_PRINCIPAL)
    if principal is not None:
        return principal
    error: ApiError | None = state.get(STATE_AUTH_ERROR)
    if error is not None:
        raise error
    bearer_token(None)  # raises the 401 for a missing key
    raise AssertionError("unreachable")


async def get_codec(request: Request) -> TokenCodec:
    """The continuation-token codec, keyed with the secret every node shares."""
    state = request.app.state
    codec: TokenCodec | None = getattr(state, "token_codec", None)
    if codec is None:
        async with state.db.read() as conn:
            key = await get_secret(conn, "token_key")
        codec = state.token_codec = TokenCodec(bytes.fromhex(key))
    return codec


Db = Annotated[Database, Depends(get_db)]
Caller = Annotated[Principal, Depends(get_principal)]
Codec = Annotated[TokenCodec, Depends(get_codec)]
WorkspaceHeader = Annotated[
    str | None,
    Header(
        alias="x-workspace-id",
        description="The workspace the request acts in.",
        convert_underscores=False,
    ),
]
IfMatch = Annotated[
    str | None,
    Header(alias="If-Match", description="Apply the update only to this version (ETag)."),
]


def _given(value: str | None) -> str | None:
    return value if value else None


async def select_workspace(
    request: Request,
    principal: Principal,
    *,
    header: str | None,
    query: str | None = None,
    body: dict[str, Any] | None = None,
    header_required: bool = False,
    query_required: bool = False,
) -> str:
    """Apply the contract's workspace rules and check the caller may use the workspace.

    Every place that names a workspace (header, `workspaceId` in query or body) must name
    the same one (403 otherwise); a required header missing is 401 WORKSPACE_REQUIRED, a
    required query parameter missing is 400; with none named at all, 401.
    """
    header = _given(header)
    query = _given(query)
    in_body: str | None = None
    if body is not None and body.get("workspaceId") is not None:
        value = body["workspaceId"]
        if not isinstance(value, str):
            raise ValidationFailed([FieldError("workspaceId", "must be a string")])
        in_body = _given(value)
    if header_required and header is None:
        raise WorkspaceRequired("The header 'x-workspace-id' is required: name the workspace.")
    if query_required and query is None:
        raise BadRequest.field("workspaceId", "The query parameter 'workspaceId' is required.")
    named = [w for w in (header, query, in_body) if w is not None]
    if not named:
        raise WorkspaceRequired(
            "No workspace named: send the header 'x-workspace-id' (or workspaceId)."
        )
    if any(w != named[0] for w in named):
        raise Forbidden("The header 'x-workspace-id' and 'workspaceId' name different workspaces.")
    state = request.app.state
    return await check_workspace(state.db, state.auth_cache, principal, named[0])


def check_body_workspace(body: dict[str, Any], workspace_id: str) -> None:
    """A `workspaceId` in an update body must name the workspace already selected."""
    value = body.get("workspaceId")
    if value is None or value == "":
        return
    if not isinstance(value, str):
        raise ValidationFailed([FieldError("workspaceId", "must be a string")])
    if value != workspace_id:
        raise Forbidden(
            f"The body 'workspaceId' names another workspace than this request's ({workspace_id})."
        )


def require_query(name: str, value: str | None) -> str:
    if not value:
        raise BadRequest.field(name, f"The query parameter '{name}' is required.")
    return value
