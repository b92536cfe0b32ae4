"""SQLite connections for one process: a few readers and one writer (db/database.py).

Each is opened with WAL, the busy timeout, foreign keys and the configured synchronous
mode, and with the Unicode-aware functions that searches and e-mail comparisons use.
"""

from __future__ import annotations

import asyncio

import aiosqlite

from chatcrm.config import Settings
from chatcrm.db.engine import UNICODE_FOLD, fold


class SqlitePool:
    """A fixed set of aiosqlite connections, lent one at a time."""

    def __init__(self, path: str, size: int, settings: Settings) -> None:
        self.path = path
        self.size = size
        self.settings = settings
        self._idle: asyncio.Queue[aiosqlite.Connection] = asyncio.Queue()
        # Every connection open, lent or idle: closing the pool closes them all.
        self._open_ones: set[aiosqlite.Connection] = set()
        self._opened = 0

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
        await conn.create_function(UNICODE_FOLD, 1, fold, deterministic=True)
        self._open_ones.add(conn)
        return conn

    async def acquire(self) -> aiosqlite.Connection:
        if self._idle.empty() and self._opened < self.size:
            self._opened += 1
            try:
                return await self._open()
            except BaseException:
                self._opened -= 1
                raise
        return await self._idle.get()

    def release(self, conn: aiosqlite.Connection) -> None:
        if conn in self._open_ones:  # not one the pool closed while it was lent
            self._idle.put_nowait(conn)

    async def close(self) -> None:
        """Close every connection, also those still lent. A task stopped at shutdown may
        have left a statement running on one: closing it waits for that statement, then
        ends its thread, which would otherwise outlive the event loop and fail there."""
        open_ones, self._open_ones = self._open_ones, set()
        while not self._idle.empty():
            self._idle.get_nowait()
        self._opened = 0
        for conn in open_ones:
            await conn.close()

    @property
    def opened(self) -> int:
        return self._opened
