"""Accounts, workspaces and keys created outside the HTTP API (CLI, first start, tests)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.auth import repository as auth_repo
from chatcrm.auth.service import create_account, create_key
from chatcrm.workspaces.service import create_workspace


@dataclass(frozen=True)
class NewAccount:
    account_id: str
    workspace_id: str
    key_id: str
    api_key: str


async def init_account(
    conn: AsyncConnection, *, workspace_name: str = "My workspace", account_name: str = "chatcrm"
) -> NewAccount:
    """A new account with one workspace (default stages) and one API key."""
    account_id = await create_account(conn, name=account_name)
    workspace_id = await create_workspace(conn, account_id=account_id, name=workspace_name)
    key_id, api_key = await create_key(conn, account_id=account_id)
    return NewAccount(account_id, workspace_id, key_id, api_key)


async def demo_if_empty(conn: AsyncConnection) -> NewAccount | None:
    """On a database without any account, the demo account `chatcrm serve` announces."""
    if await auth_repo.any_account(conn):
        return None
    return await init_account(conn, workspace_name="Demo workspace", account_name="demo")
