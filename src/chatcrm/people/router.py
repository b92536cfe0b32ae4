"""The people endpoints (contract J): users, invitations, console sessions, who am I,
two-factor, scoped API keys, the audit log."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from chatcrm.api.body import read_json_object
from chatcrm.api.call import Call
from chatcrm.api.envelope import ok
from chatcrm.api.openapi import component
from chatcrm.api.parameters import PAGE
from chatcrm.api.routing import Routes
from chatcrm.api.state import STATE_CONNECTION, STATE_SESSION
from chatcrm.auth.service import USER, Principal
from chatcrm.config import Settings
from chatcrm.core import messages as m
from chatcrm.core.errors import (
    FieldError,
    InvalidContinuationToken,
    NotFound,
    Unauthorized,
    ValidationFailed,
    require_valid,
)
from chatcrm.core.ids import is_id
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db.database import Connection, Row
from chatcrm.people import audit, keys, mail, passwords, sessions, two_factor
from chatcrm.people import users as people
from chatcrm.people.errors import SessionExpired
from chatcrm.people.fields import (
    ACCEPT,
    CODE,
    KEY,
    NO_FIELDS,
    PASSWORD,
    PASSWORD_CHANGE,
    SIGN_IN,
)
from chatcrm.people.fields import (
    USER as USER_FIELDS,
)
from chatcrm.records import bodies
from chatcrm.records.listing import read_page_size
from chatcrm.records.schemas import create_body_schema, update_body_schema

routes = Routes("people")

_STR = {"type": "string"}
_NSTR = {"type": ["string", "null"]}
_STRS = {"type": "array", "items": _STR}
USER_RECORD = component(
    "User",
    {
        "type": "object",
        "properties": {
            "id": _STR,
            "email": _STR,
            "name": _STR,
            "role": {"type": "string", "enum": ["owner", "admin", "agent", "viewer"]},
            "status": {"type": "string", "enum": ["invited", "active", "disabled"]},
            "workspaceIds": _STRS,
            "agentIds": _STRS,
            "twoFactorEnabled": {"type": "boolean"},
            "createdAt": _STR,
            "lastSignInAt": _NSTR,
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
            "id": _STR,
            "name": _STR,
            "scopes": _STRS,
            "workspaceIds": {"type": ["array", "null"], "items": _STR},
            "expiresAt": _NSTR,
            "createdAt": _STR,
            "lastUsedAt": _NSTR,
            "revokedAt": _NSTR,
            "createdBy": _NSTR,
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
    "properties": {"user": USER_RECORD, "csrfToken": _STR, "expiresAt": _STR},
    "required": ["user", "csrfToken", "expiresAt"],
    "additionalProperties": False,
}


def _obj(**properties: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _list_of(item: Any) -> dict[str, Any]:
    return _obj(data={"type": "array", "items": item})


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _client(request: Request) -> tuple[str, str]:
    """(client address, user agent) as the audit log and the session list show them."""
    ip = request.client.host if request.client else ""
    return ip, request.headers.get("user-agent", "")


async def _audit(
    conn: Connection,
    request: Request,
    principal: Principal | None,
    *,
    account_id: str,
    action: str,
    target: str | None,
) -> None:
    ip, agent = _client(request)
    await audit.record(
        conn,
        account_id=account_id,
        action=action,
        actor=None if principal is None else principal.actor(),
        target=target,
        ip=ip,
        user_agent=agent,
    )


def _user_principal(user: Row) -> Principal:
    return Principal(key_id=user["id"], account_id=user["account_id"], kind=USER, name=user["name"])


def _cookie_headers(request: Request, started: sessions.Started | None) -> dict[str, str]:
    secure = "; Secure" if _settings(request).base_url.startswith("https://") else ""
    if started is None:
        value = f"{sessions.COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax{secure}"
    else:
        value = f"{sessions.COOKIE}={started.token}; Path=/; HttpOnly; SameSite=Lax{secure}"
    # no-store: the answer holds the CSRF token; no-referrer: a link's token stays put.
    return {"set-cookie": value, "cache-control": "no-store", "referrer-policy": "no-referrer"}


async def _signed_in(conn: Connection, request: Request, user: Row) -> Response:
    """J.3's answer to a sign-in (and to accepting a link): a new session."""
    ip, agent = _client(request)
    started = await sessions.start(conn, user, _settings(request), ip=ip, user_agent=agent)
    fresh = await people.any_by_id(conn, user["id"])
    assert fresh is not None
    principal = _user_principal(fresh)
    await _audit(
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
    return ok(m.SIGNED_IN, data, headers=_cookie_headers(request, started))


def _conn(request: Request) -> Connection:
    conn: Connection = request.scope["state"][STATE_CONNECTION]
    return conn


def _need_session(call: Call) -> str:
    if call.principal.session_id is None:
        raise Unauthorized("This needs a console session (sign in with POST /api/session).")
    return call.principal.session_id


def _need_user(call: Call) -> str:
    if call.principal.kind != USER:
        raise Unauthorized("This needs a user: sign in with POST /api/session.")
    return call.key_id


# --- users -----------------------------------------------------------------------------------


@routes.operation(
    "POST",
    "/api/user",
    operation_id="inviteUser",
    summary="Invite a user (single-use invitation link, valid 7 days)",
    message=m.USER_INVITED,
    answer=_obj(id=_STR, user=USER_RECORD, inviteUrl=_STR),
    body=create_body_schema(USER_FIELDS, workspace_key=False),
    errors=(409, 422),
)
async def invite_user(call: Call) -> Response:
    body = await call.read_body()
    invited = await people.invite(call.conn, call.principal, call.account_id, body)
    row = invited.row
    url = people.link(_settings(call.request).base_url, people.INVITE, invited.token)
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="user.invited",
        target=row["id"],
    )
    mail.send_link(
        _settings(call.request), to=row["email"], name=row["name"], purpose="invite", link=url
    )
    data = {"id": row["id"], "user": await people.record(call.conn, row), "inviteUrl": url}
    return ok(m.USER_INVITED, data)


@routes.operation(
    "GET",
    "/api/user",
    operation_id="listUsers",
    summary="The account's users",
    message=m.USERS_OBTAINED,
    answer=_list_of(USER_RECORD),
)
async def list_users(call: Call) -> Response:
    await call.check_header_workspace()
    call.reject_unknown_query(())
    rows = await people.list_users(call.conn, call.account_id)
    return ok(m.USERS_OBTAINED, {"data": await people.records(call.conn, rows)})


@routes.operation(
    "GET",
    "/api/user/{userId}",
    operation_id="getUser",
    summary="Get a user",
    message=m.USER_OBTAINED,
    answer=_obj(id=_STR, user=USER_RECORD),
    errors=(404,),
)
async def get_user(call: Call, userId: str) -> Response:
    await call.check_header_workspace()
    row = await people.by_id(call.conn, call.account_id, userId)
    return ok(m.USER_OBTAINED, {"id": row["id"], "user": await people.record(call.conn, row)})


@routes.operation(
    "PUT",
    "/api/user/{userId}",
    operation_id="updateUser",
    summary="Update a user's name, role, workspaces or status",
    message=m.USER_UPDATED,
    answer=_obj(id=_STR, user=USER_RECORD),
    body=update_body_schema(USER_FIELDS, implicit=True),
    errors=(404, 409, 422),
)
async def update_user(call: Call, userId: str) -> Response:
    body = await call.read_body()
    row, changed = await people.update_user(
        call.conn, call.principal, call.account_id, userId, body
    )
    if row["status"] == people.DISABLED:
        await sessions.end_all(call.conn, row["id"])
    if changed:
        await _audit(
            call.conn,
            call.request,
            call.principal,
            account_id=call.account_id,
            action="user.updated",
            target=row["id"],
        )
    return ok(m.USER_UPDATED, {"id": row["id"], "user": await people.record(call.conn, row)})


@routes.operation(
    "DELETE",
    "/api/user/{userId}",
    operation_id="removeUser",
    summary="Remove a user (disabled, its sessions ended; the record stays)",
    message=m.USER_REMOVED,
    answer=_obj(id=_STR),
    errors=(404, 409),
)
async def remove_user(call: Call, userId: str) -> Response:
    await call.check_header_workspace()
    row = await people.remove(call.conn, call.principal, call.account_id, userId)
    await sessions.end_all(call.conn, row["id"])
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="user.removed",
        target=row["id"],
    )
    return ok(m.USER_REMOVED, {"id": row["id"]})


@routes.operation(
    "POST",
    "/api/user/{userId}/reset-link",
    operation_id="createResetLink",
    summary="A single-use link to set a new password (valid 1 hour)",
    message=m.RESET_LINK_CREATED,
    answer=_obj(id=_STR, resetUrl=_STR),
    body=create_body_schema(NO_FIELDS, workspace_key=False),
    body_required=False,
    errors=(404,),
)
async def create_reset_link(call: Call, userId: str) -> Response:
    bodies.create_body(NO_FIELDS, await call.read_body(required=False), workspace_key=False)
    row = await people.by_id(call.conn, call.account_id, userId)
    token = await people.new_link(call.conn, row["id"], people.RESET, now=utcnow())
    url = people.link(_settings(call.request).base_url, people.RESET, token)
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="user.reset_link_created",
        target=row["id"],
    )
    mail.send_link(
        _settings(call.request), to=row["email"], name=row["name"], purpose="reset", link=url
    )
    return ok(m.RESET_LINK_CREATED, {"id": row["id"], "resetUrl": url})


@routes.operation(
    "DELETE",
    "/api/user/{userId}/sessions",
    operation_id="endUserSessions",
    summary="End every session of a user",
    message=m.SESSIONS_ENDED,
    answer=_obj(id=_STR),
    errors=(404,),
)
async def end_user_sessions(call: Call, userId: str) -> Response:
    await call.check_header_workspace()
    row = await people.by_id(call.conn, call.account_id, userId)
    await sessions.end_all(call.conn, row["id"])
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="session.ended",
        target=row["id"],
    )
    return ok(m.SESSIONS_ENDED, {"id": row["id"]})


@routes.operation(
    "POST",
    "/api/invitation/accept",
    operation_id="acceptInvitation",
    summary="Accept an invitation or a reset link: set the password, sign in",
    message=m.SIGNED_IN,
    answer=SESSION_ANSWER,
    body=create_body_schema(ACCEPT, workspace_key=False),
    errors=(400, 422),
    authenticated=False,
)
async def accept_invitation(request: Request) -> Response:
    conn = _conn(request)
    given = bodies.create_body(ACCEPT, await read_json_object(request), workspace_key=False)
    require_valid(given.errors)
    clean = given.clean
    user, purpose = await people.take_token(conn, clean["token"])
    require_valid(passwords.problems(clean["password"], email=user["email"]))
    columns: dict[str, Any] = {
        "password_hash": passwords.hash_password(clean["password"]),
        "status": people.ACTIVE,
    }
    if clean.get("name"):
        columns["name"] = clean["name"]
    columns["updated_at"] = utcnow()
    await people.set_columns(conn, user["id"], **columns)
    if purpose == people.RESET:
        await sessions.end_all(conn, user["id"])
        await _audit(
            conn,
            request,
            _user_principal(user),
            account_id=user["account_id"],
            action="user.password_changed",
            target=user["id"],
        )
    fresh = await people.any_by_id(conn, user["id"])
    assert fresh is not None
    return await _signed_in(conn, request, fresh)


# --- sessions --------------------------------------------------------------------------------


@routes.operation(
    "POST",
    "/api/session",
    operation_id="signIn",
    summary="Sign in to the console (sets the session cookie)",
    message=m.SIGNED_IN,
    answer=SESSION_ANSWER,
    body=create_body_schema(SIGN_IN, workspace_key=False),
    errors=(401, 422, 429),
    authenticated=False,
)
async def sign_in(request: Request) -> Response:
    conn = _conn(request)
    given = bodies.create_body(SIGN_IN, await read_json_object(request), workspace_key=False)
    require_valid(given.errors)
    clean = given.clean
    ip, _ = _client(request)

    async def failed(conn: Connection, user: Row | None) -> None:
        if user is not None:
            await _audit(
                conn,
                request,
                None,
                account_id=user["account_id"],
                action="session.failed",
                target=clean["email"],
            )

    user = await sessions.sign_in(
        conn,
        email=clean["email"],
        password=clean["password"],
        code=clean.get("code"),
        ip=ip,
        on_failure=failed,
    )
    return await _signed_in(conn, request, user)


async def _session_answer(call: Call) -> dict[str, Any]:
    state = call.request.scope["state"]
    current: sessions.Current = state[STATE_SESSION]
    row = await people.any_by_id(call.conn, call.key_id)
    if row is None:
        raise SessionExpired
    return {
        "user": await people.record(call.conn, row),
        "csrfToken": current.csrf_token,
        "expiresAt": iso(current.expires_at),
    }


@routes.operation(
    "GET",
    "/api/session",
    operation_id="getSession",
    summary="The current console session",
    message=m.SESSION_OBTAINED,
    answer=SESSION_ANSWER,
)
async def get_session(call: Call) -> Response:
    await call.check_header_workspace()
    _need_session(call)
    return ok(
        m.SESSION_OBTAINED, await _session_answer(call), headers={"cache-control": "no-store"}
    )


@routes.operation(
    "DELETE",
    "/api/session",
    operation_id="signOut",
    summary="Sign out (the cookie is cleared)",
    message=m.SIGNED_OUT,
    answer=None,
)
async def sign_out(call: Call) -> Response:
    await call.check_header_workspace()
    session_id = _need_session(call)
    await sessions.end(call.conn, call.key_id, session_id)
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="session.ended",
        target=call.key_id,
    )
    return ok(m.SIGNED_OUT, None, headers=_cookie_headers(call.request, None))


@routes.operation(
    "GET",
    "/api/session/list",
    operation_id="listSessions",
    summary="The user's live sessions, newest first",
    message=m.SESSIONS_OBTAINED,
    answer=_list_of(
        _obj(
            id=_STR,
            createdAt=_STR,
            lastSeenAt=_STR,
            userAgent=_STR,
            ip=_STR,
            current={"type": "boolean"},
        )
    ),
)
async def list_sessions(call: Call) -> Response:
    await call.check_header_workspace()
    user_id = _need_user(call)
    found = await sessions.listing(
        call.conn, user_id, call.principal.session_id, _settings(call.request)
    )
    return ok(m.SESSIONS_OBTAINED, {"data": found})


@routes.operation(
    "DELETE",
    "/api/session/{sessionId}",
    operation_id="endSession",
    summary="End one of the user's sessions",
    message=m.SESSION_ENDED,
    answer=_obj(id=_STR),
    errors=(404,),
)
async def end_session(call: Call, sessionId: str) -> Response:
    await call.check_header_workspace()
    user_id = _need_user(call)
    if not is_id(sessionId) or not await sessions.end(call.conn, user_id, sessionId):
        raise NotFound(f"No live session with id '{sessionId}' of this user.")
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="session.ended",
        target=user_id,
    )
    return ok(m.SESSION_ENDED, {"id": sessionId})


# --- me --------------------------------------------------------------------------------------


@routes.operation(
    "GET",
    "/api/me",
    operation_id="getMe",
    summary="Who is calling: the user of a session, or the key",
    message=m.ME_OBTAINED,
    answer={"type": "object", "properties": {"user": USER_RECORD, "key": KEY_RECORD}},
)
async def get_me(call: Call) -> Response:
    await call.check_header_workspace()
    if call.principal.kind == USER:
        row = await people.any_by_id(call.conn, call.key_id)
        if row is None:
            raise SessionExpired
        return ok(m.ME_OBTAINED, {"user": await people.record(call.conn, row)})
    return ok(m.ME_OBTAINED, {"key": await keys.record(call.conn, call.key_id)})


async def _me(call: Call) -> Row:
    row = await people.any_by_id(call.conn, _need_user(call))
    if row is None:
        raise SessionExpired
    return row


@routes.operation(
    "PUT",
    "/api/me/password",
    operation_id="changePassword",
    summary="Change one's password (ends every other session)",
    message=m.PASSWORD_CHANGED,
    answer=None,
    body=create_body_schema(PASSWORD_CHANGE, workspace_key=False),
    errors=(422,),
)
async def change_password(call: Call) -> Response:
    given = bodies.create_body(PASSWORD_CHANGE, await call.read_body(), workspace_key=False)
    require_valid(given.errors)
    row = await _me(call)
    matches, _ = passwords.verify(row["password_hash"], given.clean["currentPassword"])
    if not matches:
        raise ValidationFailed([FieldError("currentPassword", "is not the current password")])
    await people.set_password(call.conn, row, given.clean["newPassword"], field="newPassword")
    await sessions.end_all(call.conn, row["id"], keep=call.principal.session_id)
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="user.password_changed",
        target=row["id"],
    )
    return ok(m.PASSWORD_CHANGED, None)


@routes.operation(
    "POST",
    "/api/me/2fa",
    operation_id="startTwoFactor",
    summary="Start setting up two-factor: a new TOTP secret (not yet on)",
    message=m.TWO_FACTOR_STARTED,
    answer=_obj(secret=_STR, otpauthUrl=_STR),
    body=create_body_schema(NO_FIELDS, workspace_key=False),
    body_required=False,
)
async def start_two_factor(call: Call) -> Response:
    bodies.create_body(NO_FIELDS, await call.read_body(required=False), workspace_key=False)
    row = await _me(call)
    data = await two_factor.start(call.conn, row)
    return ok(m.TWO_FACTOR_STARTED, data, headers={"cache-control": "no-store"})


@routes.operation(
    "POST",
    "/api/me/2fa/enable",
    operation_id="enableTwoFactor",
    summary="Turn two-factor on with a code of the new secret",
    message=m.TWO_FACTOR_ENABLED,
    answer=_obj(recoveryCodes=_STRS),
    body=create_body_schema(CODE, workspace_key=False),
    errors=(422,),
)
async def enable_two_factor(call: Call) -> Response:
    given = bodies.create_body(CODE, await call.read_body(), workspace_key=False)
    require_valid(given.errors)
    row = await _me(call)
    codes = await two_factor.enable(call.conn, row, given.clean["code"])
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="user.2fa_enabled",
        target=row["id"],
    )
    return ok(m.TWO_FACTOR_ENABLED, {"recoveryCodes": codes}, headers={"cache-control": "no-store"})


@routes.operation(
    "DELETE",
    "/api/me/2fa",
    operation_id="disableTwoFactor",
    summary="Turn two-factor off (the password confirms it)",
    message=m.TWO_FACTOR_DISABLED,
    answer=None,
    body=create_body_schema(PASSWORD, workspace_key=False),
    errors=(422,),
)
async def disable_two_factor(call: Call) -> Response:
    given = bodies.create_body(PASSWORD, await call.read_body(), workspace_key=False)
    require_valid(given.errors)
    row = await _me(call)
    matches, _ = passwords.verify(row["password_hash"], given.clean["password"])
    if not matches:
        raise ValidationFailed([FieldError("password", "is not the current password")])
    await two_factor.disable(call.conn, row)
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="user.2fa_disabled",
        target=row["id"],
    )
    return ok(m.TWO_FACTOR_DISABLED, None)


# --- keys ------------------------------------------------------------------------------------


@routes.operation(
    "POST",
    "/api/key",
    operation_id="createKey",
    summary="Create a scoped API key (its secret shown this once)",
    message=m.KEY_CREATED,
    answer=_obj(id=_STR, key=KEY_RECORD, apiKey=_STR),
    body=create_body_schema(KEY, workspace_key=False),
    errors=(422,),
)
async def create_key(call: Call) -> Response:
    body = await call.read_body()
    key_id, raw = await keys.create(call.conn, call.principal, body)
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="key.created",
        target=key_id,
    )
    data = {"id": key_id, "key": await keys.record(call.conn, key_id), "apiKey": raw}
    return ok(m.KEY_CREATED, data, headers={"cache-control": "no-store"})


@routes.operation(
    "GET",
    "/api/key",
    operation_id="listKeys",
    summary="The account's API keys (never a secret)",
    message=m.KEYS_OBTAINED,
    answer=_list_of(KEY_RECORD),
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
    answer=_obj(id=_STR, key=KEY_RECORD),
    errors=(404,),
)
async def revoke_key(call: Call, keyId: str) -> Response:
    await call.check_header_workspace()
    await keys.revoke(call.conn, call.account_id, keyId)
    call.request.app.state.auth_cache.drop_keys(keyId)  # this process: at once
    await _audit(
        call.conn,
        call.request,
        call.principal,
        account_id=call.account_id,
        action="key.revoked",
        target=keyId,
    )
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
            "continuationToken": _NSTR,
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
