"""The users of an account (contract J.1): invite, list, get, update, remove, reset links,
ending a user's sessions, and accepting an invitation or reset link."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from chatcrm.api.body import read_json_object
from chatcrm.api.call import Call
from chatcrm.api.envelope import NO_STORE, ok
from chatcrm.api.routing import Routes
from chatcrm.core import messages as m
from chatcrm.core.errors import (
    require_valid,
)
from chatcrm.core.timestamps import utcnow
from chatcrm.people import audit, links, mail, passwords, reach, sessions
from chatcrm.people import users as people
from chatcrm.people.fields import (
    ACCEPT,
    NO_FIELDS,
)
from chatcrm.people.fields import (
    USER as USER_FIELDS,
)
from chatcrm.people.wire import (
    SESSION_ANSWER,
    STR,
    USER_RECORD,
    audit_entry,
    client_of,
    failed_sign_in,
    list_of,
    obj,
    request_conn,
    settings_of,
    signed_in,
    user_principal,
)
from chatcrm.records import bodies
from chatcrm.records.schemas import create_body_schema, update_body_schema

routes = Routes("people")

# --- users -----------------------------------------------------------------------------------


@routes.operation(
    "POST",
    "/api/user",
    operation_id="inviteUser",
    summary="Invite a user (single-use invitation link, valid 7 days)",
    message=m.USER_INVITED,
    answer=obj(id=STR, user=USER_RECORD, inviteUrl=STR),
    body=create_body_schema(USER_FIELDS, workspace_key=False),
    errors=(409, 422),
)
async def invite_user(call: Call) -> Response:
    await call.of_the_account()
    body = await call.read_body()
    invited = await people.invite(call.conn, call.principal, call.account_id, body)
    row = invited.row
    url = links.link(settings_of(call.request).base_url, links.INVITE, invited.token)
    await audit.note(call, "user.invited", row["id"])
    mail.send_link(
        settings_of(call.request), to=row["email"], name=row["name"], purpose="invite", link=url
    )
    data = {"id": row["id"], "user": await people.record(call.conn, row), "inviteUrl": url}
    return ok(m.USER_INVITED, data, headers=NO_STORE)


@routes.operation(
    "GET",
    "/api/user",
    operation_id="listUsers",
    summary="The account's users",
    message=m.USERS_OBTAINED,
    answer=list_of(USER_RECORD),
)
async def list_users(call: Call) -> Response:
    await call.of_the_account()
    rows = await people.list_users(call.conn, call.account_id)
    return ok(m.USERS_OBTAINED, {"data": await people.records(call.conn, rows)})


@routes.operation(
    "GET",
    "/api/user/{userId}",
    operation_id="getUser",
    summary="Get a user",
    message=m.USER_OBTAINED,
    answer=obj(id=STR, user=USER_RECORD),
    errors=(404,),
)
async def get_user(call: Call, userId: str) -> Response:
    await call.of_the_account()
    row = await people.by_id(call.conn, call.account_id, userId)
    return ok(m.USER_OBTAINED, {"id": row["id"], "user": await people.record(call.conn, row)})


@routes.operation(
    "PUT",
    "/api/user/{userId}",
    operation_id="updateUser",
    summary="Update a user's name, role, workspaces or status",
    message=m.USER_UPDATED,
    answer=obj(id=STR, user=USER_RECORD),
    body=update_body_schema(USER_FIELDS, implicit=True),
    errors=(404, 409, 422),
)
async def update_user(call: Call, userId: str) -> Response:
    await call.of_the_account()
    body = await call.read_body()
    row, changed = await people.update_user(
        call.conn, call.principal, call.account_id, userId, body
    )
    if row["status"] == people.DISABLED:
        await sessions.end_all(call.conn, row["id"])
    if changed:
        await audit.note(call, "user.updated", row["id"])
    return ok(m.USER_UPDATED, {"id": row["id"], "user": await people.record(call.conn, row)})


@routes.operation(
    "DELETE",
    "/api/user/{userId}",
    operation_id="removeUser",
    summary="Remove a user (disabled, its sessions ended; the record stays)",
    message=m.USER_REMOVED,
    answer=obj(id=STR),
    errors=(404, 409),
)
async def remove_user(call: Call, userId: str) -> Response:
    await call.of_the_account()
    row, removed = await people.remove(call.conn, call.principal, call.account_id, userId)
    if removed:  # once: removing a removed (disabled) user again changes nothing
        await sessions.end_all(call.conn, row["id"])
        await audit.note(call, "user.removed", row["id"])
    return ok(m.USER_REMOVED, {"id": row["id"]})


@routes.operation(
    "POST",
    "/api/user/{userId}/reset-link",
    operation_id="createResetLink",
    summary="A single-use link to set a new password (valid 1 hour)",
    message=m.RESET_LINK_CREATED,
    answer=obj(id=STR, resetUrl=STR),
    body=create_body_schema(NO_FIELDS, workspace_key=False),
    body_required=False,
    errors=(404,),
)
async def create_reset_link(call: Call, userId: str) -> Response:
    await call.of_the_account()
    bodies.create_body(NO_FIELDS, await call.read_body(required=False), workspace_key=False)
    # The user's row held: a link and a disabling of the user are one after the other,
    # so a link is either made before (and retired by it) or made for a disabled user.
    await call.conn.begin()
    row = await people.by_id(call.conn, call.account_id, userId, for_change=True)
    reach.check_may_manage(call.principal, row)
    # The link is the user's password: its maker must hold all the user holds.
    reach.check_holds(call.principal, row["role"])
    token = await links.new_link(call.conn, row["id"], links.RESET, now=utcnow())
    url = links.link(settings_of(call.request).base_url, links.RESET, token)
    await audit.note(call, "user.reset_link_created", row["id"])
    mail.send_link(
        settings_of(call.request), to=row["email"], name=row["name"], purpose="reset", link=url
    )
    # A secret: never kept by a cache, nor by the idempotency layer (api/idempotency.py).
    return ok(m.RESET_LINK_CREATED, {"id": row["id"], "resetUrl": url}, headers=NO_STORE)


@routes.operation(
    "DELETE",
    "/api/user/{userId}/sessions",
    operation_id="endUserSessions",
    summary="End every session of a user",
    message=m.SESSIONS_ENDED,
    answer=obj(id=STR),
    errors=(404,),
)
async def end_user_sessions(call: Call, userId: str) -> Response:
    await call.of_the_account()
    row = await people.by_id(call.conn, call.account_id, userId)
    # Any session of the account's users (J.3), but only where the caller reaches.
    reach.check_reach(call.principal, row["role"], reach.workspace_list(row))
    await sessions.end_all(call.conn, row["id"])
    await audit.note(call, "session.ended", row["id"])
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
    conn = request_conn(request)
    given = bodies.create_body(ACCEPT, await read_json_object(request), workspace_key=False)
    require_valid(given.errors)
    clean = given.clean
    user, purpose = await people.find_token(conn, clean["token"])
    if purpose == links.RESET and user["two_factor_enabled"]:
        # A reset link is not a second factor: whoever holds it (the mailbox, the admin
        # who made it) still needs the user's code, as at sign-in (J.3).
        ip, _ = client_of(request)
        failed = failed_sign_in(request, user["email"])
        await sessions.second_factor(conn, user, clean.get("code"), ip=ip, on_failure=failed)
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

    async def audited(action: str) -> None:  # by the user itself, on itself
        await audit_entry(
            conn,
            request,
            user_principal(user),
            account_id=user["account_id"],
            action=action,
            target=user["id"],
        )

    if user["status"] == people.DISABLED:
        # Back to active (its links were retired when it was disabled: this one was made
        # after, on purpose). The keys it made work again, as its status does.
        await people.keys_follow(conn)
    if user["status"] != people.ACTIVE:
        await audited("user.updated")  # its status changed (J.6), invited or disabled
    if purpose == links.RESET:
        await sessions.end_all(conn, user["id"])
        await audited("user.password_changed")
    fresh = await people.any_by_id(conn, user["id"])
    assert fresh is not None
    return await signed_in(conn, request, fresh)
