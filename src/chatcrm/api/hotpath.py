"""The routes bots call on every chat message, dispatched without FastAPI's machinery.

FastAPI's routing and dependency resolution cost about 100 µs of the ~400 µs of Python a
read took (docs/performance.md). The handful of hot routes below are matched directly and run the
same endpoint functions with the same `Caller`; everything else (and the OpenAPI document)
goes through FastAPI as usual. Errors are answered exactly as FastAPI's handlers would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from chatcrm.api.deps import Call, get_call
from chatcrm.api.errors import data_problem_response, render
from chatcrm.core.errors import ServiceError
from chatcrm.db.errors import DataProblem

Endpoint = Callable[..., Awaitable[Response]]


class HotRoutes:
    def __init__(
        self,
        app: ASGIApp,
        *,
        get_by_id: dict[str, tuple[Endpoint, BaseRoute]],
        exact: dict[tuple[str, str], tuple[Endpoint, BaseRoute]],
    ) -> None:
        self.app = app
        # GET /api/<resource>/{id}: resource → (endpoint, route)
        self.get_by_id = get_by_id
        # (method, path) → (endpoint, route)
        self.exact = exact

    def _match(self, method: str, path: str) -> tuple[Endpoint, BaseRoute, tuple[Any, ...]] | None:
        hit = self.exact.get((method, path))
        if hit is not None:
            return hit[0], hit[1], ()
        if method == "GET":
            parts = path.split("/")
            # ["", "api", resource, id]: exactly what FastAPI's /api/<resource>/{id} matches
            # once the exact paths (searches) above have been tried.
            if len(parts) == 4 and parts[1] == "api" and parts[3]:
                found = self.get_by_id.get(parts[2])
                if found is not None:
                    return found[0], found[1], (parts[3],)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        found = self._match(scope["method"], scope["path"]) if scope["type"] == "http" else None
        if found is None:
            await self.app(scope, receive, send)
            return
        endpoint, route, args = found
        scope["route"] = route  # metrics and logs label requests by route template
        try:
            call: Call = await get_call(Request(scope, receive))
            response = await endpoint(*args, call)
        except ServiceError as exc:
            response = render(exc)
        except DataProblem as exc:
            response = data_problem_response(exc)
        await response(scope, receive, send)
