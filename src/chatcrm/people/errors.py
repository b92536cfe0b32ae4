"""The refusals of contract J.7."""

from __future__ import annotations

from typing import Any

from chatcrm.core import messages as m
from chatcrm.core.errors import ServiceError


class InvalidToken(ServiceError):
    status, error_code = 400, m.INVALID_TOKEN

    def __init__(self) -> None:
        super().__init__("The link is not valid: it is unknown, was already used, or expired.")


class InvalidCredentials(ServiceError):
    status, error_code = 401, m.INVALID_CREDENTIALS

    def __init__(self) -> None:
        super().__init__("The e-mail or the password is not right.")


class TwoFactorRequired(ServiceError):
    status, error_code = 401, m.TWO_FACTOR_REQUIRED

    def __init__(self, *, wrong: bool = False, used: bool = False) -> None:
        # The password was right: saying why the code was refused tells nothing new.
        if used:
            said = (
                "This code was used already: wait for the next code of your authenticator "
                "app (or enter an unused recovery code)."
            )
        elif wrong:
            said = (
                "The code is not right: enter the current code of your authenticator app "
                "(or an unused recovery code)."
            )
        else:
            said = "Enter the code of your authenticator app (or a recovery code)."
        super().__init__(said)


class SessionExpired(ServiceError):
    status, error_code = 401, m.SESSION_EXPIRED

    def __init__(self) -> None:
        super().__init__("The session has ended: sign in again.")


class PermissionDenied(ServiceError):
    status, error_code = 403, m.PERMISSION_DENIED

    def __init__(self, required: str, message: str | None = None) -> None:
        super().__init__(message or f"This needs the permission '{required}'.")
        self.required = required

    def data(self) -> dict[str, Any] | None:
        return {"required": self.required}


class CsrfFailed(ServiceError):
    status, error_code = 403, m.CSRF_FAILED

    def __init__(self, message: str) -> None:
        super().__init__(message)


class UserNotFound(ServiceError):
    status, error_code = 404, m.USER_NOT_FOUND

    def __init__(self, user_id: str) -> None:
        super().__init__(f"No user with id '{user_id}' in this account.")


class KeyNotFound(ServiceError):
    status, error_code = 404, m.NOT_FOUND

    def __init__(self, key_id: str) -> None:
        super().__init__(f"No API key with id '{key_id}' in this account.")


class DuplicateUser(ServiceError):
    status, error_code = 409, m.DUPLICATE_USER

    def __init__(self) -> None:
        super().__init__("A user with this e-mail address already exists.")


class LastOwner(ServiceError):
    status, error_code = 409, m.LAST_OWNER

    def __init__(self) -> None:
        super().__init__("The account must keep at least one active owner.")


class TwoFactorOn(ServiceError):
    status, error_code = 409, m.TWO_FACTOR_ON

    def __init__(self) -> None:
        super().__init__(
            "Two-factor is on: turn it off first (DELETE /api/me/2fa with your password), "
            "then set it up again."
        )


class TooManyAttempts(ServiceError):
    status, error_code = 429, m.TOO_MANY_ATTEMPTS

    def __init__(self, retry_after: int) -> None:
        super().__init__(
            f"Too many failed sign-ins: try again in {retry_after} s.",
            headers={"Retry-After": str(retry_after)},
        )
