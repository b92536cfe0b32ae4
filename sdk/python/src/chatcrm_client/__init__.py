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
from chatcrm_client._messages import Media, Template
from chatcrm_client._people import Invitation, NewKey
from chatcrm_client._records import (
    Activity,
    ApiKey,
    AuditEntry,
    Channel,
    Contact,
    Delivery,
    Event,
    Message,
    Opportunity,
    Record,
    Tag,
    User,
    Webhook,
    Workspace,
)
from chatcrm_client._verify import verify_webhook
from chatcrm_client._version import VERSION

__version__ = VERSION
__all__ = [
    "Activity",
    "ApiError",
    "ApiKey",
    "AsyncClient",
    "AuditEntry",
    "BadRequest",
    "Channel",
    "ChatcrmError",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "Contact",
    "Delivery",
    "Event",
    "Forbidden",
    "Invitation",
    "Media",
    "Message",
    "MethodNotAllowed",
    "NewKey",
    "NotFound",
    "Opportunity",
    "PayloadTooLarge",
    "PreconditionFailed",
    "RateLimited",
    "Record",
    "ServerError",
    "Tag",
    "Template",
    "Unauthorized",
    "UnsupportedMediaType",
    "User",
    "ValidationFailed",
    "Webhook",
    "WebhookVerificationError",
    "Workspace",
    "WorkspaceNotChosen",
    "__version__",
    "verify_webhook",
]
