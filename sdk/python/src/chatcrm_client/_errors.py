"""The exceptions of the client: one class per kind of failure, so callers catch what they
can handle (`except NotFound`) and let the rest through."""

from __future__ import annotations

from typing import Any


class ChatcrmError(Exception):
    """Anything this client raises on purpose."""


class ApiError(ChatcrmError):
    """The service answered with an error envelope (or a non-2xx answer of a proxy)."""

    def __init__(
        self,
        status: int,
        error_code: str | None,
        message: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        data: Any = None,
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {error_code or ''}: {message}".replace(" :", ":"))
        self.status = status
        self.error_code = error_code
        self.message = message
        # [{"field", "message"}...] of a validation error; [] when the answer names none.
        self.errors = errors or []
        # The envelope's whole `data` (e.g. `existingId` of a duplicate contact).
        self.data = data
        self.request_id = request_id
        self.retry_after = retry_after


class BadRequest(ApiError):
    """400: the request is malformed (unknown field, bad token, bad cursor…)."""


class Unauthorized(ApiError):
    """401: no valid API key, or no workspace where one is required."""


class Forbidden(ApiError):
    """403: the workspace is not one the caller may use (FORBIDDEN), or the call is
    outside its role or key scopes (PERMISSION_DENIED, `data["required"]` names the scope)."""


class NotFound(ApiError):
    """404: unknown id (or of another workspace), or unknown route."""


class MethodNotAllowed(ApiError):
    """405."""


class Conflict(ApiError):
    """409: a duplicate contact, user or channel, a reused idempotency key, a restore
    that collides, the last owner, a retry of a message that has not failed."""


class PreconditionFailed(ApiError):
    """412: the record changed since the ETag given as `if_match`."""


class PayloadTooLarge(ApiError):
    """413: the body is over the service's limit."""


class UnsupportedMediaType(ApiError):
    """415."""


class ValidationFailed(ApiError):
    """422: well-formed, but a value is invalid (`errors` names the fields), or a message
    cannot be sent (NO_CHANNEL, WINDOW_CLOSED)."""


class RateLimited(ApiError):
    """429: too many requests (after the retries); `retry_after` says when to try again."""


class ServerError(ApiError):
    """5xx: the service failed or is unavailable (after the retries)."""


class ClientError(ApiError):
    """Another 4xx, which the service itself does not answer (a proxy's 408 after the
    retries, 410, 423…)."""


class UnexpectedStatus(ApiError):
    """An answer neither a success nor an error status (a proxy's redirect, say)."""


class ConnectionFailed(ChatcrmError):
    """The service could not be reached, or the connection broke (after the retries); the
    httpx error is the `__cause__`."""


class WorkspaceNotChosen(ChatcrmError):
    """No `workspace_id` was given and the account has not exactly one workspace."""


class WebhookVerificationError(ChatcrmError):
    """A webhook delivery whose signature or timestamp does not check out."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    412: PreconditionFailed,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: ValidationFailed,
    429: RateLimited,
}


def error_class(status: int) -> type[ApiError]:
    """Always a subclass (contract F): the service's own statuses by name, else by range."""
    if status >= 500:
        return ServerError
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ClientError if 400 <= status < 500 else UnexpectedStatus
