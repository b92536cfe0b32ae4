"""Database access: engines for SQLite (embedded default) and PostgreSQL, and transactions.

`Database.read()` gives a connection for one consistent read (autocommit on PostgreSQL,
so a read by id is a single round trip); `Database.write()` gives one transaction that
is committed when the block exits without error, before any response is sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from chatcrm.config import Settings


class DatabaseUrlError(ValueError):
    pass


def async_url(url: str) -> URL:
    """Map the public URL forms (`sqlite:///file.db`, `postgresql://…`) to async drivers."""
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with its own wording
        raise DatabaseUrlError(f"not a database URL: {url!r}") from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise DatabaseUrlError("SQLite needs a file path, e.g. sqlite:///./chatcrm.db")
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+asyncpg")
    raise DatabaseUrlError(f"unsupported database {backend!r}: use sqlite:/// or postgresql://")


UNICODE_LOWER = "chatcrm_lower"


def _lower(value: object) -> object:
    return value.lower() if isinstance(value, str) else value


def _sqlite_engine(url: URL, settings: Settings, *, writer: bool) -> AsyncEngine:
    engine = create_async_engine(
        url,
        # One writer connection per process: SQLite has one write lock anyway, and queueing
        # in the pool is cheaper and fairer than spinning on SQLITE_BUSY.
        pool_size=1 if writer else 4,
        max_overflow=0,
        pool_timeout=max(30.0, settings.sqlite_busy_timeout_ms / 1000 * 3),
    )
    busy = int(settings.sqlite_busy_timeout_ms)
    sync_level = settings.sqlite_synchronous

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Let us emit BEGIN ourselves (pysqlite's implicit transactions are not reliable).
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={busy}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA synchronous={sync_level}")
        cursor.close()
        # SQLite's own lower() and LIKE fold ASCII only; searches need "JOSÉ" to find "josé".
        dbapi_connection.create_function(UNICODE_LOWER, 1, _lower, deterministic=True)

    if writer:

        @event.listens_for(engine.sync_engine, "begin")
        def _on_begin(conn: Any) -> None:
            # IMMEDIATE: take the write lock up front, so a read-then-write transaction can
            # never fail half-way with "database is locked" when another writer got there first.
            conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _postgres_engine(url: URL, settings: Settings) -> AsyncEngine:
    return create_async_engine(
        url,
        pool_size=settings.db_pool_size,
        max_overflow=settings.db_max_overflow,
        pool_timeout=settings.db_connect_timeout,
        pool_recycle=1800,
        connect_args={
            "timeout": settings.db_connect_timeout,
            "command_timeout": settings.db_statement_timeout,
            "server_settings": {"application_name": "chatcrm"},
        },
    )


# The transaction that spans a whole request, when one is open (idempotent POSTs).
_request_tx: ContextVar[AsyncConnection | None] = ContextVar("chatcrm_request_tx", default=None)


class Database:
    """The engines of one process, and the ways the code uses them."""

    def __init__(self, settings: Settings, *, url: str | None = None) -> None:
        self.settings = settings
        self.url = async_url(url or settings.database_url)
        self.dialect = self.url.get_backend_name()
        if self.dialect == "sqlite":
            self._write_engine = _sqlite_engine(self.url, settings, writer=True)
            self._read_engine = _sqlite_engine(self.url, settings, writer=False)
        else:
            engine = _postgres_engine(self.url, settings)
            self._write_engine = engine
            # Same pool; autocommit so a single-statement read sends no BEGIN/ROLLBACK.
            self._read_engine = engine.execution_options(isolation_level="AUTOCOMMIT")

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @property
    def is_postgres(self) -> bool:
        return self.dialect == "postgresql"

    @asynccontextmanager
    async def read(self) -> AsyncIterator[AsyncConnection]:
        async with self._read_engine.connect() as conn:
            yield conn

    @asynccontextmanager
    async def write(self) -> AsyncIterator[AsyncConnection]:
        """One transaction: committed when the block ends normally, rolled back otherwise.

        Inside a request transaction it is a savepoint of that transaction instead: its
        changes are undone on error, and become durable only when the request's commits.
        """
        outer = _request_tx.get()
        if outer is not None:
            async with outer.begin_nested():
                yield outer
            return
        async with self._write_engine.begin() as conn:
            yield conn

    @asynccontextmanager
    async def request_transaction(self) -> AsyncIterator[AsyncConnection]:
        """A transaction around a whole request; `write()` blocks inside it nest in it."""
        async with self._write_engine.begin() as conn:
            token = _request_tx.set(conn)
            try:
                yield conn
            finally:
                _request_tx.reset(token)

    def pool_stats(self) -> tuple[int, int]:
        """(connections in use, connections open) over this process's pools."""
        pools = {id(e.pool): e.pool for e in (self._write_engine, self._read_engine)}
        in_use = open_ = 0
        for pool in pools.values():
            checked_out = getattr(pool, "checkedout", lambda: 0)()
            in_use += checked_out
            open_ += checked_out + getattr(pool, "checkedin", lambda: 0)()
        return in_use, open_

    async def dispose(self) -> None:
        await self._write_engine.dispose()
        if self._read_engine is not self._write_engine and self.is_sqlite:
            await self._read_engine.dispose()


def standalone_engine(url: str, settings: Settings) -> AsyncEngine:
    """A short-lived engine without pooling, for migrations and CLI commands."""
    parsed = async_url(url)
    if parsed.get_backend_name() == "sqlite":
        return _sqlite_engine(parsed, settings, writer=True)
    return create_async_engine(
        parsed,
        poolclass=NullPool,
        connect_args={"timeout": settings.db_connect_timeout},
    )
