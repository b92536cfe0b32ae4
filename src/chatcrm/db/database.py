"""The database of a running service: pools, transactions and statement execution.

`Database.read()` lends a connection for reads (autocommit: a read by id is one round
trip); `Database.write()` one transaction, committed when the block ends normally —
before any response is sent — and rolled back otherwise. Inside `request_transaction()`
(idempotent POSTs) `write()` is a savepoint of the request's transaction.

PostgreSQL runs on an asyncpg pool; SQLite on aiosqlite connections: a few for readers,
one writer per process (SQLite has one write lock anyway, and queueing here is cheaper and
fairer than spinning on SQLITE_BUSY), in WAL mode with a busy timeout and foreign keys on.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager, suppress
from contextvars import ContextVar
from typing import Any

import aiosqlite
import asyncpg
from sqlalchemy.sql import ClauseElement

from chatcrm.config import Settings
from chatcrm.db.compiled import compiled
from chatcrm.db.engine import UNICODE_LOWER, async_url, unicode_lower
from chatcrm.db.errors import Unavailable, translate

Row = dict[str, Any]

_request_tx: ContextVar[Connection | None] = ContextVar("chatcrm_request_tx", default=None)


class Connection:
    """One driver connection; statements are SQLAlchemy Core, compiled once (compiled.py)."""

    def __init__(self, raw: Any, dialect: str) -> None:
        self.raw = raw
        self.dialect = dialect
        self._savepoints = itertools.count(1)

    async def fetch(
        self, stmt: ClauseElement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        """Result rows as dicts (also of INSERT/UPDATE … RETURNING)."""
        params = params or {}
        c = compiled(stmt, self.dialect, keys=_column_keys(params))
        args = c.args(params)
        try:
            if self.dialect == "postgresql":
                records = await self.raw.fetch(c.sql, *args)
            else:
                async with self.raw.execute(c.sql, args) as cursor:
                    records = await cursor.fetchall()
        except Exception as exc:
            raise translate(exc) from exc
        return [c.row(record) for record in records]

    async def fetchrow(
        self, stmt: ClauseElement, params: Mapping[str, Any] | None = None
    ) -> Row | None:
        rows = await self.fetch(stmt, params)
        return rows[0] if rows else None

    async def fetchval(self, stmt: ClauseElement, params: Mapping[str, Any] | None = None) -> Any:
        row = await self.fetchrow(stmt, params)
        return None if row is None else next(iter(row.values()))

    async def execute(self, stmt: ClauseElement, params: Mapping[str, Any] | None = None) -> int:
        """Run a statement without result rows; returns the number of rows it changed.
        For an INSERT or UPDATE without explicit values, the parameters' keys name the
        columns written."""
        params = params or {}
        c = compiled(stmt, self.dialect, keys=_column_keys(params))
        args = c.args(params)
        try:
            if self.dialect == "postgresql":
                status: str = await self.raw.execute(c.sql, *args)
                return int(status.rsplit(" ", 1)[-1]) if status[-1:].isdigit() else 0
            async with self.raw.execute(c.sql, args) as cursor:
                return int(cursor.rowcount)
        except Exception as exc:
            raise translate(exc) from exc

    async def executemany(self, stmt: ClauseElement, rows: Iterable[Mapping[str, Any]]) -> None:
        batch = list(rows)
        if not batch:
            return
        c = compiled(stmt, self.dialect, keys=_column_keys(batch[0]))
        args = [c.args(row) for row in batch]
        try:
            await self.raw.executemany(c.sql, args)
        except Exception as exc:
            raise translate(exc) from exc

    async def _sql(self, sql: str) -> None:
        """A statement without parameters or results (transaction control)."""
        try:
            if self.dialect == "postgresql":
                await self.raw.execute(sql)
            else:
                async with self.raw.execute(sql):
                    pass
        except Exception as exc:
            raise translate(exc) from exc

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[Connection]:
        name = f"sp_{next(self._savepoints)}"
        await self._sql(f"SAVEPOINT {name}")
        try:
            yield self
        except BaseException:
            await self._sql(f"ROLLBACK TO SAVEPOINT {name}")
            await self._sql(f"RELEASE SAVEPOINT {name}")
            raise
        await self._sql(f"RELEASE SAVEPOINT {name}")


def _column_keys(params: Mapping[str, Any]) -> list[str]:
    # Bound parameters of WHERE clauses start with "_"; the other keys are columns.
    return [key for key in params if not key.startswith("_")]


class _SqlitePool:
    """A fixed set of aiosqlite connections, lent one at a time."""

    def __init__(self, path: str, size: int, settings: Settings) -> None:
        self.path = path
        self.size = size
        self.settings = settings
        self._idle: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        self._opened = 0
        self.in_use = 0

    async def _open(self) -> aiosqlite.Connection:
        conn = await aiosqlite.connect(
            self.path, isolation_level=None, timeout=self.settings.sqlite_busy_timeout_ms / 1000
        )
        for pragma in (
            "PRAGMA journal_mode=WAL",
            f"PRAGMA busy_timeout={int(self.settings.sqlite_busy_timeout_ms)}",
            "PRAGMA foreign_keys=ON",
            f"PRAGMA synchronous={self.settings.sqlite_synchronous}",
        ):
            # Read to the end and close: a pragma's unfinished result would keep a read
            # transaction open, and this connection would see the database as it was then.
            async with conn.execute(pragma) as cursor:
                await cursor.fetchall()
        await conn.create_function(UNICODE_LOWER, 1, unicode_lower, deterministic=True)
        return conn

    @asynccontextmanager
    async def acquire(self) -> AsyncIterator[aiosqlite.Connection]:
        if self._idle.empty() and self._opened < self.size:
            self._opened += 1
            try:
                conn = await self._open()
            except BaseException:
                self._opened -= 1
                raise
        else:
            conn = await self._idle.get()
        self.in_use += 1
        try:
            yield conn
        finally:
            self.in_use -= 1
            self._idle.put_nowait(conn)

    async def close(self) -> None:
        while not self._idle.empty():
            await self._idle.get_nowait().close()
        self._opened = 0

    @property
    def opened(self) -> int:
        return self._opened


class Database:
    """The pools of one process, and the ways the code uses them."""

    def __init__(self, settings: Settings, *, url: str | None = None) -> None:
        self.settings = settings
        parsed = async_url(url or settings.database_url)
        self.dialect = parsed.get_backend_name()
        self._url = parsed
        self._pg: asyncpg.Pool | None = None
        self._pg_lock = asyncio.Lock()
        if self.dialect == "sqlite":
            path = parsed.database or ""
            self._readers = _SqlitePool(path, 4, settings)
            self._writers = _SqlitePool(path, 1, settings)

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @property
    def is_postgres(self) -> bool:
        return self.dialect == "postgresql"

    async def _pool(self) -> asyncpg.Pool:
        if self._pg is None:
            async with self._pg_lock:
                if self._pg is None:
                    url = self._url
                    s = self.settings
                    # min_size 0: the service starts, and answers 503, while the database
                    # is down; connections are opened on demand and replaced when broken.
                    # `?host=/var/run/postgresql` selects a Unix socket, as in libpq URLs.
                    socket_dir = url.query.get("host")
                    self._pg = await asyncpg.create_pool(
                        host=url.host or (socket_dir if isinstance(socket_dir, str) else None),
                        port=url.port,
                        user=url.username,
                        password=url.password,
                        database=url.database,
                        min_size=0,
                        max_size=s.db_pool_size + s.db_max_overflow,
                        max_inactive_connection_lifetime=300,
                        timeout=s.db_connect_timeout,
                        command_timeout=s.db_statement_timeout,
                        statement_cache_size=1024,
                        reset=_keep_session,
                        server_settings={"application_name": "chatcrm"},
                    )
        return self._pg

    @asynccontextmanager
    async def _postgres(self) -> AsyncIterator[asyncpg.Connection]:
        try:
            pool = await self._pool()
            raw = await pool.acquire(timeout=self.settings.db_connect_timeout)
        except Exception as exc:
            raise translate(exc) from exc
        try:
            yield raw
        finally:
            await pool.release(raw)

    @asynccontextmanager
    async def read(self) -> AsyncIterator[Connection]:
        if self.dialect == "postgresql":
            async with self._postgres() as raw:
                yield Connection(raw, "postgresql")
        else:
            async with self._sqlite(self._readers) as raw:
                yield Connection(raw, "sqlite")

    @asynccontextmanager
    async def write(self) -> AsyncIterator[Connection]:
        """One transaction: committed when the block ends normally, rolled back otherwise.

        Inside a request transaction it is a savepoint of that transaction instead: its
        changes are undone on error, and become durable only when the request's commit.
        """
        outer = _request_tx.get()
        if outer is not None:
            async with outer.savepoint():
                yield outer
            return
        async with self._transaction() as conn:
            yield conn

    @asynccontextmanager
    async def single_statement(self) -> AsyncIterator[Connection]:
        """A connection for one writing statement, atomic by itself: on PostgreSQL no BEGIN
        and COMMIT (one round trip); on SQLite the writer, in its own transaction."""
        if self.dialect == "postgresql" and _request_tx.get() is None:
            async with self._postgres() as raw:
                yield Connection(raw, "postgresql")
            return
        async with self.write() as conn:
            yield conn

    @asynccontextmanager
    async def request_transaction(self) -> AsyncIterator[Connection]:
        """A transaction around a whole request; `write()` blocks inside it nest in it."""
        async with self._transaction() as conn:
            token = _request_tx.set(conn)
            try:
                yield conn
            finally:
                _request_tx.reset(token)

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Connection]:
        if self.dialect == "postgresql":
            async with self._postgres() as raw:
                conn = Connection(raw, "postgresql")
                transaction = raw.transaction()
                try:
                    await transaction.start()
                except Exception as exc:
                    raise translate(exc) from exc
                try:
                    yield conn
                except BaseException:
                    await _quietly(transaction.rollback())
                    raise
                try:
                    await transaction.commit()
                except Exception as exc:
                    raise translate(exc) from exc
            return
        async with self._sqlite(self._writers) as raw:
            conn = Connection(raw, "sqlite")
            # IMMEDIATE: take the write lock up front, so a read-then-write transaction
            # never fails half-way with "database is locked" when another writer got there.
            await conn._sql("BEGIN IMMEDIATE")
            try:
                yield conn
                await conn._sql("COMMIT")
            except BaseException:
                await _quietly(conn._sql("ROLLBACK"))
                raise

    @asynccontextmanager
    async def _sqlite(self, pool: _SqlitePool) -> AsyncIterator[aiosqlite.Connection]:
        try:
            async with pool.acquire() as raw:
                yield raw
        except (aiosqlite.Error, OSError) as exc:
            raise translate(exc) from exc

    def pool_stats(self) -> tuple[int, int]:
        """(connections in use, connections open) in this process."""
        if self.dialect == "postgresql":
            if self._pg is None:
                return 0, 0
            open_ = self._pg.get_size()
            return open_ - self._pg.get_idle_size(), open_
        pools = (self._readers, self._writers)
        return sum(p.in_use for p in pools), sum(p.opened for p in pools)

    async def dispose(self) -> None:
        if self.dialect == "postgresql":
            if self._pg is not None:
                await self._pg.close()
                self._pg = None
        else:
            await self._readers.close()
            await self._writers.close()


async def _keep_session(_: asyncpg.Connection) -> None:
    """Replaces asyncpg's reset query on release (one round trip per request): we never
    change session state (no SET, LISTEN, cursors or session-level locks), and asyncpg
    still rolls back any transaction left open."""


async def _quietly(awaitable: Any) -> None:
    """Best-effort cleanup after a failure: the original error is the one to report."""
    with suppress(Exception):  # the connection may be gone already
        await awaitable


__all__ = ["Connection", "Database", "Row", "Unavailable"]
