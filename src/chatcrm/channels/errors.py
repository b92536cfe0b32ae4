"""Errors of channels (contract K.6)."""

from __future__ import annotations

from chatcrm.core import messages as m
from chatcrm.core.errors import ServiceError


class ChannelNotFound(ServiceError):
    status, error_code = 404, m.CHANNEL_NOT_FOUND

    def __init__(self, channel_id: str) -> None:
        super().__init__(f"No channel with id '{channel_id}'.")


class DuplicateChannel(ServiceError):
    status, error_code = 409, m.DUPLICATE_CHANNEL

    def __init__(self, phone_number_id: str) -> None:
        super().__init__(f"The phoneNumberId '{phone_number_id}' already belongs to a channel.")
