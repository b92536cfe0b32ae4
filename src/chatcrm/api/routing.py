"""The route table: every API operation declared once, with what the OpenAPI document says
of it (api/openapi.py), and one way to run it.

Features declare their operations on a `Routes` collection; the app adds them to its
router as `ApiRoute`s. The fast path (`Dispatch`) is derived from the app's own routes
when it starts: a route removed from the app is gone everywhere. Both paths end in the
same `ApiRoute.handle_call`, so errors are answered the same way.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Receive, Scope, Send

from chatcrm.api.call import make_call
from chatcrm.api.errors import data_problem_response, render
from chatcrm.auth import scopes
from chatcrm.core.errors import ServiceError
from chatcrm.db.errors import DataProblem
from chatcrm.people.errors import PermissionDenied
from chatcrm.records.conditional import check_no_version
from chatcrm.records.types import Schema

Endpoint = Callable[..., Awaitable[Response]]


@dataclass(frozen=True)
class Param:
    """A header or query parameter an operation reads (path parameters come from its path)."""

    name: str
    where: str  # "query" or "header"
    description: str
    required: bool = False
    schema: Schema = field(default_factory=lambda: {"type": "string"})

    def but(self, **changes: Any) -> Param:
        return Param(**{**self.__dict__, **changes})


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    operation_id: str
    summary: str
    tag: str
    message: str  # the success message
    answer: Schema | None  # the success envelope's `data` (None: null)
    params: tuple[Param, ...] = ()
    body: Schema | None = None  # the JSON request body, if any
    body_required: bool = True
    errors: tuple[int, ...] = ()  # the statuses beyond those every operation of its kind has
    etag: bool = False  # a 200 carries the record's ETag
    authenticated: bool = True
    enveloped: bool = True  # /metrics answers Prometheus text
    content_type: str = "text/plain"  # of a success that is not an envelope
    binary: bool = False  # that success is bytes (a message's media)
    description: str = ""


class ApiRoute(Route):
    """A route of the table: matched like any Starlette route, run by `handle_call`."""

    def __init__(self, operation: Operation, endpoint: Endpoint) -> None:
        super().__init__(operation.path, endpoint, name=operation.operation_id)
        # HEAD answers every GET as GET does, without its body (RFC 9110 9.3.2: every
        # general-purpose server supports GET and HEAD); the server drops the body.
        self.methods = {operation.method, *(["HEAD"] if operation.method == "GET" else [])}
        self.operation = operation
        self.endpoint_function = endpoint
        self.app = self.handle_call
        # What the caller must hold (contract J.2), from the one table of every route's
        # scope: an operation missing from it cannot be served.
        if operation.operation_id not in scopes.ROUTE_SCOPES:
            raise LookupError(f"no scope declared for {operation.operation_id} (auth/scopes.py)")
        self.requirement = scopes.ROUTE_SCOPES[operation.operation_id]
        self.segments = _segments(operation.path)
        self.param_names = tuple(s[1:-1] for s in operation.path.split("/") if s.startswith("{"))
        # Paths other routes name literally (`/api/contact/merge` for `/api/contact/{id}`):
        # never read as this route's parameter, so another method there is a 405 naming
        # the methods the path serves, not a 404 for a record called "merge".
        # Held as the parameters' values those paths would give (("merge",)).
        self.reserved: frozenset[tuple[str, ...]] = frozenset()
        # A change of something without a version (a create, an action such as a secret's
        # rotation, an update of a webhook): `If-Match` can name nothing it has.
        self.versionless = operation.method in ("POST", "PUT", "PATCH", "DELETE") and not any(
            p.name == "If-Match" for p in operation.params
        )

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        match, child = super().matches(scope)
        if (
            self.reserved
            and match is not Match.NONE
            and tuple(child["path_params"].values()) in self.reserved
        ):
            return Match.NONE, {}
        return match, child

    async def handle_call(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Run the endpoint for a request; every service error becomes its envelope."""
        request = Request(scope, receive)
        try:
            if self.operation.authenticated:
                call = make_call(request)
                required = self.requirement
                if required is not None and not scopes.allows(call.principal.scopes, required):
                    raise PermissionDenied(required[0])
                if self.versionless:
                    check_no_version(call.if_match())
                response = await self.endpoint_function(call, **scope.get("path_params", {}))
            else:
                response = await self.endpoint_function(request)
        except ServiceError as exc:
            response = render(exc)
        except DataProblem as exc:
            response = data_problem_response(exc)
        await response(scope, receive, send)


def _segments(path: str) -> tuple[str | None, ...]:
    """`/api/contact/{contactId}` → ("", "api", "contact", None): None matches any segment."""
    return tuple(None if s.startswith("{") else s for s in path.split("/"))


def reserve_literal_paths(routes: Iterable[BaseRoute]) -> None:
    """Give each route with a parameter the literal paths of the table it would match."""
    table = api_routes(routes)
    literal = [r.path.split("/") for r in table if None not in r.segments]
    for route in table:
        if None in route.segments:
            route.reserved = frozenset(
                tuple(o for p, o in zip(route.segments, path, strict=True) if p is None)
                for path in literal
                if len(path) == len(route.segments)
                and all(p is None or p == o for p, o in zip(route.segments, path, strict=True))
            )


class Routes:
    """The operations of one feature, in declaration order (the order routes match in)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.routes: list[ApiRoute] = []

    def add(self, endpoint: Endpoint, **operation: Any) -> None:
        self.routes.append(ApiRoute(Operation(tag=self.tag, **operation), endpoint))

    def operation(self, method: str, path: str, **operation: Any) -> Callable[[Endpoint], Endpoint]:
        def register(endpoint: Endpoint) -> Endpoint:
            self.add(endpoint, method=method, path=path, **operation)
            return endpoint

        return register


def api_routes(routes: Iterable[BaseRoute]) -> list[ApiRoute]:
    """The table's routes among an app's, in order (nested routers flattened)."""
    out: list[ApiRoute] = []
    for route in routes:
        nested = getattr(route, "original_router", None) or getattr(route, "routes", None)
        if isinstance(route, ApiRoute):
            out.append(route)
        elif nested is not None and not isinstance(route, Route):
            out.extend(api_routes(nested.routes if hasattr(nested, "routes") else nested))
    return out


class Dispatch:
    """The app's table routes indexed by method and number of path segments: a request is
    matched against the few routes that could take it, in the app's own order."""

    def __init__(self, routes: Iterable[ApiRoute]) -> None:
        self.candidates: dict[tuple[str, int], list[ApiRoute]] = {}
        for route in routes:
            for method in route.methods or ():
                key = (method, len(route.segments))
                self.candidates.setdefault(key, []).append(route)

    def match(self, method: str, path: str) -> tuple[ApiRoute, dict[str, str]] | None:
        parts = path.split("/")
        for route in self.candidates.get((method, len(parts)), ()):
            values = []
            for pattern, part in zip(route.segments, parts, strict=True):
                if pattern is None:
                    if not part:
                        break
                    values.append(part)
                elif pattern != part:
                    break
            else:
                if route.reserved and tuple(values) in route.reserved:
                    continue
                return route, dict(zip(route.param_names, values, strict=True))
        return None
