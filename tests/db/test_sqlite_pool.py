"""SQLite's connections (db/sqlite_pool.py): closing the pool closes every connection,
also one still lent to a task that shutdown stopped mid-statement. Its thread must not
outlive the event loop: it would finish the statement after the loop closed and fail
there (an unhandled exception in a thread, at every stop that caught a statement)."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

from chatcrm.config import Settings
from chatcrm.db.sqlite_pool import SqlitePool


def _connection_threads() -> int:
    return sum("_connection_worker_thread" in t.name for t in threading.enumerate())


def test_closing_the_pool_closes_a_lent_connection_and_ends_its_thread(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'pool.db'}")
    pool = SqlitePool(str(tmp_path / "pool.db"), 2, settings)

    before = _connection_threads()

    async def run() -> None:
        idle, lent = await pool.acquire(), await pool.acquire()
        pool.release(idle)
        # A statement still running on the lent connection when its task is stopped.
        slow = asyncio.create_task(
            lent.execute(
                "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
                "WHERE i < 300000) SELECT count(*) FROM n"
            )
        )
        await asyncio.sleep(0.01)
        slow.cancel()
        await pool.close()
        pool.release(lent)  # given back by the stopped task, after the close
        assert pool.opened == 0

    failed: list[BaseException | None] = []
    previous, threading.excepthook = threading.excepthook, lambda a: failed.append(a.exc_value)
    try:
        asyncio.run(run())
        deadline = time.monotonic() + 5
        while _connection_threads() > before and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        threading.excepthook = previous
    assert _connection_threads() == before
    assert failed == []  # no thread ended on an exception (the event loop it answered closed)


def test_a_closed_pool_opens_new_connections(tmp_path: Path) -> None:
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'pool.db'}")
    pool = SqlitePool(str(tmp_path / "pool.db"), 1, settings)

    async def run() -> int:
        first = await pool.acquire()
        await pool.close()
        pool.release(first)  # closed: not lent again
        second = await pool.acquire()
        assert second is not first
        async with second.execute("SELECT 41 + 1") as cursor:
            row = await cursor.fetchone()
        pool.release(second)
        await pool.close()
        assert row is not None
        return int(row[0])

    assert asyncio.run(run()) == 42
