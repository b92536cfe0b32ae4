"""Who may be answered from a stored `Idempotency-Key` answer (api/idempotency.py): the
caller must pass the route's own first checks, its scope and the workspace the request
names, wherever it names it; a replay never shows an answer to a caller the route would
refuse."""

from __future__ import annotations

from typing import Any

from starlette.datastructures import QueryParams
from starlette.types import Scope

from chatcrm.api import headers
from chatcrm.auth import scopes
from chatcrm.auth.service import Principal, check_workspace
from chatcrm.core.errors import ServiceError
from chatcrm.db.database import Connection


class Refused(Exception):
    """The request names workspaces the route itself refuses (two, or a malformed one)."""


def workspace_named(scope: Scope, parsed: Any) -> str | None:
    """The one workspace the request names — in the header, the path, the query's
    `workspaceId` or the body's — None when it names none; Refused when it names two
    (the route answers 403) or one the body gives as no string (422)."""
    named: set[str] = set()
    try:
        header = headers.one(scope, b"x-workspace-id")
    except ServiceError:
        raise Refused from None
    if header:
        named.add(header)
    in_path = scope.get("path_params", {}).get("workspaceId")  # a workspace's set-up routes
    if in_path:
        named.add(in_path)
    if isinstance(parsed, dict) and parsed.get("workspaceId") not in (None, ""):
        if not isinstance(parsed["workspaceId"], str):
            raise Refused
        named.add(parsed["workspaceId"])
    queried = set()
    if scope["query_string"]:
        queried = {v for v in QueryParams(scope["query_string"]).getlist("workspaceId") if v}
    # The query selects the workspace only on the routes that take it there (a restore's,
    # docs/api.md 1.8); elsewhere one naming another workspace is refused all the same.
    if _takes_query_workspace(scope) or named:
        named |= queried
    elif len(queried) > 1:
        raise Refused
    if len(named) > 1:
        raise Refused
    return next(iter(named), None)


def _takes_query_workspace(scope: Scope) -> bool:
    operation = getattr(scope.get("route"), "operation", None)
    params = getattr(operation, "params", ())
    return any(p.name == "workspaceId" and p.where == "query" for p in params)


# Routes a key limited to some workspaces may not use at all (J.5: it cannot create a
# workspace), whatever the request names.
_WHOLE_ACCOUNT = frozenset({"createWorkspace"})


def allowed(scope: Scope, principal: Principal) -> bool:
    """Whether the caller passes the route's own first check, its scope (the workspace is
    checked once the body is read: `reaches`): a replay must never show an answer to a
    caller the route would refuse (a demoted user, a key limited to other workspaces)."""
    route = scope.get("route")
    required = getattr(route, "requirement", None)
    if required is not None and not scopes.allows(principal.scopes, required):
        return False
    operation = getattr(route, "operation", None)
    limited = principal.workspace_ids is not None
    return not (limited and getattr(operation, "operation_id", None) in _WHOLE_ACCOUNT)


async def reaches(scope: Scope, principal: Principal, conn: Connection, workspace: str) -> bool:
    """Whether the caller may use the workspace the request names, as the route checks."""
    try:
        await check_workspace(conn, scope["app"].state.auth_cache, principal, workspace)
    except ServiceError:
        return False
    return True
