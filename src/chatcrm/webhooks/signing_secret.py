"""Webhook signing secrets: `whsec_` + base64 of 32 random bytes (the Standard Webhooks
form; the HMAC key is the base64-decoded part after the prefix)."""

from __future__ import annotations

import base64
import secrets

PREFIX = "whsec_"
KEY_BYTES = 32


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode("ascii")


def signing_key(secret: str) -> bytes:
    """The HMAC key a secret stands for."""
    return base64.b64decode(secret.removeprefix(PREFIX))
