"""Scoped API keys (contract J.5): a name, scopes, optionally workspaces and an expiry;
never more than their creator holds; the first edition's account keys keep every
permission (NULL scopes)."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import bindparam, select

from chatcrm.auth import keys as key_format
from chatcrm.auth import repository as repo
from chatcrm.auth import scopes
from chatcrm.auth.service import Principal, revoke_key
from chatcrm.core.errors import FieldError, Forbidden, ValidationFailed, require_valid
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db.database import Connection, Row
from chatcrm.db.schema import api_keys
from chatcrm.people.errors import KeyNotFound, PermissionDenied
from chatcrm.people.fields import KEY
from chatcrm.people.reach import check_key_reach
from chatcrm.people.users import account_workspaces
from chatcrm.records import bodies

_k = api_keys.c
_COLUMNS = (
    _k.id,
    _k.name,
    _k.scopes,
    _k.workspace_ids,
    _k.expires_at,
    _k.created_at,
    _k.last_used_at,
    _k.revoked_at,
    _k.created_by,
)
_ONE = select(*_COLUMNS).where(_k.id == bindparam("_id"))
_OF_ACCOUNT = (
    select(*_COLUMNS).where(_k.account_id == bindparam("_account")).order_by(_k.created_at, _k.id)
)
_ACCOUNT_OF = select(_k.account_id).where(_k.id == bindparam("_id"))


def _record(row: Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "scopes": [scopes.EVERY] if row["scopes"] is None else orjson.loads(row["scopes"]),
        "workspaceIds": None
        if row["workspace_ids"] is None
        else orjson.loads(row["workspace_ids"]),
        "expiresAt": iso(row["expires_at"]),
        "createdAt": iso(row["created_at"]),
        "lastUsedAt": iso(row["last_used_at"]),
        "revokedAt": iso(row["revoked_at"]),
        "createdBy": row["created_by"],
    }


async def record(conn: Connection, key_id: str) -> dict[str, Any]:
    row = await conn.fetchrow(_ONE, {"_id": key_id})
    if row is None:
        raise KeyNotFound(key_id)
    return _record(row)


async def records(conn: Connection, account_id: str) -> list[dict[str, Any]]:
    return [_record(r) for r in await conn.fetch(_OF_ACCOUNT, {"_account": account_id})]


async def create(conn: Connection, creator: Principal, body: dict[str, Any]) -> tuple[str, str]:
    """(the key's id, the key itself: shown once)."""
    given = bodies.create_body(KEY, body, workspace_key=False)
    clean = given.clean
    wanted = scopes.parse_scopes(clean.get("scopes")) if "scopes" in clean else None
    if "scopes" in clean and wanted is None:
        given.errors.append(FieldError("scopes", '["*"] or scopes of: ' + ", ".join(scopes.ALL)))
    expires = clean.get("expiresAt")
    if expires is not None and expires <= utcnow():
        given.errors.append(FieldError("expiresAt", "must be in the future"))
    require_valid(given.errors)
    assert wanted is not None
    if creator.expires_at is not None:  # a key made by a key ends with it, at the latest
        expires = creator.expires_at if expires is None else min(expires, creator.expires_at)
    # Never more than the creator holds: each scope (["*"] is every one: J.5's 403 for a
    # creator lacking any), and the workspaces.
    granted = list(scopes.ALL) if wanted == [scopes.EVERY] else wanted
    for scope in granted:
        if scope not in creator.scopes:
            what = "'*' (every scope)" if wanted == [scopes.EVERY] else f"'{scope}'"
            raise PermissionDenied(
                scope, f"A key cannot grant {what}: its creator lacks '{scope}'."
            )
    limited: list[str] | None = clean.get("workspaceIds")
    if limited is not None:
        every = set(await account_workspaces(conn, creator.account_id))
        for w in limited:
            if w not in every:
                raise ValidationFailed(
                    [FieldError("workspaceIds", f"'{w}' is not a workspace of this account")]
                )
            if creator.workspace_ids is not None and w not in creator.workspace_ids:
                # J.5: a workspace outside the caller's list is 403 FORBIDDEN.
                raise Forbidden(f"A key cannot use workspace '{w}': its creator cannot.")
    elif creator.workspace_ids is not None:
        limited = sorted(creator.workspace_ids)
    key_id = new_id()
    raw, secret_hash = key_format.new_key(key_id)
    await conn.begin()
    await repo.insert_key(
        conn,
        key_id=key_id,
        account_id=creator.account_id,
        secret_hash=secret_hash,
        now=utcnow(),
        name=clean["name"],
        scopes=orjson.dumps(wanted).decode(),
        workspace_ids=None if limited is None else orjson.dumps(limited).decode(),
        expires_at=expires,
        created_by=creator.key_id or None,
    )
    return key_id, raw


async def revoke(conn: Connection, account_id: str, key_id: str, *, caller: Principal) -> bool:
    """True when it was live (revoking a revoked key again changes nothing). A key the
    caller does not reach is 403 (people/reach.py)."""
    if not is_id(key_id) or await conn.fetchval(_ACCOUNT_OF, {"_id": key_id}) != account_id:
        raise KeyNotFound(key_id)
    check_key_reach(caller, (await record(conn, key_id))["workspaceIds"])
    await conn.begin()
    return await revoke_key(conn, key_id)
