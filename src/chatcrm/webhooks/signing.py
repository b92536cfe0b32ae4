"""Standard Webhooks signatures (contract D.4): `v1,` + base64(HMAC-SHA256(key,
"{webhook-id}.{webhook-timestamp}.{body}")), the key being the base64-decoded part of the
secret after `whsec_`. During a rotation a delivery carries one entry per secret, the new
one first, separated by a space; a receiver accepts the delivery when any entry matches.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Sequence
from datetime import datetime

SECRET_PREFIX = "whsec_"


def secret_key(secret: str) -> bytes:
    """The HMAC key of a `whsec_…` secret."""
    encoded = secret.removeprefix(SECRET_PREFIX)
    # validate=True: a mistyped secret is an error here, not a signature nobody can check.
    return base64.b64decode(encoded, validate=True)


def sign(secret: str, *, msg_id: str, timestamp: int, body: bytes) -> str:
    """One signature entry, `v1,<base64>`."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signature_header(secrets: Sequence[str], *, msg_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` value: one entry per secret, in the order given."""
    return " ".join(sign(s, msg_id=msg_id, timestamp=timestamp, body=body) for s in secrets)


def signing_secrets(
    secret: str, previous: str | None, previous_expires_at: datetime | None, now: datetime
) -> list[str]:
    """The secrets a delivery is signed with now: the current one, then the one it replaced
    while that is still honoured (24 hours after a rotation)."""
    if previous and previous_expires_at is not None and previous_expires_at > now:
        return [secret, previous]
    return [secret]
