"""Users of an account (contract J.1): the record, invitations and reset links, roles and
workspaces, the last owner kept."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
from sqlalchemy import bindparam, func, insert, select, update
from sqlalchemy.sql.elements import BindParameter

from chatcrm.auth import scopes
from chatcrm.auth.service import Principal, key_changed
from chatcrm.core.errors import BadRequest, FieldError, ValidationFailed, require_valid
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db import locks
from chatcrm.db.database import Connection, Row
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import agents, workspaces
from chatcrm.people import links, passwords
from chatcrm.people.errors import (
    DuplicateUser,
    InvalidToken,
    LastOwner,
    UserNotFound,
)
from chatcrm.people.fields import USER
from chatcrm.people.reach import (
    check_holds,
    check_may_manage,
    check_reach,
    check_role_change,
    sees_every_workspace,
    workspace_list,
)
from chatcrm.people.tables import users
from chatcrm.records import bodies

INVITED, ACTIVE, DISABLED = "invited", "active", "disabled"

_u = users.c
_ID: BindParameter[str] = bindparam("_id")
_ACCOUNT: BindParameter[str] = bindparam("_account")
_INSERT = insert(users)
_BY_ID = select(users).where(_u.id == _ID, _u.account_id == _ACCOUNT)
# A change reads the row locked: two changes of one user at once (on two nodes) would
# each write back the other's column as it read it (a disable lost to a rename).
_BY_ID_LOCKED = _BY_ID.with_for_update()
_BY_ANY_ID = select(users).where(_u.id == _ID)
_BY_EMAIL = select(users).where(_u.email_key == bindparam("_email"))
_OF_ACCOUNT = select(users).where(_u.account_id == _ACCOUNT).order_by(_u.created_at, _u.id)
_ALL = select(users).order_by(_u.created_at, _u.id)
_OWNERS_SEED = 0x6F_77_6E_72  # the account's owners, among the advisory locks
_EMAIL_SEED = 0x65_6D_61_69  # an e-mail's user
_ACTIVE_OWNERS = select(func.count()).where(
    _u.account_id == _ACCOUNT, _u.role == scopes.OWNER, _u.status == ACTIVE
)
_ACCOUNT_WORKSPACES = (
    select(workspaces.c.id)
    .where(workspaces.c.account_id == _ACCOUNT)
    .order_by(workspaces.c.created_at, workspaces.c.id)
)
# Their e-mails are lowered by Python (email_key), never by the database: one whose ctype
# is C lowers ASCII letters alone.
_AGENTS_BY_EMAIL = (
    select(agents.c.workspace_id, agents.c.id, agents.c.email)
    .where(in_id_list(agents.c.workspace_id, "_ws", "postgresql"))
    .order_by(agents.c.created_at, agents.c.id)
)
_AGENTS_BY_EMAIL_SQLITE = (
    select(agents.c.workspace_id, agents.c.id, agents.c.email)
    .where(in_id_list(agents.c.workspace_id, "_ws", "sqlite"))
    .order_by(agents.c.created_at, agents.c.id)
)


def email_key(email: str) -> str:
    return email.lower()


def _update_user(columns: dict[str, Any]) -> Any:
    return update(users).where(_u.id == _ID).values(**columns)


async def set_columns(conn: Connection, user_id: str, **columns: Any) -> None:
    await conn.begin()
    await conn.execute(_update_user(columns), {"_id": user_id})


async def by_id(
    conn: Connection, account_id: str, user_id: str, *, for_change: bool = False
) -> Row:
    if not is_id(user_id):  # never sent: PostgreSQL refuses a NUL in it (a 422, not a 404)
        raise UserNotFound(user_id)
    statement = _BY_ID_LOCKED if for_change else _BY_ID
    row = await conn.fetchrow(statement, {"_id": user_id, "_account": account_id})
    if row is None:
        raise UserNotFound(user_id)
    return row


async def any_by_id(conn: Connection, user_id: str) -> Row | None:
    return await conn.fetchrow(_BY_ANY_ID, {"_id": user_id})


async def by_email(conn: Connection, email: str) -> Row | None:
    return await conn.fetchrow(_BY_EMAIL, {"_email": email_key(email)})


async def account_workspaces(conn: Connection, account_id: str) -> list[str]:
    return [r["id"] for r in await conn.fetch(_ACCOUNT_WORKSPACES, {"_account": account_id})]


async def records(conn: Connection, rows: list[Row]) -> list[dict[str, Any]]:
    """The users' records (J.1 key order), their linked agents found by e-mail."""
    if not rows:
        return []
    every = await account_workspaces(conn, rows[0]["account_id"])
    statement = _AGENTS_BY_EMAIL if conn.dialect == "postgresql" else _AGENTS_BY_EMAIL_SQLITE
    found = await conn.fetch(statement, {"_ws": id_list(every, conn.dialect)}) if every else []
    linked: dict[str, dict[str, str]] = {}  # email key -> workspace -> agent (the first)
    for agent in found:
        key = email_key(agent["email"] or "")
        linked.setdefault(key, {}).setdefault(agent["workspace_id"], agent["id"])
    out = []
    for row in rows:
        own = every if sees_every_workspace(row["role"]) else workspace_list(row)
        agents_of = linked.get(row["email_key"], {})
        out.append(
            {
                "id": row["id"],
                "email": row["email"],
                "name": row["name"],
                "role": row["role"],
                "status": row["status"],
                "workspaceIds": own,
                "agentIds": [agents_of[w] for w in own if w in agents_of],
                "twoFactorEnabled": bool(row["two_factor_enabled"]),
                "createdAt": iso(row["created_at"]),
                "lastSignInAt": iso(row["last_sign_in_at"]),
            }
        )
    return out


async def record(conn: Connection, row: Row) -> dict[str, Any]:
    return (await records(conn, [row]))[0]


async def list_users(conn: Connection, account_id: str | None) -> list[Row]:
    if account_id is None:
        return await conn.fetch(_ALL)
    return await conn.fetch(_OF_ACCOUNT, {"_account": account_id})


# --- checks ----------------------------------------------------------------------------------


async def _check_workspaces(
    conn: Connection, account_id: str, role: str, ids: list[str] | None
) -> list[str]:
    """Agents and viewers: 1 or more workspaces of the account; others: none kept."""
    if sees_every_workspace(role):
        return []
    if not ids:
        raise ValidationFailed(
            [FieldError("workspaceIds", "agents and viewers need at least one workspace")]
        )
    every = set(await account_workspaces(conn, account_id))
    unknown = [w for w in ids if w not in every]
    if unknown:
        raise ValidationFailed(
            [FieldError("workspaceIds", f"'{unknown[0]}' is not a workspace of this account")]
        )
    return ids


async def _keeps_an_owner(
    conn: Connection, account_id: str, row: Row, role: str, status: str
) -> None:
    """409 LAST_OWNER when this change leaves the account without an active owner."""
    was_owner = row["role"] == scopes.OWNER and row["status"] == ACTIVE
    still_owner = role == scopes.OWNER and status == ACTIVE
    if was_owner and not still_owner:
        # Two owners demoting each other at once (on two nodes) must not both see the
        # other still there: the second counts after the first has committed.
        await locks.hold(conn, _OWNERS_SEED, account_id)
        owners = await conn.fetchval(_ACTIVE_OWNERS, {"_account": account_id})
        if int(owners or 0) <= 1:
            raise LastOwner


# --- operations ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Invited:
    row: Row
    token: str


async def invite(
    conn: Connection, caller: Principal | None, account_id: str, body: dict[str, Any]
) -> Invited:
    given = bodies.create_body(USER, body, workspace_key=False)
    require_valid(given.errors)
    clean = given.clean
    if caller is not None:
        check_role_change(caller, touching=None, making=clean["role"])
    ids = await _check_workspaces(conn, account_id, clean["role"], clean.get("workspaceIds"))
    if caller is not None:
        check_reach(caller, clean["role"], ids)
        check_holds(caller, clean["role"])
    return await create(
        conn,
        account_id=account_id,
        email=clean["email"],
        name=clean["name"],
        role=clean["role"],
        workspace_ids=ids,
    )


async def create(
    conn: Connection,
    *,
    account_id: str,
    email: str,
    name: str,
    role: str,
    workspace_ids: list[str],
) -> Invited:
    """A user `invited`, and its invitation's token (the CLI and the demo owner too)."""
    # Two invitations of one e-mail at once: the second finds the first (409), instead of
    # meeting it on the unique index.
    await locks.hold(conn, _EMAIL_SEED, email_key(email))
    if await by_email(conn, email) is not None:
        raise DuplicateUser
    now = utcnow()
    user_id = new_id()
    await conn.execute(
        _INSERT,
        {
            "id": user_id,
            "account_id": account_id,
            "email": email,
            "email_key": email_key(email),
            "name": name,
            "role": role,
            "status": INVITED,
            "workspace_ids": orjson.dumps(workspace_ids).decode(),
            "password_hash": None,
            "totp_secret": None,
            "two_factor_enabled": False,
            "totp_last_step": None,
            "recovery_codes": None,
            "created_at": now,
            "updated_at": now,
            "last_sign_in_at": None,
        },
    )
    token = await links.new_link(conn, user_id, links.INVITE, now=now)
    row = await by_id(conn, account_id, user_id)
    return Invited(row, token)


async def update_user(
    conn: Connection, caller: Principal, account_id: str, user_id: str, body: dict[str, Any]
) -> tuple[Row, list[str]]:
    """The A.1 body over name, role, workspaceIds, status; returns the new row and what
    changed (for the audit log)."""
    if "workspaceId" in body:  # as an invitation's body: never silently ignored
        raise BadRequest.field(
            "workspaceId",
            "Unexpected body key 'workspaceId': a user belongs to the account; "
            "its workspaces are 'workspaceIds'.",
        )
    names = bodies.update_names(
        USER,
        body,
        record_id=user_id,
        id_source="the user id of the path",
        implicit=True,
        workspace_key=False,
    )
    given = bodies.update_values(USER, names, body)
    require_valid(given.errors)
    clean = given.clean
    await conn.begin()
    row = await by_id(conn, account_id, user_id, for_change=True)
    role = str(clean["role"] if "role" in clean else row["role"])
    status = str(clean["status"] if "status" in clean else row["status"])
    check_may_manage(caller, row)
    check_role_change(caller, touching=row["role"], making=clean.get("role"))
    if "status" in clean and status == ACTIVE and row["password_hash"] is None:
        # Only accepting the invitation makes an invited user active: one disabled before
        # it accepted comes back invited (an "active" owner nobody can sign in as would
        # let the last real owner step down: LAST_OWNER counts active owners).
        status = INVITED
    columns: dict[str, Any] = {}
    if "name" in clean:
        columns["name"] = clean["name"]
    if "role" in clean or "workspaceIds" in clean:
        ids = clean.get("workspaceIds", workspace_list(row))
        if not sees_every_workspace(role):
            ids = await _check_workspaces(conn, account_id, role, ids)
        check_reach(caller, role, ids)
        if "role" in clean:
            check_holds(caller, role)
        columns["role"] = role
        columns["workspace_ids"] = orjson.dumps([] if sees_every_workspace(role) else ids).decode()
    columns["status"] = status
    await _keeps_an_owner(conn, account_id, row, role, status)
    columns["updated_at"] = now = utcnow()
    await set_columns(conn, user_id, **columns)
    if status == DISABLED and row["status"] != DISABLED:
        await links.retire(conn, user_id, now)
    # What the change changed (a field given its own value changes nothing): the audit
    # log records a user.updated only then, and keys follow only then.
    holds: dict[str, Any] = {"role": role, "status": status}
    if "workspace_ids" in columns:
        holds["workspaceIds"] = orjson.loads(columns["workspace_ids"])
    held = {"role": row["role"], "workspaceIds": workspace_list(row), "status": row["status"]}
    changed = [n for n in held if n in holds and holds[n] != held[n]]
    if changed:
        await keys_follow(conn)
    return await by_id(conn, account_id, user_id), changed


async def remove(
    conn: Connection, caller: Principal, account_id: str, user_id: str
) -> tuple[Row, bool]:
    """Disabled, its record kept (past events name it); and whether it was not already
    (removing a disabled user again changes nothing)."""
    await conn.begin()
    row = await by_id(conn, account_id, user_id, for_change=True)
    check_may_manage(caller, row)
    if row["status"] == DISABLED:
        return row, False
    await _keeps_an_owner(conn, account_id, row, row["role"], DISABLED)
    now = utcnow()
    await set_columns(conn, user_id, status=DISABLED, updated_at=now)
    # Its links stop working: a removed user does not come back through an old one.
    await links.retire(conn, user_id, now)
    await keys_follow(conn)
    return row, True


async def keys_follow(conn: Connection) -> None:
    """The keys a user made keep within its role, workspaces and status of now (J.5):
    every process forgets the keys it knows (within 1 s, as for a revocation), so that
    each is read again with its creator's new limits. Role changes are rare."""
    await key_changed(conn, "")


async def find_token(conn: Connection, token: str) -> tuple[Row, str]:
    """The user a live invitation or reset token names, and its purpose (the token still
    usable). 400 INVALID_TOKEN otherwise."""
    await conn.begin()
    found = await links.stored(conn, token)
    if found is None or found["used_at"] is not None or found["expires_at"] <= utcnow():
        raise InvalidToken
    user = await any_by_id(conn, found["user_id"])
    if user is None:
        raise InvalidToken
    # Disabling a user retires its links (holding the user's row, as making one does), so
    # a live link of a disabled user was made after, on purpose, by someone allowed to make
    # it: accepting it makes the user active again (J.1), whatever edits came in between.
    return user, found["purpose"]


async def take_token(conn: Connection, token: str) -> tuple[Row, str]:
    """As `find_token`, and the token is used up."""
    user, purpose = await find_token(conn, token)
    if not await links.use(conn, token, utcnow()):
        raise InvalidToken  # used meanwhile by a racing request
    return user, purpose


async def set_password(conn: Connection, user: Row, password: str, *, field: str) -> None:
    require_valid(passwords.problems(password, email=user["email"], field=field))
    await set_columns(
        conn, user["id"], password_hash=passwords.hash_password(password), updated_at=utcnow()
    )
