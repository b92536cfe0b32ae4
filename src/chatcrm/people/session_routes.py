"""Console sessions and the caller itself (contract J.1, J.3): sign-in, the session, sign-out,
the session list; who am I, the password, two-factor."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from chatcrm.api.body import read_json_object
from chatcrm.api.call import Call
from chatcrm.api.envelope import NO_STORE, ok
from chatcrm.api.routing import Routes
from chatcrm.api.state import STATE_SESSION
from chatcrm.auth.service import USER
from chatcrm.core import messages as m
from chatcrm.core.errors import (
    NotFound,
    require_valid,
)
from chatcrm.core.ids import is_id
from chatcrm.core.timestamps import iso
from chatcrm.db.database import Row
from chatcrm.people import audit, keys, sessions, two_factor
from chatcrm.people import users as people
from chatcrm.people.errors import SessionExpired
from chatcrm.people.fields import (
    CODE,
    NO_FIELDS,
    PASSWORD,
    PASSWORD_CHANGE,
    SIGN_IN,
)
from chatcrm.people.wire import (
    KEY_RECORD,
    SESSION_ANSWER,
    STR,
    STRS,
    USER_RECORD,
    client_of,
    cookie_headers,
    failed_sign_in,
    list_of,
    need_session,
    need_user,
    obj,
    request_conn,
    settings_of,
    signed_in,
)
from chatcrm.records import bodies
from chatcrm.records.schemas import create_body_schema

routes = Routes("people")

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
    conn = request_conn(request)
    given = bodies.create_body(SIGN_IN, await read_json_object(request), workspace_key=False)
    require_valid(given.errors)
    clean = given.clean
    ip, _ = client_of(request)
    email = clean["email"].strip()  # as an invitation keeps it (a pasted address's spaces)
    user = await sessions.sign_in(
        conn,
        email=email,
        password=clean["password"],
        code=clean.get("code"),
        ip=ip,
        on_failure=failed_sign_in(request, email),
    )
    return await signed_in(conn, request, user)


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
    await call.of_the_account()
    need_session(call)
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
    await call.of_the_account()
    session_id = need_session(call)
    await sessions.end(call.conn, call.key_id, session_id)
    await audit.note(call, "session.ended", call.key_id)
    return ok(m.SIGNED_OUT, None, headers=cookie_headers(call.request, None))


@routes.operation(
    "GET",
    "/api/session/list",
    operation_id="listSessions",
    summary="The user's live sessions, newest first",
    message=m.SESSIONS_OBTAINED,
    answer=list_of(
        obj(
            id=STR,
            createdAt=STR,
            lastSeenAt=STR,
            userAgent=STR,
            ip=STR,
            current={"type": "boolean"},
        )
    ),
)
async def list_sessions(call: Call) -> Response:
    await call.of_the_account()
    user_id = need_user(call)
    found = await sessions.listing(
        call.conn, user_id, call.principal.session_id, settings_of(call.request)
    )
    return ok(m.SESSIONS_OBTAINED, {"data": found})


@routes.operation(
    "DELETE",
    "/api/session/{sessionId}",
    operation_id="endSession",
    summary="End one of the user's sessions",
    message=m.SESSION_ENDED,
    answer=obj(id=STR),
    errors=(404,),
)
async def end_session(call: Call, sessionId: str) -> Response:
    await call.of_the_account()
    user_id = need_user(call)
    if not is_id(sessionId) or not await sessions.end(call.conn, user_id, sessionId):
        raise NotFound(f"No live session with id '{sessionId}' of this user.")
    await audit.note(call, "session.ended", user_id)
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
    await call.of_the_account()
    if call.principal.kind == USER:
        row = await people.any_by_id(call.conn, call.key_id)
        if row is None:
            raise SessionExpired
        return ok(m.ME_OBTAINED, {"user": await people.record(call.conn, row)})
    return ok(m.ME_OBTAINED, {"key": await keys.record(call.conn, call.key_id)})


async def _me(call: Call) -> Row:
    row = await people.any_by_id(call.conn, need_user(call))
    if row is None:
        raise SessionExpired
    return row


async def _user_first(call: Call) -> None:
    """The order of every route: a workspace named must be usable (403), then who may ask
    (401: these routes need a user), and only then what is asked (the body's 400/422)."""
    await call.of_the_account()
    need_user(call)


@routes.operation(
    "PUT",
    "/api/me/password",
    operation_id="changePassword",
    summary="Change one's password (ends every other session)",
    message=m.PASSWORD_CHANGED,
    answer=None,
    body=create_body_schema(PASSWORD_CHANGE, workspace_key=False),
    errors=(422, 429),
)
async def change_password(call: Call) -> Response:
    await _user_first(call)
    given = bodies.create_body(
        PASSWORD_CHANGE, await read_json_object(call.request), workspace_key=False
    )
    require_valid(given.errors)
    row = await _me(call)
    ip, _ = client_of(call.request)
    given_password = given.clean["currentPassword"]
    await sessions.confirm_password(call.conn, row, given_password, ip=ip, field="currentPassword")
    await people.set_password(call.conn, row, given.clean["newPassword"], field="newPassword")
    await sessions.end_all(call.conn, row["id"], keep=call.principal.session_id)
    await audit.note(call, "user.password_changed", row["id"])
    return ok(m.PASSWORD_CHANGED, None)


@routes.operation(
    "POST",
    "/api/me/2fa",
    operation_id="startTwoFactor",
    summary="Start setting up two-factor: a new TOTP secret (not yet on)",
    message=m.TWO_FACTOR_STARTED,
    answer=obj(secret=STR, otpauthUrl=STR),
    body=create_body_schema(NO_FIELDS, workspace_key=False),
    body_required=False,
    errors=(409,),
)
async def start_two_factor(call: Call) -> Response:
    await _user_first(call)
    bodies.create_body(
        NO_FIELDS, await read_json_object(call.request, required=False), workspace_key=False
    )
    row = await _me(call)
    data = await two_factor.start(call.conn, row)
    return ok(m.TWO_FACTOR_STARTED, data, headers=NO_STORE)


@routes.operation(
    "POST",
    "/api/me/2fa/enable",
    operation_id="enableTwoFactor",
    summary="Turn two-factor on with a code of the new secret",
    message=m.TWO_FACTOR_ENABLED,
    answer=obj(recoveryCodes=STRS),
    body=create_body_schema(CODE, workspace_key=False),
    errors=(409, 422),
)
async def enable_two_factor(call: Call) -> Response:
    await _user_first(call)
    given = bodies.create_body(CODE, await read_json_object(call.request), workspace_key=False)
    require_valid(given.errors)
    row = await _me(call)
    codes = await two_factor.enable(call.conn, row, given.clean["code"])
    await audit.note(call, "user.2fa_enabled", row["id"])
    return ok(m.TWO_FACTOR_ENABLED, {"recoveryCodes": codes}, headers=NO_STORE)


@routes.operation(
    "DELETE",
    "/api/me/2fa",
    operation_id="disableTwoFactor",
    summary="Turn two-factor off (the password confirms it)",
    message=m.TWO_FACTOR_DISABLED,
    answer=None,
    body=create_body_schema(PASSWORD, workspace_key=False),
    errors=(422, 429),
)
async def disable_two_factor(call: Call) -> Response:
    await _user_first(call)
    given = bodies.create_body(PASSWORD, await read_json_object(call.request), workspace_key=False)
    require_valid(given.errors)
    row = await _me(call)
    ip, _ = client_of(call.request)
    await sessions.confirm_password(
        call.conn, row, given.clean["password"], ip=ip, field="password"
    )
    await two_factor.disable(call.conn, row)  # a set-up begun and not finished goes too
    if row["two_factor_enabled"]:  # recorded once: turning off what is off changes nothing
        await audit.note(call, "user.2fa_disabled", row["id"])
    return ok(m.TWO_FACTOR_DISABLED, None)
