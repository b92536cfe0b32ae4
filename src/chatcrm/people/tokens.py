"""Random tokens shown once and stored only as SHA-256 hashes: session cookies, invitation
and reset links, recovery codes. 32 random bytes need no stretching."""

from __future__ import annotations

import hashlib
import secrets


def new_token() -> tuple[str, str]:
    """(the token to hand out, its hash to store)."""
    token = secrets.token_urlsafe(32)
    return token, token_hash(token)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
