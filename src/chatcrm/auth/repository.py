"""Accounts, API keys and the workspace → account mapping."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import bindparam, func, insert, literal_column, select, update
from sqlalchemy.sql.elements import BindParameter

from chatcrm.db.database import Connection, Row
from chatcrm.db.schema import accounts, api_keys, key_changes, workspaces
from chatcrm.people.tables import users

_ID: BindParameter[str] = bindparam("_id")
_INSERT_ACCOUNT = insert(accounts)
_ACCOUNT = select(accounts.c.id).where(accounts.c.id == _ID)
_ANY_ACCOUNT = select(accounts.c.id).limit(1)
_INSERT_KEY = insert(api_keys)
_SET_RATE_LIMIT = update(api_keys).where(api_keys.c.id == _ID).values(rate_limit=bindparam("_rate"))
_GET_KEY = select(
    api_keys.c.account_id,
    api_keys.c.secret_hash,
    api_keys.c.revoked_at,
    api_keys.c.rate_limit,
    api_keys.c.name,
    api_keys.c.scopes,
    api_keys.c.workspace_ids,
    api_keys.c.expires_at,
    api_keys.c.created_by,
).where(api_keys.c.id == _ID)
_CREATOR_KEY = select(
    api_keys.c.created_by,
    api_keys.c.scopes,
    api_keys.c.workspace_ids,
    api_keys.c.revoked_at,
    api_keys.c.expires_at,
).where(api_keys.c.id == _ID)
_USER = select(users.c.role, users.c.status, users.c.workspace_ids).where(users.c.id == _ID)
_REVOKE = (
    update(api_keys)
    .where(api_keys.c.id == _ID, api_keys.c.revoked_at.is_(None))
    .values(revoked_at=bindparam("_now"))
)
_KEY = select(api_keys.c.id).where(api_keys.c.id == _ID)
# PostgreSQL channel on which a changed key's id is announced (delivered at commit).
KEYS_CHANNEL = "chatcrm_keys"
_NOTIFY_KEY_CHANGE = select(func.pg_notify(literal_column(f"'{KEYS_CHANNEL}'"), _ID))
_COUNT_KEY_CHANGE = (
    update(key_changes)
    .where(key_changes.c.id == literal_column("1"))
    .values(version=key_changes.c.version + literal_column("1"))
)
_KEY_CHANGES = select(key_changes.c.version).where(key_changes.c.id == literal_column("1"))
_WORKSPACE_ACCOUNT = select(workspaces.c.account_id).where(workspaces.c.id == _ID)
# Listings for operators (`chatcrm accounts list`, `chatcrm keys list`), oldest first.
_ACCOUNTS = select(accounts.c.id, accounts.c.name, accounts.c.created_at).order_by(
    accounts.c.created_at, accounts.c.id
)
# Never the secret's hash: a listing is printed, copied and pasted.
_KEY_LISTING = select(
    api_keys.c.id,
    api_keys.c.account_id,
    api_keys.c.created_at,
    api_keys.c.revoked_at,
    api_keys.c.rate_limit,
).order_by(api_keys.c.created_at, api_keys.c.id)
_ACCOUNT_KEY_LISTING = _KEY_LISTING.where(api_keys.c.account_id == _ID)


async def insert_account(conn: Connection, *, account_id: str, name: str, now: datetime) -> None:
    await conn.execute(_INSERT_ACCOUNT, {"id": account_id, "name": name, "created_at": now})


async def account_exists(conn: Connection, account_id: str) -> bool:
    return await conn.fetchrow(_ACCOUNT, {"_id": account_id}) is not None


async def any_account(conn: Connection) -> bool:
    return await conn.fetchrow(_ANY_ACCOUNT) is not None


async def insert_key(
    conn: Connection,
    *,
    key_id: str,
    account_id: str,
    secret_hash: str,
    now: datetime,
    rate_limit: float | None = None,
    name: str = "",
    scopes: str | None = None,
    workspace_ids: str | None = None,
    expires_at: datetime | None = None,
    created_by: str | None = None,
) -> None:
    """`scopes` and `workspace_ids`: JSON arrays, or None for no limit."""
    await conn.execute(
        _INSERT_KEY,
        {
            "id": key_id,
            "account_id": account_id,
            "secret_hash": secret_hash,
            "created_at": now,
            "rate_limit": rate_limit,
            "name": name,
            "scopes": scopes,
            "workspace_ids": workspace_ids,
            "expires_at": expires_at,
            "last_used_at": None,
            "created_by": created_by,
        },
    )


async def set_rate_limit(conn: Connection, key_id: str, rate_limit: float | None) -> bool:
    return await conn.execute(_SET_RATE_LIMIT, {"_id": key_id, "_rate": rate_limit}) == 1


async def get_key(conn: Connection, key_id: str) -> Row | None:
    return await conn.fetchrow(_GET_KEY, {"_id": key_id})


async def user(conn: Connection, user_id: str) -> Row | None:
    """A user's role, status and workspaces (the limits of the keys it made)."""
    return await conn.fetchrow(_USER, {"_id": user_id})


async def key_creator(conn: Connection, key_id: str) -> Row | None:
    """A key's creator (None for an account key), scopes, workspaces, revocation and
    expiry; None: no key."""
    return await conn.fetchrow(_CREATOR_KEY, {"_id": key_id})


async def revoke_key(conn: Connection, key_id: str, now: datetime) -> bool:
    """True when the key existed and was live."""
    return await conn.execute(_REVOKE, {"_id": key_id, "_now": now}) == 1


async def count_key_change(conn: Connection) -> None:
    await conn.execute(_COUNT_KEY_CHANGE)


async def notify_key_change(conn: Connection, key_id: str) -> None:
    """PostgreSQL only."""
    await conn.fetch(_NOTIFY_KEY_CHANGE, {"_id": key_id})


async def key_changes_version(conn: Connection) -> int:
    value = await conn.fetchval(_KEY_CHANGES)
    return int(value or 0)


async def key_exists(conn: Connection, key_id: str) -> bool:
    return await conn.fetchrow(_KEY, {"_id": key_id}) is not None


async def workspace_account(conn: Connection, workspace_id: str) -> str | None:
    value: str | None = await conn.fetchval(_WORKSPACE_ACCOUNT, {"_id": workspace_id})
    return value


async def list_accounts(conn: Connection) -> list[Row]:
    """id, name, created_at of every account."""
    return await conn.fetch(_ACCOUNTS)


async def list_keys(conn: Connection, account_id: str | None = None) -> list[Row]:
    """id, account_id, created_at, revoked_at, rate_limit of the keys of one account, or
    of all; never the secret's hash."""
    if account_id is None:
        return await conn.fetch(_KEY_LISTING)
    return await conn.fetch(_ACCOUNT_KEY_LISTING, {"_id": account_id})
