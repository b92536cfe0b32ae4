"""Scoped API keys (contract J.5) and the audit log (J.6)."""

from __future__ import annotations

import base64
import binascii

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.parameters import PAGE
from chatcrm.api.routing import Routes
from chatcrm.core import messages as m
from chatcrm.core.errors import (
    InvalidContinuationToken,
)
from chatcrm.core.ids import is_id
from chatcrm.people import audit, keys
from chatcrm.people.fields import (
    KEY,
)
from chatcrm.people.wire import (
    KEY_RECORD,
    NO_STORE,
    NSTR,
    STR,
    list_of,
    obj,
)
from chatcrm.records.listing import read_page_size
from chatcrm.records.schemas import create_body_schema

routes = Routes("people")

# --- keys ------------------------------------------------------------------------------------


@routes.operation(
    "POST",
    "/api/key",
    operation_id="createKey",
    summary="Create a scoped API key (its secret shown this once)",
    message=m.KEY_CREATED,
    answer=obj(id=STR, key=KEY_RECORD, apiKey=STR),
    body=create_body_schema(KEY, workspace_key=False),
    errors=(422,),
)
async def create_key(call: Call) -> Response:
    body = await call.read_body()
    key_id, raw = await keys.create(call.conn, call.principal, body)
    await audit.note(call, "key.created", key_id)
    data = {"id": key_id, "key": await keys.record(call.conn, key_id), "apiKey": raw}
    return ok(m.KEY_CREATED, data, headers=NO_STORE)


@routes.operation(
    "GET",
    "/api/key",
    operation_id="listKeys",
    summary="The account's API keys (never a secret)",
    message=m.KEYS_OBTAINED,
    answer=list_of(KEY_RECORD),
)
async def list_keys(call: Call) -> Response:
    await call.check_header_workspace()
    call.reject_unknown_query(())
    return ok(m.KEYS_OBTAINED, {"data": await keys.records(call.conn, call.account_id)})


@routes.operation(
    "DELETE",
    "/api/key/{keyId}",
    operation_id="revokeKey",
    summary="Revoke an API key (refused everywhere within 1 s)",
    message=m.KEY_REVOKED,
    answer=obj(id=STR, key=KEY_RECORD),
    errors=(404,),
)
async def revoke_key(call: Call, keyId: str) -> Response:
    await call.check_header_workspace()
    await keys.revoke(call.conn, call.account_id, keyId)
    call.request.app.state.auth_cache.drop_keys(keyId)  # this process: at once
    await audit.note(call, "key.revoked", keyId)
    return ok(m.KEY_REVOKED, {"id": keyId, "key": await keys.record(call.conn, keyId)})


# --- audit -----------------------------------------------------------------------------------


def _token(entry_id: str) -> str:
    return base64.urlsafe_b64encode(entry_id.encode()).rstrip(b"=").decode()


def _untoken(token: str) -> str:
    try:
        text = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        text = ""
    if not is_id(text):
        raise InvalidContinuationToken("The continuationToken is not one this list gave.")
    return text


@routes.operation(
    "GET",
    "/api/audit",
    operation_id="listAudit",
    summary="The account's audit log, newest first",
    message=m.AUDIT_OBTAINED,
    answer={
        "type": "object",
        "properties": {
            "data": {"type": "array", "items": {"type": "object"}},
            "continuationToken": NSTR,
        },
        "required": ["data", "continuationToken"],
    },
    params=PAGE,
    errors=(400, 422),
)
async def list_audit(call: Call) -> Response:
    await call.check_header_workspace()
    call.reject_unknown_query(("continuationToken", "pageSize"))
    token = call.query("continuationToken")
    before = _untoken(token) if token else None
    size = read_page_size(call.query("pageSize"))
    entries, last = await audit.page(call.conn, call.account_id, before=before, size=size)
    return ok(
        m.AUDIT_OBTAINED,
        {"data": entries, "continuationToken": None if last is None else _token(last)},
    )
