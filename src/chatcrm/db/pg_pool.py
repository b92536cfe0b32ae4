"""PostgreSQL connections for one process, lent one at a time (db/database.py).

asyncpg's own pool does more per loan than a request can afford: its release runs in a
task of its own (`asyncio.shield`), and it arms an inactivity timer at every release and
cancels it at every acquire. With one loan per request that was about 10 µs of a GET's
250 µs of CPU (docs/performance.md, "chatcrm's own cost per request"). This pool lends
and takes back without a task or a timer: a timer is armed only while a caller waits for
a connection, and idle connections are closed by one sweep a minute.

Connections are opened on demand (none at start, so the service starts and answers 503
while the database is down), reused most recently used first, and replaced when broken.
A connection given back inside a transaction (a failed rollback) or closed is dropped,
never lent again.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress

import asyncpg

# How often idle connections are looked at, in seconds.
_SWEEP_SECONDS = 60.0


class PoolExhausted(TimeoutError):
    """No connection came back within the wait: the service is busy, the database may be
    fine (a 503 of its own words, and its own name in the log line)."""


class PoolClosed(asyncpg.InterfaceError):
    """The pool was closed while the caller waited for a connection."""


class PgPool:
    """At most `max_size` asyncpg connections, opened by `connect` when needed."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[asyncpg.Connection]],
        *,
        max_size: int,
        wait_seconds: float | None = None,
        max_idle_seconds: float = 300.0,
    ) -> None:
        self._connect = connect
        self.max_size = max_size
        self.wait_seconds = wait_seconds
        self.max_idle_seconds = max_idle_seconds
        # Idle connections and when each was given back, oldest first: the last is lent
        # first, so under a light load the first ones age and are closed.
        self._idle: list[tuple[asyncpg.Connection, float]] = []
        # Callers waiting for a connection; each is handed one, or None: open your own.
        self._waiters: deque[asyncio.Future[asyncpg.Connection | None]] = deque()
        self._opened = 0  # lent out, idle, or being opened
        self._sweep: asyncio.TimerHandle | None = None
        self._closed = False

    def get_size(self) -> int:
        """Connections open (lent out, idle, or being opened)."""
        return self._opened

    async def acquire(self) -> asyncpg.Connection:
        """A connection: an idle one, a new one while fewer than `max_size` are open, or
        the next one given back, waiting at most `wait_seconds` for it (then
        `PoolExhausted`, a `TimeoutError`). Opening one is bounded by the connect
        function's own timeout."""
        if self._closed:
            raise PoolClosed("the connection pool is closed")
        idle = self._idle
        while idle:
            conn = idle.pop()[0]
            if not conn.is_closed():
                return conn
            self._opened -= 1
        if self._opened < self.max_size:
            self._opened += 1
            return await self._open()
        try:
            conn = await self._wait()
        except TimeoutError as exc:  # named for what it is: every connection was lent out
            raise PoolExhausted(
                f"every connection of the pool was in use for {self.wait_seconds:g} s"
            ) from exc
        return conn if conn is not None else await self._open()

    def release(self, conn: asyncpg.Connection) -> None:
        """Take a connection back; one that is closed, or still in a transaction, is
        dropped (PostgreSQL rolls back what a dropped connection left open)."""
        if self._closed or conn.is_closed() or conn.is_in_transaction():
            conn.terminate()
            self._opened -= 1
            self._hand_over(None)
            return
        self._hand_over(conn)

    async def close(self) -> None:
        """Close the idle connections; one lent out is closed when given back."""
        self._closed = True
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_exception(PoolClosed("the connection pool is closed"))
        idle, self._idle = self._idle, []
        self._opened -= len(idle)
        for conn, _ in idle:
            try:
                await conn.close(timeout=5)
            except Exception:
                conn.terminate()

    # --- inside ------------------------------------------------------------------------------

    async def _open(self) -> asyncpg.Connection:
        """Open a connection whose place `_opened` already counts."""
        try:
            conn = await self._connect()
        except BaseException:
            self._opened -= 1
            # A waiter may try in its turn (and learn at once that the database is down).
            self._hand_over(None)
            raise
        if self._sweep is None and not self._closed:
            self._sweep = asyncio.get_running_loop().call_later(_SWEEP_SECONDS, self._close_idle)
        return conn

    async def _wait(self) -> asyncpg.Connection | None:
        waiter: asyncio.Future[asyncpg.Connection | None] = (
            asyncio.get_running_loop().create_future()
        )
        self._waiters.append(waiter)
        try:
            async with asyncio.timeout(self.wait_seconds):
                return await waiter
        except BaseException:
            if waiter.done() and not waiter.cancelled():
                # Handed something just as the wait ended: pass it on.
                handed = waiter.result() if waiter.exception() is None else None
                if handed is not None:
                    self.release(handed)
                elif waiter.exception() is None:
                    self._opened -= 1
                    self._hand_over(None)
            else:
                waiter.cancel()
                with suppress(ValueError):  # a hand-over may have passed it by already
                    self._waiters.remove(waiter)
            raise

    def _hand_over(self, conn: asyncpg.Connection | None) -> None:
        """Give a connection back to the first waiter, or to the idle list; None is the
        place of a connection that closed, for a waiter to open a new one in."""
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                if conn is None:
                    if self._opened >= self.max_size:
                        self._waiters.appendleft(waiter)
                        return
                    self._opened += 1
                waiter.set_result(conn)
                return
        if conn is not None:
            self._idle.append((conn, time.monotonic()))

    def _close_idle(self) -> None:
        """Close the connections idle for longer than `max_idle_seconds`."""
        self._sweep = None
        if self._closed:
            return
        limit = time.monotonic() - self.max_idle_seconds
        idle = self._idle
        stale = 0
        while stale < len(idle) and idle[stale][1] < limit:
            stale += 1
        for conn, _ in idle[:stale]:
            conn.terminate()
        del idle[:stale]
        self._opened -= stale
        if self._opened:
            self._sweep = asyncio.get_running_loop().call_later(_SWEEP_SECONDS, self._close_idle)
