"""The PostgreSQL pool (db/pg_pool.py) on a real server: how many it lends, who waits and
for how long, and what happens to connections that break, stay in a transaction, idle,
or outlive the pool; and what a request sees of a connection the server ended."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import suppress

import asyncpg
import pytest
from sqlalchemy import Integer, text

from chatcrm.config import Settings
from chatcrm.db import pg_pool
from chatcrm.db.database import Database
from chatcrm.db.errors import DataProblem, Unavailable
from chatcrm.db.pg_pool import PgPool, PoolClosed

Connect = Callable[[], Awaitable[asyncpg.Connection]]
PID = text("SELECT pg_backend_pid() AS pid").columns(pid=Integer)


@pytest.fixture
def connect(postgres_url: str) -> Connect:
    return lambda: asyncpg.connect(postgres_url, timeout=5)


@pytest.fixture
async def database(postgres_url: str) -> AsyncIterator[Database]:
    db = Database(Settings(database_url=postgres_url))
    yield db
    await db.dispose()


async def queued(pool: PgPool) -> asyncio.Task[asyncpg.Connection]:
    """A caller of `acquire` that is waiting in the pool's queue."""
    waiting = asyncio.create_task(pool.acquire())
    await asyncio.sleep(0.05)
    assert not waiting.done()
    return waiting


@pytest.fixture
async def admin(postgres_url: str) -> AsyncIterator[asyncpg.Connection]:
    conn = await asyncpg.connect(postgres_url, timeout=5)
    yield conn
    await conn.close()


async def test_lends_at_most_max_size_and_hands_the_next_one_back_to_a_waiter(
    connect: Connect,
) -> None:
    pool = PgPool(connect, max_size=2, wait_seconds=5)
    first, second = await pool.acquire(), await pool.acquire()
    assert first is not second
    waiting = await queued(pool)
    assert pool.get_size() == 2
    pool.release(second)
    assert await asyncio.wait_for(waiting, 1) is second
    assert await second.fetchval("SELECT 1") == 1
    pool.release(first)
    pool.release(second)
    # The one given back last is lent first (it is warm; the others may age out).
    assert await pool.acquire() is second
    await pool.close()


async def test_a_caller_waits_at_most_wait_seconds(connect: Connect) -> None:
    pool = PgPool(connect, max_size=1, wait_seconds=0.2)
    held = await pool.acquire()
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(TimeoutError):
        await pool.acquire()
    assert 0.15 < loop.time() - started < 2
    # The caller that gave up left nothing behind: the connection goes back to the idle
    # list, and the next caller has it at once.
    pool.release(held)
    assert await pool.acquire() is held
    assert pool.get_size() == 1
    await pool.close()


async def test_a_cancelled_waiter_takes_nothing_with_it(connect: Connect) -> None:
    pool = PgPool(connect, max_size=1, wait_seconds=None)
    held = await pool.acquire()
    waiting = await queued(pool)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    pool.release(held)
    assert await asyncio.wait_for(pool.acquire(), 1) is held
    await pool.close()


async def test_a_connection_that_closed_while_idle_is_never_lent(
    connect: Connect, admin: asyncpg.Connection
) -> None:
    pool = PgPool(connect, max_size=1, wait_seconds=1)
    conn = await pool.acquire()
    pid = conn.get_server_pid()
    pool.release(conn)
    assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    for _ in range(100):  # until the driver has seen the server hang up
        if conn.is_closed():
            break
        await asyncio.sleep(0.01)
    fresh = await pool.acquire()
    assert fresh is not conn
    assert await fresh.fetchval("SELECT pg_backend_pid()") != pid
    assert pool.get_size() == 1
    await pool.close()


async def test_a_connection_given_back_in_a_transaction_is_never_lent_again(
    connect: Connect,
) -> None:
    pool = PgPool(connect, max_size=1, wait_seconds=1)
    conn = await pool.acquire()
    await conn.execute("BEGIN")
    await conn.execute("CREATE TEMPORARY TABLE left_open (x int)")
    pool.release(conn)
    assert conn.is_closed() and pool.get_size() == 0
    fresh = await pool.acquire()
    assert fresh is not conn and not fresh.is_in_transaction()
    # What the transaction did was never committed.
    assert await fresh.fetchval("SELECT to_regclass('pg_temp.left_open')") is None
    await pool.close()


async def test_a_waiter_opens_a_connection_in_the_place_of_one_that_closed(
    connect: Connect,
) -> None:
    pool = PgPool(connect, max_size=1, wait_seconds=5)
    held = await pool.acquire()
    waiting = await queued(pool)
    held.terminate()
    pool.release(held)
    replacement = await asyncio.wait_for(waiting, 5)
    assert replacement is not held and await replacement.fetchval("SELECT 1") == 1
    assert pool.get_size() == 1
    await pool.close()


async def test_a_failed_connect_gives_its_place_back() -> None:
    async def refuse() -> asyncpg.Connection:
        raise ConnectionRefusedError("no server")

    pool = PgPool(refuse, max_size=1, wait_seconds=1)
    for _ in range(3):  # the place is free again each time: no wait, the same error
        with pytest.raises(ConnectionRefusedError):
            await pool.acquire()
    assert pool.get_size() == 0


async def test_idle_connections_are_closed_after_max_idle_seconds(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pg_pool, "_SWEEP_SECONDS", 0.05)
    pool = PgPool(connect, max_size=2, wait_seconds=1, max_idle_seconds=0.1)
    first, second = await pool.acquire(), await pool.acquire()
    pool.release(first)
    await asyncio.sleep(0.4)
    # Idle for longer than the limit: closed. Lent out: untouched.
    assert first.is_closed() and not second.is_closed()
    assert pool.get_size() == 1
    pool.release(second)
    await asyncio.sleep(0.4)
    assert second.is_closed() and pool.get_size() == 0
    await pool.close()


async def test_close_closes_idle_ones_fails_waiters_and_drops_the_rest_when_given_back(
    connect: Connect,
) -> None:
    pool = PgPool(connect, max_size=2, wait_seconds=5)
    idle, lent = await pool.acquire(), await pool.acquire()
    pool.release(idle)
    idle_again = await pool.acquire()
    waiting = await queued(pool)
    pool.release(idle_again)  # handed straight to the waiter
    assert await asyncio.wait_for(waiting, 1) is idle_again
    late = await queued(pool)
    await pool.close()
    with pytest.raises(PoolClosed):
        await late
    pool.release(lent)
    pool.release(idle_again)
    assert lent.is_closed() and idle_again.is_closed()
    assert pool.get_size() == 0
    with pytest.raises(PoolClosed):
        await pool.acquire()


async def test_a_connection_the_server_ended_is_unavailable_once_then_replaced(
    database: Database, admin: asyncpg.Connection
) -> None:
    """The server ends a connection (a restart, an administrator): the request that finds
    it dead gets Unavailable (503, retry), never another error; the next one is served."""
    for _ in range(5):
        async with database.session() as conn:
            pid = await conn.fetchval(PID)
        await admin.execute("SELECT pg_terminate_backend($1)", pid)
        with suppress(Unavailable):  # found dead, or already replaced: both are right
            async with database.session() as conn:
                assert await conn.fetchval(PID) != pid
        async with database.session() as conn:
            assert await conn.fetchval(PID) != pid


async def test_a_refused_value_keeps_its_connection(database: Database) -> None:
    """Only a failed link closes a connection: a value the driver refuses is the caller's
    error (400), and closing for it would let any client make the server open connection
    after connection."""
    async with database.session() as conn:
        pid = await conn.fetchval(PID)
        with pytest.raises(DataProblem):
            await conn.fetchval(text("SELECT CAST(:_n AS int) AS n"), {"_n": "ten"})
        assert await conn.fetchval(PID) == pid
