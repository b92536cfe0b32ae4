"""API key format: `ccrm_<key id, 32 hex>_<secret>`. Only a hash of the secret is stored."""

import hashlib
import hmac
import re
import secrets

PREFIX = "ccrm_"
_KEY_RE = re.compile(r"^ccrm_([0-9a-f]{32})_([A-Za-z0-9_\-]{20,100})$")


def hash_secret(secret: str) -> str:
    # The secret is 256 random bits, so a plain SHA-256 is enough (no stretching needed).
    return hashlib.sha256(secret.encode()).hexdigest()


def new_key(key_id: str) -> tuple[str, str]:
    """A fresh key for `key_id`: (the key to show once, the hash to store)."""
    secret = secrets.token_urlsafe(32)
    return f"{PREFIX}{key_id.replace('-', '')}_{secret}", hash_secret(secret)


def parse_key(raw: str) -> tuple[str, str] | None:
    """(key id, secret) of a well-formed key, else None."""
    match = _KEY_RE.fullmatch(raw)
    if match is None:
        return None
    h = match.group(1)
    key_id = f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
    return key_id, match.group(2)


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), stored_hash)
