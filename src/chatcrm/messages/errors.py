"""Errors of messages and sending (contract K.6)."""

from __future__ import annotations

from chatcrm.core import messages as m
from chatcrm.core.errors import ServiceError


class MessageNotFound(ServiceError):
    status, error_code = 404, m.MESSAGE_NOT_FOUND

    def __init__(self, message_id: str) -> None:
        super().__init__(f"No message with id '{message_id}' in this workspace.")


class MessageNotFailed(ServiceError):
    status, error_code = 409, m.MESSAGE_NOT_FAILED

    def __init__(self, message_id: str, status: str) -> None:
        super().__init__(
            f"Message '{message_id}' is {status}: only a failed message can be retried."
        )


class NoChannel(ServiceError):
    status, error_code = 422, m.NO_CHANNEL


class WindowClosed(ServiceError):
    status, error_code = 422, m.WINDOW_CLOSED

    def __init__(self) -> None:
        super().__init__(
            "The 24-hour window is closed: the contact's last message came more than 24 hours "
            "ago (or never). Send a template instead."
        )


class NoMedia(ServiceError):
    status, error_code = 404, m.NOT_FOUND

    def __init__(self, message_id: str) -> None:
        super().__init__(f"Message '{message_id}' has no media.")


class MediaGone(ServiceError):
    status, error_code = 404, m.NOT_FOUND

    def __init__(self, message_id: str, why: str) -> None:
        super().__init__(f"Message '{message_id}' has no media any more at the channel ({why}).")
