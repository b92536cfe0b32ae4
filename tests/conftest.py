"""Fixtures: the suite runs against SQLite (a temporary file), PostgreSQL and Citus (a
fresh database per run, created here, migrated with Alembic, dropped at the end).

PostgreSQL comes from CHATCRM_TEST_POSTGRES_URL (an admin URL; default: the local server).
Citus from CHATCRM_TEST_CITUS_URL (a coordinator's admin URL), else a coordinator and two
workers started for the session (tests/citus_cluster.py), the database laid out by
`chatcrm citus distribute`'s code. Outside CI a backend that cannot be had skips its
tests, loudly; under CI=true it fails them.
"""

from __future__ import annotations

import asyncio
import os
import threading
import uuid
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any, Literal, TypeVar

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.citus import distribute
from chatcrm.db.database import Database
from chatcrm.db.engine import standalone_engine
from chatcrm.db.errors import Unavailable
from chatcrm.db.migrate import upgrade
from chatcrm.events.publisher import publish_everything
from chatcrm.provisioning import NewAccount, init_account
from tests import citus_cluster
from tests.client import Api
from tests.in_process import InProcessClient

T = TypeVar("T")

# The SQL dialects (tests/db/test_tenant_statements.py compiles statements for each).
BACKENDS = ("sqlite", "postgresql")
# The databases the shared fixtures run on: Citus speaks PostgreSQL's dialect (its URL is
# postgresql://), laid out as docs/scaling.md section 3 says. `-k citus` (or `-k sqlite`,
# `-k postgresql`) selects one: the parameter's id is in every test's id.
DATABASES = (*BACKENDS, "citus")
# The Citus tier (contract L): the API's own tests, every part of it. The tests of what
# talks to that API from outside — the CLI's processes, the SDK, import/export, the
# browser — run on SQLite and PostgreSQL; their Citus parameters are deselected.
CITUS_TIER = (
    "api",
    "contacts",
    "conversations",
    "db",
    "events",
    "opportunities",
    "records",
    "people",
    "reliability",
    "scale",
    "webhooks",
    "workspaces",
)
PG_ADMIN_URL = os.environ.get(
    "CHATCRM_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)
CITUS_URL = os.environ.get("CHATCRM_TEST_CITUS_URL")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
_pg_skip_reason: list[str] = []
_citus_skip_reason: list[str] = []
# The session's Citus cluster once asked for (started here, or the environment's).
_citus: list[citus_cluster.Cluster] = []
# The admin URL of the server of each PostgreSQL database made here.
_admin_of: dict[str, str] = {}
# Per server (admin URL): the URL of the migrated database new ones are copied from.
_template_of: dict[str, str] = {}
# Which backend each database made here belongs to: a Citus URL says postgresql://.
_backend_of: dict[str, str] = {}


def _asyncpg_url(url: str) -> str:
    return make_url(url).set(drivername="postgresql+asyncpg").render_as_string(hide_password=False)


async def _pg_admin(statement: str, admin_url: str = PG_ADMIN_URL) -> None:
    engine = create_async_engine(
        _asyncpg_url(admin_url), isolation_level="AUTOCOMMIT", connect_args={"timeout": 5}
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


_LANGUAGE_COLLATION = "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8' TEMPLATE template0"


def create_pg_database(
    admin_url: str = PG_ADMIN_URL, *, template: str | None = None, locale: str | None = None
) -> str:
    """A new empty database (a copy of `template` when given; of template0 with the
    `locale` options of CREATE DATABASE when those are) on the test server, or on the
    server of `admin_url`; returns its URL."""
    name = f"chatcrm_test_{uuid.uuid4().hex[:12]}"
    # A copy keeps its template's collation; a new database takes a language's (ICU's
    # en-US), as most servers are set up (Debian's and Docker's take the system's locale):
    # text then sorts by that language's rules, not byte by byte, and a statement that
    # relies on byte order fails here (the Citus tier keeps the C collation).
    copy = f' TEMPLATE "{template}"' if template else f" {_LANGUAGE_COLLATION}"
    if locale:
        copy = f" {locale} TEMPLATE template0"
    try:
        run_sync(lambda: _pg_admin(f'CREATE DATABASE "{name}"{copy}', admin_url))
    except Exception as exc:
        reason = f"PostgreSQL at {admin_url} is not reachable ({type(exc).__name__}: {exc})"
        if IN_CI:
            pytest.fail(f"{reason}; CI must run the PostgreSQL tests", pytrace=False)
        _pg_skip_reason.append(reason)
        pytest.skip(f"SKIPPING POSTGRESQL TESTS: {reason}")
    url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    _admin_of[url] = admin_url
    return url


def drop_pg_database(url: str) -> None:
    _forget_kept(url)
    name = make_url(url).database
    admin_url = _admin_of.pop(url, PG_ADMIN_URL)
    run_sync(lambda: _pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', admin_url))


@contextmanager
def empty_database(backend: str, directory: Path) -> Iterator[str]:
    """A new, empty, never migrated database of a backend (a PostgreSQL one is dropped
    after)."""
    if backend == "sqlite":
        yield f"sqlite:///{directory / 'fresh.db'}"
        return
    url = create_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(url)


def _cluster() -> citus_cluster.Cluster:
    """The session's Citus cluster, started (or found) on first use; skips the test
    (fails it under CI) when there can be none, and remembers why for the banner."""
    if _citus:
        return _citus[0]
    if _citus_skip_reason:
        pytest.skip(f"SKIPPING CITUS TESTS: {_citus_skip_reason[0]}")
    try:
        cluster = citus_cluster.from_environment(CITUS_URL) if CITUS_URL else citus_cluster.start()
    except Exception as exc:
        where = f"at {CITUS_URL}" if CITUS_URL else "(a cluster of three started here)"
        reason = f"Citus {where} cannot be had ({type(exc).__name__}: {exc})"
        if IN_CI:
            pytest.fail(f"{reason}; CI must run the Citus tests", pytrace=False)
        _citus_skip_reason.append(reason)
        pytest.skip(f"SKIPPING CITUS TESTS: {reason}")
    _citus.append(cluster)
    return cluster


def create_citus_database(*, before_citus: Callable[[str], None] | None = None) -> str:
    """A new, empty database on the Citus cluster (extension and workers in place, not
    migrated); returns its coordinator URL. `before_citus`: see Cluster.create_database."""
    url = _cluster().create_database(before_citus=before_citus)
    _backend_of[url] = "citus"
    return url


def drop_citus_database(url: str) -> None:
    _forget_kept(url)
    _cluster().drop_database(url)


def distribute_tables(url: str) -> list[str]:
    """Lay a migrated Citus database out, as `chatcrm citus distribute` does."""
    _forget_kept(url)

    async def run() -> list[str]:
        settings = Settings(database_url=url)
        engine = standalone_engine(url, settings)
        try:
            return await distribute(
                engine, before_events_move=partial(publish_everything, settings)
            )
        finally:
            await engine.dispose()

    return run_sync(run)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Leave the Citus parameters of the tests outside CITUS_TIER out."""
    tests_dir = Path(__file__).parent
    kept, left_out = [], []
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_citus = callspec is not None and "citus" in callspec.params.values()
        area = (
            item.path.relative_to(tests_dir).parts[0] if item.path.is_relative_to(tests_dir) else ""
        )
        off_tier = area not in CITUS_TIER or item.get_closest_marker("not_on_citus") is not None
        (left_out if on_citus and off_tier else kept).append(item)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop and remove the Citus cluster started for the session (if one was)."""
    while _kept:
        _forget_kept(next(iter(_kept)))
    while _citus:
        _citus.pop().stop()
    while _template_of:
        drop_pg_database(_template_of.popitem()[1])


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
    if _citus_skip_reason:
        terminalreporter.write_sep("!", "CITUS TESTS WERE SKIPPED", red=True, bold=True)
        terminalreporter.write_line(_citus_skip_reason[0], red=True)
        terminalreporter.write_line(
            "Run the tests as root (Citus is installed from ../shared/vendor/ and a "
            "cluster started), or set CHATCRM_TEST_CITUS_URL to a coordinator.",
            red=True,
        )


def create_migrated_pg_database(admin_url: str = PG_ADMIN_URL) -> str:
    """A new migrated database on the server of `admin_url`: a copy of a template this
    process migrated once (a copy takes a fraction of a second; migrating, seconds in
    one transaction, whose id holds back the feed of every database of the server).
    `chatcrm migrate` itself is tested on empty databases (tests/db, tests/test_cli.py)."""
    if admin_url not in _template_of:
        template = create_pg_database(admin_url)
        migrate(template)
        _template_of[admin_url] = template
    source = make_url(_template_of[admin_url]).database
    return create_pg_database(admin_url, template=source)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A migrated database of its own, for what only PostgreSQL has (pool sizes,
    concurrent writers)."""
    url = create_migrated_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(url)


@contextmanager
def migrated_database(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A new, migrated, empty database of a backend (a PostgreSQL one is dropped after; a
    Citus one is laid out after migrating, as `chatcrm citus distribute` does)."""
    if backend == "sqlite":
        path: Path = tmp_path_factory.mktemp("sqlite") / "chatcrm.db"
        url = f"sqlite:///{path}"
        migrate(url)
        yield url
        return
    if backend == "citus":
        url = create_citus_database()
        try:
            migrate(url)
            distribute_tables(url)
            yield url
        finally:
            drop_citus_database(url)
        return
    url = create_migrated_pg_database()
    try:
        yield url
    finally:
        drop_pg_database(url)


def databases_per_backend(
    name: str,
    scope: Literal["session", "module"] = "session",
    backends: tuple[str, ...] = DATABASES,
) -> Any:
    """A fixture named `name`: a migrated, empty database of each of `backends`. The
    session's shared one is `database_url`; tests whose servers must not meet the shared
    app's (the console's, the channels') declare one of their own, and a module whose
    tests hold transactions open or empty whole tables, one of its own (scope "module")."""

    @pytest.fixture(scope=scope, params=backends, name=name)
    def fixture(
        request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
    ) -> Iterator[str]:
        with migrated_database(request.param, tmp_path_factory) as url:
            yield url

    return fixture


database_url = databases_per_backend("database_url")


@pytest.fixture(scope="session")
def backend(database_url: str) -> str:
    """The database the session's tests run on: sqlite, postgresql or citus."""
    if database_url.startswith("sqlite"):
        return "sqlite"
    return _backend_of.get(database_url, "postgresql")


@pytest.fixture(scope="session")
def dialect(backend: str) -> str:
    """The SQL dialect and driver of the backend: Citus is PostgreSQL to the app."""
    return "sqlite" if backend == "sqlite" else "postgresql"


def app_fixtures(scope: Literal["session", "module"]) -> tuple[Any, Any]:
    """The `settings` and `http` fixtures of the shared in-process app, at a scope: the
    session's (here), or a module's that keeps a database of its own (test_no_gaps.py)."""

    @pytest.fixture(scope=scope, name="settings")
    def settings_fixture(database_url: str) -> Settings:
        # Rate limiting is tested on its own apps; the shared app must not throttle the
        # suite. Nor does it send webhooks: the delivery tests run dispatchers of their
        # own, and the endpoint tests read delivery rows no dispatcher is changing.
        return Settings(database_url=database_url, rate_limit=0, access_log=False, dispatch=False)

    @pytest.fixture(scope=scope, name="http")
    def http_fixture(settings: Settings) -> Iterator[TestClient]:
        """The app in-process (its own event loop thread, one hop a request)."""
        with InProcessClient(create_app(settings), raise_server_exceptions=False) as client:
            yield client

    return settings_fixture, http_fixture


settings, http = app_fixtures("session")


# The test code's own connections to each PostgreSQL or Citus database it makes accounts
# in, on one event loop thread of this process: a new connection costs PostgreSQL a
# process, and Citus also its connections to the workers (on Citus, on a loaded machine,
# 38 ms an account with the connections kept, 143 ms without). SQLite opens a file: a
# Database a call does there.
_kept_loop: list[asyncio.AbstractEventLoop] = []
_kept: dict[str, Database] = {}


def _on_kept_loop(work: Coroutine[Any, Any, T]) -> T:
    if not _kept_loop:
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="kept-databases", daemon=True).start()
        _kept_loop.append(loop)
    return asyncio.run_coroutine_threadsafe(work, _kept_loop[0]).result()


def _forget_kept(url: str) -> None:
    """Close the kept connections to a database (it is dropped, or its tables are laid
    out anew: prepared statements would name what changed)."""
    db = _kept.pop(url, None)
    if db is not None:
        _on_kept_loop(db.dispose())


def on_database(database_url: str, work: Callable[[Database], Coroutine[Any, Any, T]]) -> T:
    """`work` done by the test code with a Database of `database_url`: the one kept for it
    on PostgreSQL and Citus (see above), a new one on SQLite."""
    if database_url.startswith("sqlite"):

        async def once() -> T:
            db = Database(Settings(database_url=database_url))
            try:
                return await work(db)
            finally:
                await db.dispose()

        return run_sync(once)

    async def kept() -> T:
        if database_url not in _kept:
            _kept[database_url] = Database(Settings(database_url=database_url))
        return await work(_kept[database_url])

    return _on_kept_loop(kept())


def new_account(database_url: str, workspace_name: str = "Test workspace") -> NewAccount:
    """An account + workspace + key, through the code the CLI uses."""

    async def make(db: Database) -> NewAccount:
        async with db.transaction() as conn:
            return await init_account(conn, workspace_name=workspace_name)

    async def run(db: Database) -> NewAccount:
        try:
            return await make(db)
        except Unavailable:
            # On Citus the key's INSERT and an app's key-use upkeep (an UPDATE of the same
            # reference table, every 30 s) may meet in a deadlock across nodes, and Citus
            # rolls one back; the API answers 503 for it. Made again, the account is made.
            return await make(db)

    return on_database(database_url, run)


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
