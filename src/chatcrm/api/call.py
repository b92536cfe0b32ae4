"""`Call`: an authenticated request as the routes see it — who calls, its one database
connection, and the contract's workspace rules.

Routes read their headers and query parameters from it (they are documented by the route
table, api/routing.py): resolving each through the framework would cost microseconds a
parameter on routes that serve thousands of requests a second.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from chatcrm.api import headers
from chatcrm.api.body import read_json_object
from chatcrm.api.gate import authenticate_again
from chatcrm.api.state import STATE_AUTH_ERROR, STATE_CONNECTION, STATE_PRINCIPAL
from chatcrm.auth import scopes
from chatcrm.auth.service import USER, Principal, bearer_token, check_workspace
from chatcrm.core import phone
from chatcrm.core.errors import (
    BadRequest,
    FieldError,
    Forbidden,
    ServiceError,
    ValidationFailed,
    WorkspaceRequired,
)
from chatcrm.core.pagination import TokenCodec
from chatcrm.db.database import Connection
from chatcrm.db.secrets import get_secret
from chatcrm.people.errors import PermissionDenied
from chatcrm.records import visibility

WORKSPACE_HEADER = "x-workspace-id"
# The parameter HTTP libraries add to defeat caches (jQuery's `cache: false`, `_=1700…`):
# accepted, and ignored, wherever unknown parameters are otherwise refused.
CACHE_BUSTER = "_"


def _given(value: str | None) -> str | None:
    return value if value else None


@dataclass(frozen=True, slots=True)
class Call:
    """An authenticated request, with its one database connection."""

    request: Request
    principal: Principal
    conn: Connection

    @property
    def key_id(self) -> str:
        return self.principal.key_id

    @property
    def account_id(self) -> str:
        return self.principal.account_id

    def header(self, name: str) -> str | None:
        """A one-value header (api/headers.py: sent twice differently, it is refused)."""
        return headers.one(self.request.scope, name.encode())

    def if_match(self) -> str | None:
        """`If-Match`'s entity tags, from all its lines."""
        return headers.joined(self.request.scope, b"if-match")

    def query(self, name: str) -> str | None:
        if not self.request.scope["query_string"]:  # most reads: no query to parse
            return None
        return self.request.query_params.get(name)

    async def codec(self) -> TokenCodec:
        """The continuation-token codec, keyed with the secret every node shares."""
        state = self.request.app.state
        codec: TokenCodec | None = getattr(state, "token_codec", None)
        if codec is None:
            key = await get_secret(self.conn, "token_key")
            codec = state.token_codec = TokenCodec(bytes.fromhex(key))
        return codec

    async def workspace(
        self,
        *,
        query: bool = True,
        body: dict[str, Any] | None = None,
        header_required: bool = False,
        query_required: bool = False,
        path: str | None = None,
    ) -> str:
        """Apply the contract's workspace rules and check the caller may use the workspace.

        Every place that names a workspace (header, `workspaceId` in query or body, or the
        path) must name the same one (403 otherwise); a required header missing is 401
        WORKSPACE_REQUIRED, a required query parameter missing is 400; with none named at
        all, 401.
        """
        header = _given(self.header(WORKSPACE_HEADER))
        in_query = _given(self.query("workspaceId"))
        # Routes that take their workspace from the header or the body (creates) still
        # refuse a query `workspaceId` naming another one: never silently ignored.
        also_named = [] if query or in_query is None else [in_query]
        if not query:
            in_query = None
        in_body: str | None = None
        if body is not None and body.get("workspaceId") is not None:
            value = body["workspaceId"]
            if not isinstance(value, str):
                raise ValidationFailed([FieldError("workspaceId", "must be a string")])
            in_body = _given(value)
        if header_required and header is None:
            raise WorkspaceRequired("The header 'x-workspace-id' is required: name the workspace.")
        if query_required and in_query is None:
            raise BadRequest.field("workspaceId", "The query parameter 'workspaceId' is required.")
        named = [w for w in (path, header, in_query, in_body) if w is not None]
        if not named:
            raise WorkspaceRequired(
                "No workspace named: send the header 'x-workspace-id' (or workspaceId)."
            )
        if any(w != named[0] for w in (*named, *also_named)):
            raise Forbidden(
                "The header 'x-workspace-id' and 'workspaceId' name different workspaces."
            )
        state = self.request.app.state
        workspace_id = await check_workspace(self.conn, state.auth_cache, self.principal, named[0])
        if self.principal.kind == USER:  # assigned-only agents (J.2)
            await visibility.find(
                self.conn, workspace_id, role=self.principal.role, email=self.principal.email
            )
        return workspace_id

    async def still_allowed(self, workspace_id: str) -> None:
        """Raise when the caller lost what let it in since the request began (its key
        revoked, its user disabled, the route's scope or the workspace taken away): for
        an answer given after a wait."""
        principal = await authenticate_again(self.request.scope, self.conn)
        required = getattr(self.request.scope.get("route"), "requirement", None)
        if required is not None and not scopes.allows(principal.scopes, required):
            raise PermissionDenied(required[0])
        state = self.request.app.state
        await check_workspace(self.conn, state.auth_cache, principal, workspace_id)

    async def check_header_workspace(self) -> None:
        """A workspace named in the header must be usable (403) before the body is even
        read: a caller without access learns nothing from the body's errors."""
        header = _given(self.header(WORKSPACE_HEADER))
        if header is not None:
            state = self.request.app.state
            await check_workspace(self.conn, state.auth_cache, self.principal, header)

    async def of_the_account(self) -> None:
        """A route of the account (users, keys, sessions): it takes no workspace and no
        query parameter. A workspace named in the header must still be one the caller may
        use (403); a query parameter, `workspaceId` among them, is 400: never ignored."""
        await self.check_header_workspace()
        self.reject_unknown_query(())

    async def read_body(self, *, required: bool = True) -> dict[str, Any]:
        """The JSON object body, once the header's workspace (if any) passed. Not
        `required`: no body at all reads as `{}` (operations without body fields)."""
        await self.check_header_workspace()
        return await read_json_object(self.request, required=required)

    async def read_update_body(self, workspace_id: str) -> dict[str, Any]:
        """An update's JSON object body; a `workspaceId` in it must name `workspace_id`."""
        body = await read_json_object(self.request)
        check_body_workspace(body, workspace_id)
        return body

    def required_query(self, name: str) -> str:
        value = self.query(name)
        if not value:
            raise BadRequest.field(name, f"The query parameter '{name}' is required.")
        return value

    def reject_unknown_query(self, allowed: Iterable[str]) -> None:
        """A misspelt filter must not silently return the unfiltered list."""
        if not self.request.scope["query_string"]:
            return
        known = set(allowed)
        for name in self.request.query_params:
            if name not in known and name != CACHE_BUSTER:
                accepted = f"Accepted: {', '.join(sorted(known))}." if known else "It takes none."
                raise BadRequest.field(name, f"Unknown query parameter '{name}'. {accepted}")


def make_call(request: Request) -> Call:
    """The caller the gate middleware authenticated, or the reason it could not."""
    state = request.scope.get("state", {})
    principal: Principal | None = state.get(STATE_PRINCIPAL)
    if principal is None:
        error: ServiceError | None = state.get(STATE_AUTH_ERROR)
        if error is not None:
            raise error
        bearer_token(None)  # raises the 401 for a missing key
        raise AssertionError("unreachable")
    query = request.scope.get("query_string", b"")
    if query:
        _check_query(request, nul=b"%00" in query)
    conn: Connection = state[STATE_CONNECTION]
    conn.actor = principal.actor()  # named by the events this request writes (J.4)
    visibility.restrict(None)  # found again when the request names its workspace
    phone.use_country(None)  # looked up when a phone of bare digits needs it
    return Call(request=request, principal=principal, conn=conn)


def _check_query(request: Request, *, nul: bool) -> None:
    """A parameter given twice with different values is refused, never one of them picked
    in silence: 403 for `workspaceId` (two workspaces named), else 400. NUL cannot be
    stored or compared in PostgreSQL text: refused up front, naming the parameter, the
    same on both databases (bodies are checked when parsed)."""
    seen: dict[str, str] = {}
    for name, value in request.query_params.multi_items():
        if nul and ("\x00" in name or "\x00" in value):
            raise BadRequest.field(
                name.replace("\x00", ""), "Query parameters must not contain NUL (%00)."
            )
        first = seen.setdefault(name, value)
        if first != value and name != CACHE_BUSTER:
            if name == "workspaceId":
                raise Forbidden("The query parameter 'workspaceId' names different workspaces.")
            raise BadRequest.field(
                name, f"The query parameter '{name}' is given twice, with different values."
            )


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
