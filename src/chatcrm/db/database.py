"""The database of a running service: pools, and the one connection each request uses
(its `Connection` is in db/connection.py).

`Database.connection()` gives a request (or a command) its `Connection`: a driver
connection is taken from the pool at the first statement and given back, once, by
`finish()`, which commits or rolls back. Statements run in autocommit (a read by id, or a
single-statement update, is one round trip) until `begin()` opens the transaction that
`finish()` ends. Services and repositories receive this connection; they never open one.

PostgreSQL runs on asyncpg connections, lent by a pool of ours (db/pg_pool.py). SQLite
runs on aiosqlite connections: a few readers, and one writer per process (SQLite has one
write lock anyway, and queueing here is cheaper and fairer than spinning on SQLITE_BUSY),
in WAL mode with a busy timeout and foreign keys on. A request on SQLite starts on a
reader; its first write (or `begin()`) gives the reader back and continues on the writer,
inside `BEGIN IMMEDIATE`: never two connections at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite
import asyncpg
from sqlalchemy import Integer, text

from chatcrm.config import Settings
from chatcrm.db.connection import Connection, Held, Row
from chatcrm.db.engine import async_url
from chatcrm.db.errors import Unavailable, translate
from chatcrm.db.pg_pool import PgPool
from chatcrm.db.sqlite_pool import SqlitePool


class Database:
    """The pools of one process; `connection()` lends them out one request at a time."""

    def __init__(self, settings: Settings, *, url: str | None = None) -> None:
        self.settings = settings
        parsed = async_url(url or settings.database_url)
        self.dialect = parsed.get_backend_name()
        self._url = parsed
        self._pg: PgPool | None = None
        self._pg_max = settings.db_pool_size + settings.db_max_overflow
        if self.dialect == "sqlite":
            path = parsed.database or ""
            self._readers = SqlitePool(path, 4, settings)
            self._writers = SqlitePool(path, 1, settings)
        # Driver connections lent out right now, and the most ever at once since the last
        # `reset_peak()` (tests check that a request never holds two).
        self.in_use = 0
        self.peak_in_use = 0
        # Called after a commit that wrote events (the publisher's wake-up; events/).
        self.on_events_committed: Callable[[], None] | None = None
        self._citus: bool | None = None  # known after the first look (is_citus)

    @property
    def is_sqlite(self) -> bool:
        return self.dialect == "sqlite"

    @property
    def is_postgres(self) -> bool:
        return self.dialect == "postgresql"

    async def is_citus(self, conn: Connection | None = None) -> bool:
        """Is this PostgreSQL database a Citus coordinator (the extension is installed)?
        The few statements Citus cannot run as PostgreSQL does are then sent in a form it
        can (e.g. no formatted columns in RETURNING); both forms give the same answers.
        Found out once, on `conn` when given (a request's own), else on a connection of
        its own."""
        if self._citus is None:
            if self.dialect != "postgresql":
                self._citus = False
            elif conn is not None:
                self._citus = bool(await conn.fetchval(_CITUS_INSTALLED))
            else:
                async with self.session() as own:
                    self._citus = bool(await own.fetchval(_CITUS_INSTALLED))
        return self._citus

    def connection(self) -> Connection:
        """A request's connection: nothing is taken from a pool until its first statement."""
        return Connection(self)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Connection]:
        """A connection for work outside a request (commands, background tasks, tests):
        committed when the block ends normally, rolled back otherwise."""
        conn = Connection(self)
        try:
            yield conn
        except BaseException:
            await conn.finish(commit=False)
            raise
        await conn.finish(commit=True)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Connection]:
        """`session()` with the transaction begun: everything in the block or nothing."""
        async with self.session() as conn:
            await conn.begin()
            yield conn

    async def acquire(self, *, writer: bool) -> Held:
        """A driver connection (SQLite: the writer or a reader) and the way to give it back."""
        pool: PgPool | SqlitePool
        failures: tuple[type[Exception], ...]
        if self.dialect == "postgresql":
            pool, failures = self._pool(), (Exception,)
        else:
            pool = self._writers if writer else self._readers
            failures = (aiosqlite.Error, OSError)
        try:
            raw = await pool.acquire()
        except failures as exc:
            raise translate(exc) from exc
        self.in_use += 1
        self.peak_in_use = max(self.peak_in_use, self.in_use)

        async def give_back(raw_conn: Any) -> None:
            self.in_use -= 1
            pool.release(raw_conn)

        return Held(raw, give_back, writer=writer)

    def reset_peak(self) -> None:
        self.peak_in_use = self.in_use

    def _pool(self) -> PgPool:
        if self._pg is None:
            s = self.settings
            address = self._pg_address()

            def connect() -> Awaitable[asyncpg.Connection]:
                return asyncpg.connect(
                    **address,
                    timeout=s.db_connect_timeout,
                    command_timeout=s.db_statement_timeout,
                    statement_cache_size=1024,
                    server_settings=_SESSION_SETTINGS,
                )

            # None open at start: the service starts, and answers 503, while the database
            # is down; connections are opened on demand and replaced when broken.
            # A caller waits for a connection at most the connect timeout (then 503).
            self._pg = PgPool(
                connect,
                max_size=self._pg_max,
                wait_seconds=s.db_connect_timeout,
                max_idle_seconds=300,
            )
        return self._pg

    def _pg_address(self) -> dict[str, Any]:
        url = self._url
        # `?host=/var/run/postgresql` selects a Unix socket, as in libpq URLs.
        socket_dir = url.query.get("host")
        return {
            "host": url.host or (socket_dir if isinstance(socket_dir, str) else None),
            "port": url.port,
            "user": url.username,
            "password": url.password,
            "database": url.database,
        }

    async def dedicated(self) -> asyncpg.Connection:
        """A PostgreSQL connection outside the pool, for a session that lasts (LISTEN)."""
        try:
            return await asyncpg.connect(
                **self._pg_address(),
                timeout=self.settings.db_connect_timeout,
                server_settings=_SESSION_SETTINGS,
            )
        except Exception as exc:
            raise translate(exc) from exc

    def pool_stats(self) -> tuple[int, int]:
        """(connections in use, connections open) in this process."""
        if self.dialect == "postgresql":
            if self._pg is None:
                return 0, 0
            return self.in_use, self._pg.get_size()
        return self.in_use, self._readers.opened + self._writers.opened

    async def dispose(self) -> None:
        if self.dialect == "postgresql":
            if self._pg is not None:
                await self._pg.close()
                self._pg = None
        else:
            await self._readers.close()
            await self._writers.close()


_CITUS_INSTALLED = text("SELECT count(*) AS n FROM pg_extension WHERE extname = 'citus'").columns(
    n=Integer
)


# JIT off: every statement of the service is short, and a JIT compilation (chosen by cost
# estimates, e.g. for asyncpg's type introspection or a pipeline aggregate) would add
# tens to hundreds of milliseconds to it.
_SESSION_SETTINGS = {"application_name": "chatcrm", "jit": "off"}


__all__ = ["Connection", "Database", "Row", "Unavailable"]
