"""Scoped API keys (contract J.5) and the audit log (J.6)."""

from __future__ import annotations

from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import NO_STORE, ok
from chatcrm.api.parameters import PAGE
from chatcrm.api.routing import Routes
from chatcrm.core import messages as m
from chatcrm.core.pagination import filters_digest
from chatcrm.people import audit, keys, reach
from chatcrm.people.fields import (
    KEY,
)
from chatcrm.people.wire import (
    KEY_RECORD,
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
    await call.of_the_account()
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
    await call.of_the_account()
    found = await keys.records(call.conn, call.account_id)
    shown = [k for k in found if reach.reaches_key(call.principal, k["workspaceIds"])]
    return ok(m.KEYS_OBTAINED, {"data": shown})


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
    await call.of_the_account()
    if await keys.revoke(call.conn, call.account_id, keyId, caller=call.principal):
        call.request.app.state.auth_cache.drop_keys()  # this process, at once: and its keys
        await audit.note(call, "key.revoked", keyId)  # once: a second revoke changes nothing
    return ok(m.KEY_REVOKED, {"id": keyId, "key": await keys.record(call.conn, keyId)})


# --- audit -----------------------------------------------------------------------------------


def _audit_scope(account_id: str) -> str:
    """A token of one account's log: signed like every list's (C), useless elsewhere."""
    return f"audit:{account_id}"


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
    codec, scope, digest = await call.codec(), _audit_scope(call.account_id), filters_digest(())
    before = codec.decode(token, scope=scope, digest=digest).id if token else None
    size = read_page_size(call.query("pageSize"))
    entries, last = await audit.page(call.conn, call.account_id, before=before, size=size)
    next_token = None if last is None else codec.encode(scope=scope, digest=digest, position=last)
    return ok(m.AUDIT_OBTAINED, {"data": entries, "continuationToken": next_token})
