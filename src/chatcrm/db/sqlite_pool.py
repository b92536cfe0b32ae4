"""SQLite connections for one process: a few readers and one writer (db/database.py).

Each is opened with WAL, the busy timeout, foreign keys and the configured synchronous
mode, and with the Unicode-aware lower() that searches use.
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
        self._idle.put_nowait(conn)

    async def close(self) -> None:
        while not self._idle.empty():
            await self._idle.get_nowait().close()
        self._opened = 0

    @property
    def opened(self) -> int:
        return self._opened
