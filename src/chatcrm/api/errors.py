"""Every failure rendered in the envelope: service errors, framework errors, last resorts."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import BaseRoute, Match

from chatcrm.api.envelope import error_response
from chatcrm.core import messages as m
from chatcrm.core.errors import (
    POOL_BUSY,
    ROLLED_BACK,
    FieldError,
    NotFound,
    ServiceError,
    ServiceUnavailable,
    ValidationFailed,
)
from chatcrm.db.errors import DataProblem, RolledBack, Unavailable, translate
from chatcrm.db.pg_pool import PoolExhausted

log = logging.getLogger("chatcrm.errors")


def render(exc: ServiceError) -> Response:
    """The envelope answer of a service error."""
    return error_response(
        status=exc.status,
        error_code=exc.error_code,
        message=exc.message,
        data=exc.data(),
        headers=exc.headers,
    )


def internal_error() -> Response:
    return render(ServiceError("An unexpected error occurred; it has been logged."))


def is_unavailable(exc: BaseException) -> bool:
    """Errors that mean "the database cannot be reached right now", not a bug."""
    return isinstance(translate(exc), Unavailable)


def unavailable(exc: BaseException) -> ServiceUnavailable:
    """The 503 of an `is_unavailable` error: a transaction the database undid because of
    another one says so, rather than that the database is unreachable."""
    if isinstance(translate(exc), RolledBack):
        return ServiceUnavailable(ROLLED_BACK)
    cause = exc.__cause__ if isinstance(exc, Unavailable) else exc
    if isinstance(cause, PoolExhausted):  # the database may be fine: this server is busy
        return ServiceUnavailable(POOL_BUSY)
    return ServiceUnavailable()


def _field_name(loc: tuple[Any, ...]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) or "request"


def all_routes(routes: Iterable[BaseRoute]) -> list[BaseRoute]:
    """The routes of an app, flattened (recent FastAPI keeps included routers nested)."""
    out: list[BaseRoute] = []
    for route in routes:
        nested = getattr(route, "original_router", None)
        out.extend(all_routes(nested.routes) if nested is not None else [route])
    return out


def _allowed_methods(request: Request) -> str:
    """Every method some route serves at this path (Starlette names only the first route)."""
    methods: set[str] = set()
    for route in all_routes(request.app.router.routes):
        match, _ = route.matches({**request.scope, "method": "\0"})
        if match != Match.NONE:
            methods |= getattr(route, "methods", None) or set()
    return ", ".join(sorted(methods))


def data_problem_response(exc: DataProblem) -> Response:
    # Validation should stop these first; never let a driver message reach the client.
    log.warning("database rejected a value: %s", exc)
    return render(ValidationFailed([FieldError("request", "a value is out of range")]))


def install(app: FastAPI) -> None:
    """Register the handlers that turn every failure into the envelope."""

    @app.exception_handler(ServiceError)
    async def _service_error(_: Request, exc: ServiceError) -> Response:
        return render(exc)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return render(NotFound(f"No route matches {request.method} {request.url.path}."))
        if exc.status_code == 405:
            allow = _allowed_methods(request) or (exc.headers or {}).get("Allow", "")
            return render(
                ServiceError(
                    f"Method {request.method} is not allowed on {request.url.path}"
                    + (f"; allowed: {allow}." if allow else "."),
                    status=405,
                    error_code=m.METHOD_NOT_ALLOWED,
                    headers={"Allow": allow} if allow else None,
                )
            )
        return render(
            ServiceError(str(exc.detail), status=exc.status_code, error_code=m.BAD_REQUEST)
        )

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> Response:
        errors = [
            FieldError(_field_name(tuple(e.get("loc", ()))), str(e.get("msg", "invalid")))
            for e in exc.errors()
        ]
        return render(ValidationFailed(errors or [FieldError("request", "invalid request")]))

    @app.exception_handler(DataProblem)
    async def _data_error(_: Request, exc: DataProblem) -> Response:
        return data_problem_response(exc)
