"""The answers other than 200 (contract section 5): a status, a stable code, a sentence a
person can act on, and the fields at fault.

Raised by any layer; the HTTP layer (api/errors.py) renders them in the envelope. Errors of
one resource (an unknown contact, a duplicate) live in that resource's package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chatcrm.core import messages as m


class FieldError(ValueError):
    """An invalid value of one field; collected into a 422 `VALIDATION_ERROR`."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message

    def each(self) -> list[FieldError]:
        """The errors this stands for: itself, or every element's of a list (FieldErrors)."""
        return [self]


class FieldErrors(FieldError):
    """Several invalid elements of one list value (`tags[0]`, `tags[2]`): each is reported,
    not only the first, as every invalid value of a body is."""

    def __init__(self, errors: list[FieldError]) -> None:
        super().__init__(errors[0].field, errors[0].message)
        self.errors = errors

    def each(self) -> list[FieldError]:
        return list(self.errors)


def raise_any(errors: list[FieldError]) -> None:
    """Raise the errors found in a list's elements, if any."""
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise FieldErrors(errors)


class ServiceError(Exception):
    """An answer other than 200, with everything the envelope shows."""

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
        """The envelope's `data`: null, or `{errors: [{field, message}], ...extra}`."""
        if self.errors is None and self.extra is None:
            return None
        out: dict[str, Any] = {
            "errors": [{"field": e.field, "message": e.message} for e in self.errors or []]
        }
        if self.extra:
            out.update(self.extra)
        return out


class BadRequest(ServiceError):
    status, error_code = 400, m.BAD_REQUEST

    @classmethod
    def field(cls, field: str, message: str) -> BadRequest:
        return cls(message, errors=[FieldError(field, message)])


class InvalidContinuationToken(ServiceError):
    status, error_code = 400, m.INVALID_CONTINUATION_TOKEN


class Unauthorized(ServiceError):
    status, error_code = 401, m.UNAUTHORIZED

    def __init__(self, message: str) -> None:
        super().__init__(message, headers={"WWW-Authenticate": 'Bearer realm="chatcrm"'})


class WorkspaceRequired(ServiceError):
    status, error_code = 401, m.WORKSPACE_REQUIRED


class Forbidden(ServiceError):
    status, error_code = 403, m.FORBIDDEN


class NotFound(ServiceError):
    status, error_code = 404, m.NOT_FOUND


class Conflict(ServiceError):
    status = 409


class PreconditionFailed(ServiceError):
    status, error_code = 412, m.PRECONDITION_FAILED


class PayloadTooLarge(ServiceError):
    status, error_code = 413, m.PAYLOAD_TOO_LARGE

    def __init__(self, limit: int) -> None:
        super().__init__(f"The request body is larger than the limit of {limit} bytes.")


class UnsupportedMediaType(ServiceError):
    status, error_code = 415, m.UNSUPPORTED_MEDIA_TYPE


class ValidationFailed(ServiceError):
    status, error_code = 422, m.VALIDATION_ERROR

    def __init__(self, errors: list[FieldError]) -> None:
        first = errors[0]
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        super().__init__(
            f"Invalid value for '{first.field}': {first.message}{more}.", errors=errors
        )


def require_valid(errors: list[FieldError]) -> None:
    """Raise every collected field error at once (one 422), if there is any."""
    if errors:
        raise ValidationFailed(errors)


class RateLimited(ServiceError):
    status, error_code = 429, m.RATE_LIMITED


# Seconds a client should wait before retrying when the database is unreachable.
RETRY_AFTER_SECONDS = 2
DATABASE_UNREACHABLE = "The database is unreachable; retry shortly."
POOL_BUSY = "Every database connection of this server is in use; retry shortly."
# A deadlock or serialization failure: the database is fine, the request met another.
ROLLED_BACK = (
    "Another request changed the same data at the same moment, so this one was undone; retry it."
)


class ServiceUnavailable(ServiceError):
    status, error_code = 503, m.SERVICE_UNAVAILABLE

    def __init__(self, message: str = DATABASE_UNREACHABLE) -> None:
        super().__init__(message, headers={"Retry-After": str(RETRY_AFTER_SECONDS)})
