"""The field table of a channel (contract K.2). `accessToken` and `appSecret` are written
on create and update and shown by no shape; `webhookUrl` is not stored: it is built from
CHATCRM_PUBLIC_URL and the id (channels/service.py)."""

from __future__ import annotations

import secrets
import string
from typing import Any

from chatcrm.channels.graph import header_safe
from chatcrm.core.errors import FieldError
from chatcrm.records.defaults import NOW, RECORD_ID, Creation, Default
from chatcrm.records.fields import FULL, NULL, OPTIONAL, REQUIRED, UPDATE, Field, FieldTable
from chatcrm.records.scalar_types import BOOLEAN, ID, TIMESTAMP, Text, Word
from chatcrm.webhooks.value_types import WebhookUrl

WHATSAPP = "whatsapp"
DEFAULT_API_BASE_URL = "https://graph.facebook.com/v21.0"
VERIFY_TOKEN_LENGTH = 32
_ALPHABET = string.ascii_letters + string.digits
WRITE_ONLY: frozenset[str] = frozenset()  # the shapes that show a secret: none


class _VerifyToken(Default):
    async def value(self, creation: Creation) -> Any:
        return "".join(secrets.choice(_ALPHABET) for _ in range(VERIFY_TOKEN_LENGTH))


class Token(Text):
    """A secret Meta gives (access token, app secret): spaces around it, as a paste brings
    them, are dropped; the rest must be printable ASCII without spaces, as Meta's are and
    as an HTTP header needs (graph.header_safe)."""

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        text = super().clean(
            field, value.strip() if isinstance(value, str) else value, nullable=nullable
        )
        if not header_safe(text):
            raise FieldError(field, "must be printable ASCII without spaces, as Meta gives it")
        return text


class PhoneNumberId(Text):
    """Meta's id of the number: spaces around it, as a paste brings them, are dropped
    (Meta's deliveries name it without them, and a duplicate is found on the trimmed
    value); it goes into the send's URL path, so it is printable ASCII without spaces,
    `/`, `?`, `#` or `%`."""

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        text = super().clean(
            field, value.strip() if isinstance(value, str) else value, nullable=nullable
        )
        if not header_safe(text) or any(c in text for c in "/?#%"):
            raise FieldError(
                field, "must be Meta's id of the number (printable ASCII without spaces, / ? # %)"
            )
        return text


class ApiBaseUrl(WebhookUrl):
    description = (
        "The Graph API's base, default https://graph.facebook.com/v21.0: an http or https "
        "URL without a query or fragment (the number's id and `/messages` follow its path); "
        "a host that is or resolves to a loopback, private, link-local, CGNAT, multicast "
        "or unspecified address is refused unless the server allows private receivers."
    )

    def clean(self, field: str, value: object, *, nullable: bool) -> Any:
        url = super().clean(field, value, nullable=nullable)
        if isinstance(url, str) and ("?" in url or "#" in url):
            raise FieldError(field, "must have no query or fragment: the API's base path only")
        return url


# fmt: off
CHANNEL = FieldTable("channel", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("type", Word((WHATSAPP,), "must be whatsapp"), "type", REQUIRED),
    Field("name", Text(200, nonblank=True), "name", REQUIRED, UPDATE),
    Field("phoneNumberId", PhoneNumberId(64, nonblank=True), "phone_number_id", REQUIRED,
          description="Meta's id of the WhatsApp Business number (not the number itself)."),
    Field("displayPhoneNumber", Text(64), "display_phone_number", NULL, OPTIONAL, UPDATE),
    Field("apiBaseUrl", ApiBaseUrl(), "api_base_url", OPTIONAL, UPDATE,
          default=DEFAULT_API_BASE_URL),
    Field("verifyToken", Text(200, nonblank=True), "verify_token", OPTIONAL, UPDATE,
          default=_VerifyToken(),
          description="What Meta's verification request must carry (default: 32 random "
                      "letters and digits)."),
    Field("enabled", BOOLEAN, "enabled", UPDATE, default=True),
    Field("createdAt", TIMESTAMP, "created_at", default=NOW),
    Field("updatedAt", TIMESTAMP, "updated_at", default=NOW),
    Field("accessToken", Token(4096, nonblank=True), "access_token", REQUIRED, UPDATE,
          shapes=WRITE_ONLY, description="Write-only: never shown."),
    Field("appSecret", Token(200, nonblank=True), "app_secret", REQUIRED, UPDATE,
          shapes=WRITE_ONLY, description="Write-only: never shown."),
])
# fmt: on
SHAPE = FULL
