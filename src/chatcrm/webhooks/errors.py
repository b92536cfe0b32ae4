"""Errors of webhooks: an unknown endpoint, a workspace that has as many as it may."""

from __future__ import annotations

from chatcrm.core import messages as m
from chatcrm.core.errors import FieldError, ServiceError


class WebhookNotFound(ServiceError):
    status, error_code = 404, m.WEBHOOK_NOT_FOUND

    def __init__(self, webhook_id: str) -> None:
        super().__init__(f"No webhook with id '{webhook_id}' in this workspace.")


class TooManyWebhooks(ServiceError):
    """A well-formed create the workspace cannot take: 422 like any value the service
    refuses (contract D.4 sets the limit, not its error); `workspaceId` is the field at
    fault, as the workspace is full whatever the body says."""

    status, error_code = 422, m.VALIDATION_ERROR

    def __init__(self, limit: int) -> None:
        message = f"already has {limit} webhooks, the most a workspace may have"
        super().__init__(
            f"This workspace already has {limit} webhooks, the most it may have: delete one "
            "before creating another.",
            errors=[FieldError("workspaceId", message)],
        )
