"""Fixtures of the webhook tests: a real receiver, databases of their own, dispatchers.

A dispatcher claims every due delivery in its database, whichever workspace it belongs
to. So these tests run on databases of their own (one per backend), which the dispatcher
of the suite's shared app never sees, and each test drops its deliveries when it ends:
a test's `run_once()` counts its own attempts only."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from sqlalchemy import delete

from chatcrm.config import Settings
from chatcrm.db.database import Database
from chatcrm.db.schema import webhook_deliveries
from chatcrm.webhooks.dispatcher import Dispatcher
from tests.conftest import DATABASES, migrated_database, new_account
from tests.webhooks.receiver import Receiver


@pytest.fixture(scope="session", params=DATABASES)
def dispatch_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A database of each backend for the dispatcher tests alone: what they queue and
    send is theirs (the shared app's tests run no dispatcher)."""
    with migrated_database(request.param, tmp_path_factory) as url:
        yield url


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


def dispatch_settings(database_url: str, **overrides: Any) -> Settings:
    """Settings for reaching the receiver on 127.0.0.1, with a retry far in the future
    unless a test asks for a short schedule."""
    values: dict[str, Any] = {
        "database_url": database_url,
        "webhook_allow_private": True,
        "webhook_retry_schedule": "600",
        "webhook_timeout": 5.0,
    }
    values.update(overrides)
    return Settings(**values)


@pytest.fixture
async def db(dispatch_url: str) -> AsyncIterator[Database]:
    database = Database(Settings(database_url=dispatch_url))
    yield database
    await database.dispose()


@pytest.fixture
async def workspace(db: Database, dispatch_url: str) -> AsyncIterator[str]:
    """A new workspace; its deliveries are deleted when the test ends."""
    account = await asyncio.to_thread(new_account, dispatch_url)
    yield account.workspace_id
    async with db.transaction() as conn:
        await conn.execute(
            delete(webhook_deliveries).where(
                webhook_deliveries.c.workspace_id == account.workspace_id
            )
        )


@pytest.fixture
def dispatcher_for(db: Database, dispatch_url: str) -> Callable[..., Dispatcher]:
    """`dispatcher_for(webhook_timeout=0.5, …)`: a dispatcher on the test database."""

    def make(**overrides: Any) -> Dispatcher:
        return Dispatcher(db, dispatch_settings(dispatch_url, **overrides))

    return make


@pytest.fixture
def sync_workspace(dispatch_url: str) -> Iterator[str]:
    """`workspace` for tests without an event loop (those that start processes)."""
    account = new_account(dispatch_url)
    yield account.workspace_id

    async def drop() -> None:
        database = Database(Settings(database_url=dispatch_url))
        try:
            async with database.transaction() as conn:
                await conn.execute(
                    delete(webhook_deliveries).where(
                        webhook_deliveries.c.workspace_id == account.workspace_id
                    )
                )
        finally:
            await database.dispose()

    asyncio.run(drop())
