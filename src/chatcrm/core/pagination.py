"""Keyset pagination with opaque, signed continuation tokens.

A token carries the position after which the next page starts (`created_at`, `id` of the
last record shown), the scope it belongs to (resource kind and workspace) and a digest of
the filters it was made with; it is signed with a key kept in the database, so every
process and node accepts every other's tokens. `pageSize` is not bound: it may change from
page to page.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from chatcrm.core.errors import InvalidContinuationToken

DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 100
_VERSION = 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MAX_TOKEN_LENGTH = 1024


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    """Strict: only the exact text _b64 produces decodes (base64 would otherwise accept
    variants of the last character whose spare bits differ, and stray characters)."""
    data = base64.urlsafe_b64decode(text.encode("ascii") + b"=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not canonical base64")
    return data


def micros(value: datetime) -> int:
    return (value - _EPOCH) // timedelta(microseconds=1)


def from_micros(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


def filters_digest(filters: tuple[Any, ...]) -> str:
    """A short digest of the normalised filters a token was made with (in a fixed order)."""
    canonical = orjson.dumps(filters, option=orjson.OPT_NAIVE_UTC, default=str)
    return hashlib.sha256(canonical).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Position:
    """Where the previous page ended: the sort key of its last record."""

    created_at: datetime
    id: str


class TokenCodec:
    def __init__(self, key: bytes) -> None:
        self._key = key

    def _sign(self, payload: bytes) -> bytes:
        return hmac.new(self._key, payload, hashlib.sha256).digest()[:16]

    def encode(self, *, scope: str, digest: str, position: Position) -> str:
        payload = orjson.dumps([_VERSION, scope, digest, micros(position.created_at), position.id])
        return f"{_b64(payload)}.{_b64(self._sign(payload))}"

    def decode(self, token: str, *, scope: str, digest: str) -> Position:
        invalid = InvalidContinuationToken(
            "The continuationToken is not valid for this list: pass back the token exactly as "
            "received, with the same filters, or omit it to start from the first page."
        )
        if not token or len(token) > _MAX_TOKEN_LENGTH or token.count(".") != 1:
            raise invalid
        body, signature = token.split(".")
        try:
            payload = _unb64(body)
            given = _unb64(signature)
        except (ValueError, TypeError, UnicodeEncodeError) as exc:
            raise invalid from exc
        if not hmac.compare_digest(given, self._sign(payload)):
            raise invalid
        try:
            version, token_scope, token_digest, created, record_id = orjson.loads(payload)
        except (orjson.JSONDecodeError, ValueError, TypeError) as exc:
            raise invalid from exc
        if version != _VERSION or token_scope != scope or token_digest != digest:
            raise invalid
        if not isinstance(created, int) or not isinstance(record_id, str):
            raise invalid
        return Position(created_at=from_micros(created), id=record_id)
