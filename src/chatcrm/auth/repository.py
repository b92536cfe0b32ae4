"""Accounts, API keys and the workspace → account mapping."""

from datetime import datetime

from sqlalchemy import bindparam, insert, select, update
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.db.schema import accounts, api_keys, workspaces


async def insert_account(
    conn: AsyncConnection, *, account_id: str, name: str, now: datetime
) -> None:
    await conn.execute(insert(accounts).values(id=account_id, name=name, created_at=now))


async def account_exists(conn: AsyncConnection, account_id: str) -> bool:
    row = await conn.execute(select(accounts.c.id).where(accounts.c.id == account_id))
    return row.first() is not None


async def any_account(conn: AsyncConnection) -> bool:
    row = await conn.execute(select(accounts.c.id).limit(1))
    return row.first() is not None


async def insert_key(
    conn: AsyncConnection,
    *,
    key_id: str,
    account_id: str,
    secret_hash: str,
    now: datetime,
    rate_limit: float | None = None,
) -> None:
    await conn.execute(
        insert(api_keys).values(
            id=key_id,
            account_id=account_id,
            secret_hash=secret_hash,
            created_at=now,
            rate_limit=rate_limit,
        )
    )


async def set_rate_limit(conn: AsyncConnection, key_id: str, rate_limit: float | None) -> bool:
    result = await conn.execute(
        update(api_keys).where(api_keys.c.id == key_id).values(rate_limit=rate_limit)
    )
    return result.rowcount == 1


_GET_KEY = select(
    api_keys.c.account_id,
    api_keys.c.secret_hash,
    api_keys.c.revoked_at,
    api_keys.c.rate_limit,
).where(api_keys.c.id == bindparam("_id"))


async def get_key(conn: AsyncConnection, key_id: str) -> RowMapping | None:
    result = await conn.execute(_GET_KEY, {"_id": key_id})
    return result.mappings().first()


async def revoke_key(conn: AsyncConnection, key_id: str, now: datetime) -> bool:
    """True when the key existed and was live."""
    result = await conn.execute(
        update(api_keys)
        .where(api_keys.c.id == key_id, api_keys.c.revoked_at.is_(None))
        .values(revoked_at=now)
    )
    return result.rowcount == 1


async def key_exists(conn: AsyncConnection, key_id: str) -> bool:
    row = await conn.execute(select(api_keys.c.id).where(api_keys.c.id == key_id))
    return row.first() is not None


_WORKSPACE_ACCOUNT = select(workspaces.c.account_id).where(workspaces.c.id == bindparam("_id"))


async def workspace_account(conn: AsyncConnection, workspace_id: str) -> str | None:
    result = await conn.execute(_WORKSPACE_ACCOUNT, {"_id": workspace_id})
    return result.scalar_one_or_none()
