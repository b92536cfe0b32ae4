"""One error type for the whole service; handlers turn everything into the envelope."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.routing import BaseRoute, Match

from chatcrm.api import messages as m
from chatcrm.api.envelope import error_response
from chatcrm.core.values import FieldError
from chatcrm.db.errors import DataProblem, Unavailable, translate

log = logging.getLogger("chatcrm.errors")

# Seconds a client should wait before retrying when the database is unreachable.
RETRY_AFTER_SECONDS = 2


class ApiError(Exception):
    """An answer other than 200, in the envelope."""

    status: int = 500
    error_code: str = m.INTERNAL_ERROR

    def __init__(
        self,
        message: str,
        *,
        errors: Iterable[FieldError] | None = None,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        status: int | None = None,
        error_code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.errors = list(errors) if errors is not None else None
        self.extra = dict(extra) if extra else None
        self.headers = dict(headers) if headers else None
        if status is not None:
            self.status = status
        if error_code is not None:
            self.error_code = error_code

    def data(self) -> dict[str, Any] | None:
        if self.errors is None and self.extra is None:
            return None
        out: dict[str, Any] = {
            "errors": [{"field": e.field, "message": e.message} for e in self.errors or []]
        }
        if self.extra:
            out.update(self.extra)
        return out

    def response(self) -> Response:
        return error_response(
            status=self.status,
            error_code=self.error_code,
            message=self.message,
            data=self.data(),
            headers=self.headers,
        )


class BadRequest(ApiError):
    status, error_code = 400, m.BAD_REQUEST

    @classmethod
    def field(cls, field: str, message: str) -> BadRequest:
        return cls(message, errors=[FieldError(field, message)])


class InvalidContinuationToken(ApiError):
    status, error_code = 400, m.INVALID_CONTINUATION_TOKEN


class Unauthorized(ApiError):
    status, error_code = 401, m.UNAUTHORIZED

    def __init__(self, message: str) -> None:
        super().__init__(message, headers={"WWW-Authenticate": 'Bearer realm="chatcrm"'})


class WorkspaceRequired(ApiError):
    status, error_code = 401, m.WORKSPACE_REQUIRED


class Forbidden(ApiError):
    status, error_code = 403, m.FORBIDDEN


class NotFound(ApiError):
    status, error_code = 404, m.NOT_FOUND


class ContactNotFound(ApiError):
    status, error_code = 404, m.CONTACT_NOT_FOUND

    def __init__(self, contact_id: str) -> None:
        super().__init__(f"No contact with id '{contact_id}' in this workspace.")


class OpportunityNotFound(ApiError):
    status, error_code = 404, m.OPPORTUNITY_NOT_FOUND

    def __init__(self, opportunity_id: str) -> None:
        super().__init__(f"No opportunity with id '{opportunity_id}' in this workspace.")


class Conflict(ApiError):
    status = 409


class PreconditionFailed(ApiError):
    status, error_code = 412, m.PRECONDITION_FAILED


class PayloadTooLarge(ApiError):
    status, error_code = 413, m.PAYLOAD_TOO_LARGE

    def __init__(self, limit: int) -> None:
        super().__init__(f"The request body is larger than the limit of {limit} bytes.")


class UnsupportedMediaType(ApiError):
    status, error_code = 415, m.UNSUPPORTED_MEDIA_TYPE


class ValidationFailed(ApiError):
    status, error_code = 422, m.VALIDATION_ERROR

    def __init__(self, errors: list[FieldError]) -> None:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(
            f"Invalid value for '{first.field}': {first.message}{more}.", errors=errors
        )


class RateLimited(ApiError):
    status, error_code = 429, m.RATE_LIMITED


class ServiceUnavailable(ApiError):
    status, error_code = 503, m.SERVICE_UNAVAILABLE

    def __init__(self, message: str = "The database is unreachable; retry shortly.") -> None:
        super().__init__(message, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})


def internal_error() -> Response:
    return ApiError("An unexpected error occurred; it has been logged.").response()


def is_unavailable(exc: BaseException) -> bool:
    """Errors that mean "the database cannot be reached right now", not a bug."""
    return isinstance(translate(exc), Unavailable)


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
    return ValidationFailed([FieldError("request", "a value is out of range")]).response()


def install(app: FastAPI) -> None:
    """Register the handlers that turn every failure into the envelope."""

    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> Response:
        return exc.response()

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code == 404:
            return NotFound(f"No route matches {request.method} {request.url.path}.").response()
        if exc.status_code == 405:
            allow = _allowed_methods(request) or (exc.headers or {}).get("Allow", "")
            return ApiError(
                f"Method {request.method} is not allowed on {request.url.path}"
                + (f"; allowed: {allow}." if allow else "."),
                status=405,
                error_code=m.METHOD_NOT_ALLOWED,
                headers={"Allow": allow} if allow else None,
            ).response()
        return ApiError(
            str(exc.detail), status=exc.status_code, error_code=m.BAD_REQUEST
        ).response()

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_: Request, exc: RequestValidationError) -> Response:
        errors = [
            FieldError(_field_name(tuple(e.get("loc", ()))), str(e.get("msg", "invalid")))
            for e in exc.errors()
        ]
        return ValidationFailed(errors or [FieldError("request", "invalid request")]).response()

    @app.exception_handler(DataProblem)
    async def _data_error(_: Request, exc: DataProblem) -> Response:
        return data_problem_response(exc)


class DuplicateContact(Conflict):
    error_code = m.DUPLICATE_CONTACT

    def __init__(self, field: str, existing_id: str) -> None:
        what = "email" if field == "email" else "phone number"
        super().__init__(
            f"Another contact of this workspace already has this {what} (id {existing_id}).",
            errors=[FieldError(field, f"is already used by contact {existing_id}")],
            extra={"existingId": existing_id},
        )
