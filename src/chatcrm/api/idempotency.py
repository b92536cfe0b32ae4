"""`Idempotency-Key` on POST: the first answer is stored and replayed, never done twice.

The key is claimed, the request handled and its answer stored in the request's ONE
database transaction (the handler's writes nest in it as a savepoint, undone when its
answer is an error). So either the record and the stored answer both exist, or neither
does; a concurrent request with the same key waits on the claim (PostgreSQL row lock /
SQLite write lock) and then replays the answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import random
import re
from datetime import timedelta
from decimal import Decimal
from typing import Any

import orjson
from sqlalchemy import bindparam, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from chatcrm.api import headers
from chatcrm.api.body import parse_json
from chatcrm.api.errors import render
from chatcrm.api.idempotent_reach import Refused, allowed, reaches, workspace_named
from chatcrm.api.state import STATE_CONNECTION, STATE_PRINCIPAL
from chatcrm.auth.service import USER, Principal
from chatcrm.core import messages as m
from chatcrm.core.errors import BadRequest, Conflict, ServiceError
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection, Database, Row
from chatcrm.db.schema import idempotency_keys

log = logging.getLogger("chatcrm.idempotency")

TTL = timedelta(hours=24)
HEADER = b"idempotency-key"
_KEY_RE = re.compile(r"^[\x21-\x7e]{1,255}$")
_STORED_HEADERS = (b"content-type", b"etag")
_MAX_PATH = 512


class KeyReused(Conflict):
    error_code = m.IDEMPOTENCY_KEY_REUSED


def _canonical(value: Any) -> Any:
    """JSON as parsed: key order, spacing and number spelling (1.50 vs 1.5) do not count."""
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, Decimal):
        if not value.is_finite():  # pragma: no cover - the parser refuses NaN and Infinity
            return str(value)
        if value.copy_abs() < 2**63 and value == value.to_integral_value():
            return int(value)
        with contextlib.suppress(ArithmeticError):  # exponent beyond the context: keep it
            value = value.normalize()
        return orjson.Fragment(str(value).encode())
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 2**63:
        return orjson.Fragment(str(value).encode())
    return value


_NOT_JSON = object()  # a body the handler will refuse: compared as its bytes


def _parsed_body(body: bytes) -> Any:
    """The body as parsed JSON (read once, for the fingerprint and the workspace it
    names), or _NOT_JSON."""
    try:
        return parse_json(body)
    except ServiceError:
        return _NOT_JSON


def request_hash(body: bytes, parsed: Any, workspace: str | None, caller: str = "") -> str:
    """The request as far as the key covers it: the body as parsed JSON (`parsed`), the
    workspace it is for (`workspace_named`: the same body sent to another workspace is
    another request, not a retry), and, for a person, who (`caller`: a user's answer is
    replayed to that user only, whose role and assigned-only view made it)."""
    return _digest(f"{caller}\n{workspace or ''}\n", body, parsed)


def earlier_request_hash(body: bytes, parsed: Any, workspace: str | None) -> str:
    """The same request's fingerprint as versions before people (J) wrote it: no caller
    line. An answer stored by such a version before an upgrade (kept 24 hours) is still
    the answer to a key's retry after it, not a 409."""
    return _digest(f"{workspace or ''}\n", body, parsed)


def _digest(prefix: str, body: bytes, parsed: Any) -> str:
    if parsed is _NOT_JSON:
        canonical = b"raw:" + body
    else:
        canonical = orjson.dumps(_canonical(parsed), option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(prefix.encode() + canonical).hexdigest()


def _storable(status: int, headers: list[tuple[bytes, bytes]]) -> bool:
    # Retryable answers are not stored: the client is meant to try again. Nor is an
    # answer that holds a secret (marked `Cache-Control: no-store`: a new key, a link, a
    # two-factor secret): shown once, it is never written down in clear; a retry of such
    # a request does it again.
    if status >= 500 or status == 429:
        return False
    return not any(k.lower() == b"cache-control" and b"no-store" in v for k, v in headers)


_t = idempotency_keys.c
_PK = (
    _t.account_id == bindparam("_account"),
    _t.method == bindparam("_method"),
    _t.path == bindparam("_path"),
    _t.key == bindparam("_key"),
)
_DELETE_EXPIRED = delete(idempotency_keys).where(*_PK, _t.expires_at < bindparam("_now"))
_CLAIM = {
    "postgresql": pg_insert(idempotency_keys).on_conflict_do_nothing().returning(_t.key),
    "sqlite": sqlite_insert(idempotency_keys).on_conflict_do_nothing().returning(_t.key),
}
_STORED = select(_t.request_hash, _t.status_code, _t.response_body, _t.response_headers).where(*_PK)
_STORE = update(idempotency_keys).where(*_PK)
_FORGET = delete(idempotency_keys).where(*_PK)


_PURGE = delete(idempotency_keys).where(_t.expires_at < bindparam("_now"))
PURGE_EVERY_SECONDS = 600.0


async def purge_expired(db: Database) -> int:
    """Delete stored answers past their 24 hours; returns how many."""
    async with db.session() as conn:
        return await conn.execute(_PURGE, {"_now": utcnow()})


async def purge_forever(db: Database) -> None:
    """Each worker purges now and then (run as a task for the life of the app)."""
    while True:
        await asyncio.sleep(PURGE_EVERY_SECONDS * random.uniform(0.5, 1.5))
        try:
            removed = await purge_expired(db)
        except Exception as exc:  # the database may be down; try again next time
            log.warning("idempotency purge failed: %s", type(exc).__name__)
        else:
            if removed:
                log.info("idempotency purge", extra={"removed": removed})


def _pk(values: dict[str, Any]) -> dict[str, Any]:
    return {
        "_account": values["account_id"],
        "_method": values["method"],
        "_path": values["path"],
        "_key": values["key"],
    }


async def _claim(conn: Connection, values: dict[str, Any]) -> bool:
    """Insert the key's row; False when another request holds or held it."""
    await conn.execute(_DELETE_EXPIRED, {**_pk(values), "_now": values["created_at"]})
    return await conn.fetchrow(_CLAIM[conn.dialect], values) is not None


async def _stored(conn: Connection, values: dict[str, Any]) -> Row | None:
    return await conn.fetchrow(_STORED, _pk(values))


class _Undo(Exception):
    """Undo the handler's changes: its answer is an error (which may still be stored)."""


class IdempotencyMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        principal: Principal | None = scope.get("state", {}).get(STATE_PRINCIPAL)
        if principal is None or len(scope["path"]) > _MAX_PATH:
            await self.app(scope, receive, send)
            return
        conn: Connection = scope["state"][STATE_CONNECTION]
        try:
            key = headers.one(scope, HEADER)
        except ServiceError as exc:
            key = ""
            refused: ServiceError | None = exc
        else:
            refused = None
        if key is None or not allowed(scope, principal):
            await self.app(scope, receive, send)  # no key; or the route refuses it, as always
            return
        if refused is not None:
            await render(refused)(scope, receive, send)
            return
        if not _KEY_RE.fullmatch(key):
            await render(
                BadRequest.field(
                    "Idempotency-Key",
                    "The Idempotency-Key must be 1 to 255 visible ASCII characters.",
                )
            )(scope, receive, send)
            return

        try:
            body = await _read_body(receive)
        except ServiceError as exc:  # e.g. 413: answered here, inside the gate's headers
            await render(exc)(scope, receive, send)
            return
        # The workspace the request is for, wherever it names it: one the caller may not
        # use (a key limited to others, a person whose workspaces were narrowed since) is
        # refused by the route as always, never answered from what was stored.
        parsed = _parsed_body(body)
        try:
            workspace = workspace_named(scope, parsed)
        except Refused:
            workspace, reached = None, False
        else:
            reached = workspace is None or await reaches(scope, principal, conn, workspace)
        if not reached:
            await self.app(scope, _replaying(body), send)
            return
        now = utcnow()
        values = {
            "account_id": principal.account_id,
            "method": "POST",
            "path": scope["path"],
            "key": key,
            "request_hash": request_hash(
                body,
                parsed,
                workspace,  # checked above
                # Keys of the account share their answers (a key rotated between two
                # retries still gets its answer; `allowed` checked this one's reach).
                principal.key_id if principal.kind == USER else "",
            ),
            "status_code": 0,
            "response_body": "",
            "response_headers": "{}",
            "created_at": now,
            "expires_at": now + TTL,
        }
        captured: list[Message] = []

        async def capture(message: Message) -> None:
            captured.append(message)

        # The claim, the handler's changes and the stored answer share the request's one
        # transaction, committed before the answer is sent (api/middleware.py).
        await conn.begin()
        if not await _claim(conn, values):
            stored = await _stored(conn, values)
            same = {values["request_hash"]}
            if principal.kind != USER:
                same.add(earlier_request_hash(body, parsed, workspace))
            await _replay(stored, same, scope, receive, send)
            return
        status = 500
        try:
            async with conn.savepoint():
                await self.app(scope, _replaying(body), capture)
                status = captured[0]["status"] if captured else 500
                if status != 200:
                    raise _Undo
        except _Undo:
            pass
        if not _storable(status, captured[0].get("headers", []) if captured else []):
            await conn.execute(_FORGET, _pk(values))  # as if never claimed
        else:
            await conn.execute(
                _STORE,
                {
                    **_pk(values),
                    "status_code": status,
                    "response_body": b"".join(
                        msg.get("body", b"") for msg in captured[1:]
                    ).decode(),
                    "response_headers": orjson.dumps(
                        {
                            k.decode(): v.decode("latin-1")
                            for k, v in captured[0].get("headers", [])
                            if k.lower() in _STORED_HEADERS
                        }
                    ).decode(),
                },
            )
            # The answer is kept, and replayed, even when it is an error.
            conn.commit_on_error = True
        for message in captured:
            await send(message)


async def _read_body(receive: Receive) -> bytes:
    """The whole body; a client that hangs up before sending it all is ClientDisconnect
    (499, nothing done), never a cut body whose refusal would be stored under its key and
    replayed to its retry."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            raise ClientDisconnect
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replaying(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


async def _replay(
    stored: Row | None, same: set[str], scope: Scope, receive: Receive, send: Send
) -> None:
    """Answer from what was stored when its fingerprint is one of `same`, else 409."""
    if stored is None or stored["status_code"] == 0:  # pragma: no cover - claim is atomic
        raise KeyReused("A request with this Idempotency-Key is still in progress; retry.")
    if stored["request_hash"] not in same:
        await render(
            KeyReused(
                "This Idempotency-Key was already used for a different request (another body "
                "or another workspace). Use a new key for a new request."
            )
        )(scope, receive, send)
        return
    headers = [
        (k.encode(), v.encode("latin-1"))
        for k, v in orjson.loads(stored["response_headers"]).items()
    ]
    headers.append((b"idempotent-replayed", b"true"))
    body = stored["response_body"].encode()
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": stored["status_code"], "headers": headers})
    await send({"type": "http.response.body", "body": body})
