"""The Python client of the chatcrm HTTP API (contract F): `Client` (blocking) and
`AsyncClient` (asyncio) with the same surface, typed errors, retries that never create
twice, paging, the events stream and `verify_webhook`. Guide: docs/sdk.md."""

from chatcrm_client._client import AsyncClient, Client
from chatcrm_client._errors import (
    ApiError,
    BadRequest,
    ChatcrmError,
    Conflict,
    ConnectionFailed,
    Forbidden,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    PreconditionFailed,
    RateLimited,
    ServerError,
    Unauthorized,
    UnsupportedMediaType,
    ValidationFailed,
    WebhookVerificationError,
    WorkspaceNotChosen,
)
from chatcrm_client._records import (
    Activity,
    Contact,
    Delivery,
    Event,
    Opportunity,
    Record,
    Tag,
    Webhook,
    Workspace,
)
from chatcrm_client._verify import verify_webhook
from chatcrm_client._version import VERSION

__version__ = VERSION
__all__ = [
    "Activity",
    "ApiError",
    "AsyncClient",
    "BadRequest",
    "ChatcrmError",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "Contact",
    "Delivery",
    "Event",
    "Forbidden",
    "MethodNotAllowed",
    "NotFound",
    "Opportunity",
    "PayloadTooLarge",
    "PreconditionFailed",
    "RateLimited",
    "Record",
    "ServerError",
    "Tag",
    "Unauthorized",
    "UnsupportedMediaType",
    "ValidationFailed",
    "Webhook",
    "WebhookVerificationError",
    "Workspace",
    "WorkspaceNotChosen",
    "__version__",
    "verify_webhook",
]
