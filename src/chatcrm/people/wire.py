"""What the people endpoints (contract J) share: the records' schemas, the session
answer and its cookie, the client's address, audit entries of requests without a caller."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import component
from chatcrm.api.state import STATE_CONNECTION
from chatcrm.auth.service import USER, Principal
from chatcrm.config import Settings
from chatcrm.core import messages as m
from chatcrm.core.errors import (
    Unauthorized,
)
from chatcrm.core.timestamps import iso
from chatcrm.db.database import Connection, Row
from chatcrm.people import audit, sessions
from chatcrm.people import users as people

STR = {"type": "string"}
NSTR = {"type": ["string", "null"]}
STRS = {"type": "array", "items": STR}
USER_RECORD = component(
    "User",
    {
        "type": "object",
        "properties": {
            "id": STR,
            "email": STR,
            "name": STR,
            "role": {"type": "string", "enum": ["owner", "admin", "agent", "viewer"]},
            "status": {"type": "string", "enum": ["invited", "active", "disabled"]},
            "workspaceIds": STRS,
            "agentIds": STRS,
            "twoFactorEnabled": {"type": "boolean"},
            "createdAt": STR,
            "lastSignInAt": NSTR,
        },
        "required": [
            "id",
            "email",
            "name",
            "role",
            "status",
            "workspaceIds",
            "agentIds",
            "twoFactorEnabled",
            "createdAt",
            "lastSignInAt",
        ],
        "additionalProperties": False,
    },
)
KEY_RECORD = component(
    "Key",
    {
        "type": "object",
        "properties": {
            "id": STR,
            "name": STR,
            "scopes": STRS,
            "workspaceIds": {"type": ["array", "null"], "items": STR},
            "expiresAt": NSTR,
            "createdAt": STR,
            "lastUsedAt": NSTR,
            "revokedAt": NSTR,
            "createdBy": NSTR,
        },
        "required": [
            "id",
            "name",
            "scopes",
            "workspaceIds",
            "expiresAt",
            "createdAt",
            "lastUsedAt",
            "revokedAt",
            "createdBy",
        ],
        "additionalProperties": False,
    },
)
SESSION_ANSWER = {
    "type": "object",
    "properties": {"user": USER_RECORD, "csrfToken": STR, "expiresAt": STR},
    "required": ["user", "csrfToken", "expiresAt"],
    "additionalProperties": False,
}


def obj(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def list_of(item: Any) -> dict[str, Any]:
    return obj(data={"type": "array", "items": item})


def settings_of(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def client_of(request: Request) -> tuple[str, str]:
    """(client address, user agent) as the audit log and the session list show them."""
    ip = request.client.host if request.client else ""
    return ip, request.headers.get("user-agent", "")


async def audit_entry(
    conn: Connection,
    request: Request,
    principal: Principal | None,
    *,
    account_id: str,
    action: str,
    target: str | None,
) -> None:
    ip, agent = client_of(request)
    await audit.record(
        conn,
        account_id=account_id,
        action=action,
        actor=None if principal is None else principal.actor(),
        target=target,
        ip=ip,
        user_agent=agent,
    )


def failed_sign_in(request: Request, tried: str) -> sessions.OnFailure:
    """What a refused sign-in (or second factor) records: `session.failed`, no actor, the
    e-mail tried as its target (J.6)."""

    async def failed(conn: Connection, user: Row | None) -> None:
        if user is not None:
            await audit_entry(
                conn,
                request,
                None,
                account_id=user["account_id"],
                action="session.failed",
                target=tried,
            )

    return failed


def user_principal(user: Row) -> Principal:
    return Principal(key_id=user["id"], account_id=user["account_id"], kind=USER, name=user["name"])


def cookie_headers(request: Request, started: sessions.Started | None) -> dict[str, str]:
    secure = "; Secure" if settings_of(request).base_url.startswith("https://") else ""
    if started is None:
        value = f"{sessions.COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax{secure}"
    else:
        value = f"{sessions.COOKIE}={started.token}; Path=/; HttpOnly; SameSite=Lax{secure}"
    # no-store: the answer holds the CSRF token; no-referrer: a link's token stays put.
    return {"set-cookie": value, "cache-control": "no-store", "referrer-policy": "no-referrer"}


async def signed_in(conn: Connection, request: Request, user: Row) -> Response:
    """J.3's answer to a sign-in (and to accepting a link): a new session."""
    ip, agent = client_of(request)
    started = await sessions.start(conn, user, settings_of(request), ip=ip, user_agent=agent)
    fresh = await people.any_by_id(conn, user["id"])
    assert fresh is not None
    principal = user_principal(fresh)
    await audit_entry(
        conn,
        request,
        principal,
        account_id=user["account_id"],
        action="session.created",
        target=user["id"],
    )
    data = {
        "user": await people.record(conn, fresh),
        "csrfToken": started.csrf_token,
        "expiresAt": iso(started.expires_at),
    }
    return ok(m.SIGNED_IN, data, headers=cookie_headers(request, started))


def request_conn(request: Request) -> Connection:
    conn: Connection = request.scope["state"][STATE_CONNECTION]
    return conn


def need_session(call: Call) -> str:
    if call.principal.session_id is None:
        raise Unauthorized("This needs a console session (sign in with POST /api/session).")
    return call.principal.session_id


def need_user(call: Call) -> str:
    if call.principal.kind != USER:
        raise Unauthorized("This needs a user: sign in with POST /api/session.")
    return call.key_id
