"""Fixtures: the suite runs against SQLite (a temporary file) and PostgreSQL (a fresh
database per run, created here, migrated with Alembic, dropped at the end).

PostgreSQL comes from CHATCRM_TEST_POSTGRES_URL (an admin URL; default: the local server).
Outside CI an unreachable server skips those tests, loudly; under CI=true it fails them.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.database import Database
from chatcrm.db.engine import standalone_engine
from chatcrm.db.migrate import upgrade
from chatcrm.provisioning import NewAccount, init_account
from tests.client import Api

T = TypeVar("T")

BACKENDS = ("sqlite", "postgresql")
PG_ADMIN_URL = os.environ.get(
    "CHATCRM_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
_pg_skip_reason: list[str] = []


def _asyncpg_url(url: str) -> str:
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


async def _pg_admin(statement: str) -> None:
    engine = create_async_engine(
        _asyncpg_url(PG_ADMIN_URL), isolation_level="AUTOCOMMIT", connect_args={"timeout": 5}
    )
    try:
        async with engine.connect() as conn:
            await conn.execute(text(statement))
    finally:
        await engine.dispose()


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to its end from sync test code; in a thread of its own when this
    thread already runs a loop (Playwright's, in the browser tests)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def create_pg_database() -> str:
    """A new empty database on the test server; returns its URL."""
    name = f"chatcrm_test_{uuid.uuid4().hex[:12]}"
    try:
        run_sync(lambda: _pg_admin(f'CREATE DATABASE "{name}"'))
    except Exception as exc:
        reason = f"PostgreSQL at {PG_ADMIN_URL} is not reachable ({type(exc).__name__}: {exc})"
        if IN_CI:
            pytest.fail(f"{reason}; CI must run the PostgreSQL tests", pytrace=False)
        _pg_skip_reason.append(reason)
        pytest.skip(f"SKIPPING POSTGRESQL TESTS: {reason}")
    return make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)


def drop_pg_database(url: str) -> None:
    name = make_url(url).database
    run_sync(lambda: _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


def migrate(url: str) -> None:
    settings = Settings(database_url=url)

    async def run() -> None:
        engine = standalone_engine(url, settings)
        try:
            await upgrade(engine)
        finally:
            await engine.dispose()

    run_sync(run)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _pg_skip_reason:
        terminalreporter.write_sep("!", "POSTGRESQL TESTS WERE SKIPPED", red=True, bold=True)
        terminalreporter.write_line(_pg_skip_reason[0], red=True)
        terminalreporter.write_line(
            "Set CHATCRM_TEST_POSTGRES_URL to a reachable server to run them.", red=True
        )


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A migrated database of its own on the test PostgreSQL, for what only PostgreSQL
    has (pool sizes, concurrent writers)."""
    url = create_pg_database()
    try:
        migrate(url)
        yield url
    finally:
        drop_pg_database(url)


@contextmanager
def migrated_database(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A new, migrated, empty database of a backend (a PostgreSQL one is dropped after)."""
    if backend == "sqlite":
        path: Path = tmp_path_factory.mktemp("sqlite") / "chatcrm.db"
        url = f"sqlite:///{path}"
        migrate(url)
        yield url
        return
    url = create_pg_database()
    try:
        migrate(url)
        yield url
    finally:
        drop_pg_database(url)


@pytest.fixture(scope="session", params=BACKENDS)
def database_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A migrated, empty database of each backend, shared by the tests of the session."""
    with migrated_database(request.param, tmp_path_factory) as url:
        yield url


@pytest.fixture(scope="session")
def backend(database_url: str) -> str:
    return "sqlite" if database_url.startswith("sqlite") else "postgresql"


@pytest.fixture(scope="session")
def settings(database_url: str) -> Settings:
    # Rate limiting is tested on its own apps; the shared app must not throttle the suite.
    # Nor does it send webhooks: the delivery tests run dispatchers of their own, and the
    # endpoint tests read delivery rows no dispatcher is changing under them.
    return Settings(database_url=database_url, rate_limit=0, access_log=False, dispatch=False)


@pytest.fixture(scope="session")
def http(settings: Settings) -> Iterator[TestClient]:
    """The app in-process (its own event loop thread), shared by the session's tests."""
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield client


def new_account(database_url: str, workspace_name: str = "Test workspace") -> NewAccount:
    """An account + workspace + key, through the code the CLI uses."""

    async def run() -> NewAccount:
        db = Database(Settings(database_url=database_url))
        try:
            async with db.transaction() as conn:
                return await init_account(conn, workspace_name=workspace_name)
        finally:
            await db.dispose()

    return run_sync(run)


@pytest.fixture
def account(database_url: str) -> NewAccount:
    return new_account(database_url)


@pytest.fixture
def api(http: TestClient, account: NewAccount) -> Api:
    """A client of a fresh workspace: its key and workspace header are sent by default."""
    return Api(http, account)


@pytest.fixture
def other_api(http: TestClient, database_url: str) -> Api:
    """A client of another account, for isolation tests."""
    return Api(http, new_account(database_url, "Other account's workspace"))
