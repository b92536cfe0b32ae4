"""Accounts, workspaces and keys created outside the HTTP API (CLI, first start, tests)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from sqlalchemy import BigInteger, bindparam, func, select

from chatcrm.auth import repository as auth_repo
from chatcrm.auth.scopes import OWNER
from chatcrm.auth.service import create_account, create_key
from chatcrm.db.database import Connection
from chatcrm.db.migrate import PG_LOCK_KEY
from chatcrm.people import users as people
from chatcrm.workspaces.service import create_workspace


@dataclass(frozen=True)
class NewAccount:
    account_id: str
    workspace_id: str
    key_id: str
    api_key: str
    # The demo's owner (contract J.1): its e-mail and invitation token, to set a password.
    owner_email: str | None = None
    owner_token: str | None = None


DEMO_OWNER = "owner@example.com"


async def init_account(
    conn: Connection, *, workspace_name: str = "My workspace", account_name: str = "chatcrm"
) -> NewAccount:
    """A new account with one workspace (default stages) and one API key."""
    account_id = await create_account(conn, name=account_name)
    workspace_id = await create_workspace(conn, account_id=account_id, name=workspace_name)
    key_id, api_key = await create_key(conn, account_id=account_id)
    return NewAccount(account_id, workspace_id, key_id, api_key)


_LOCK = select(func.pg_advisory_xact_lock(bindparam("_key", type_=BigInteger)))


async def demo_if_empty(conn: Connection) -> NewAccount | None:
    """On a database without any account, the demo account `chatcrm serve` announces.

    Nodes starting together must not each create one: PostgreSQL serialises them on an
    advisory lock, SQLite on the write lock the transaction already holds."""
    if conn.dialect == "postgresql":
        await conn.fetch(_LOCK, {"_key": PG_LOCK_KEY})
    if await auth_repo.any_account(conn):
        return None
    demo = await init_account(conn, workspace_name="Demo workspace", account_name="demo")
    owner = await people.create(
        conn,
        account_id=demo.account_id,
        email=DEMO_OWNER,
        name="Demo owner",
        role=OWNER,
        workspace_ids=[],
    )
    return replace(demo, owner_email=DEMO_OWNER, owner_token=owner.token)
