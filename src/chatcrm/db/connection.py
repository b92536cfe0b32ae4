"""The one connection of a request or a command (db/database.py tells how it is used).

A driver connection is taken from the pool at the first statement and given back, once,
by `finish()`, which commits or rolls back. Statements run in autocommit (a read by id, or
a single-statement update, is one round trip) until `begin()` opens the transaction that
`finish()` ends. On SQLite a request starts on a reader; its first write (or `begin()`)
gives the reader back and continues on the writer, inside `BEGIN IMMEDIATE`: never two
connections at once.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Any, TypeVar

import asyncpg
from sqlalchemy.sql import ClauseElement

from chatcrm.db.compiled import Compiled, compiled
from chatcrm.db.errors import RolledBack, translate

if TYPE_CHECKING:
    from chatcrm.db.database import Database

Row = dict[str, Any]
T = TypeVar("T")
# A transaction undone for another's sake is run again from its start, so many times at
# most: more would mean something else is wrong, and the refusal then reaches the client.
RUNS = 3


class Held:
    """The driver connection a `Connection` holds right now, and how to give it back."""

    __slots__ = ("raw", "release", "writer")

    def __init__(self, raw: Any, release: Any, *, writer: bool) -> None:
        self.raw = raw
        self.release = release
        self.writer = writer


class Connection:
    """The one database connection of a request or a command (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.dialect = db.dialect
        self._held: Held | None = None
        self._pg_transaction: Any = None
        self._savepoints = itertools.count(1)
        self._open_savepoints: list[str] = []
        self.in_transaction = False
        self.finished = False
        # Commit at `finish()` whatever the answer's status: set by the idempotency layer
        # once it has undone the handler's changes and stored the (error) answer to replay.
        self.commit_on_error = False
        # Set by the outbox when the transaction wrote an event: once committed, the
        # process's publisher is woken (Database.on_events_committed).
        self.wrote_events = False
        # Who acts through this connection (contract J.4), named by every event it writes;
        # None: the service itself.
        self.actor: dict[str, Any] | None = None

    @property
    def holds_connection(self) -> bool:
        """Whether a connection of the pool is held (taken at the first statement)."""
        return self._held is not None

    async def is_citus(self) -> bool:
        """See Database.is_citus; asked on this connection the first time, so a request
        never waits for a second one from its pool."""
        return await self._db.is_citus(self)

    # --- statements --------------------------------------------------------------------------

    async def fetch(
        self, stmt: ClauseElement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        """Result rows as dicts (also of INSERT/UPDATE … RETURNING)."""
        params = params or {}
        c = compiled(stmt, self.dialect, keys=_column_keys(params))
        raw = await self._raw_for(c)
        args = c.args(params)
        try:
            if self.dialect == "postgresql":
                records = await raw.fetch(c.sql, *args)
            else:
                async with raw.execute(c.sql, args) as cursor:
                    records = await cursor.fetchall()
        except Exception as exc:
            raise self._failed(raw, exc) from exc
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
        raw = await self._raw_for(c)
        args = c.args(params)
        try:
            if self.dialect == "postgresql":
                status: str = await raw.execute(c.sql, *args)
                return int(status.rsplit(" ", 1)[-1]) if status[-1:].isdigit() else 0
            async with raw.execute(c.sql, args) as cursor:
                return int(cursor.rowcount)
        except Exception as exc:
            raise self._failed(raw, exc) from exc

    async def executemany(self, stmt: ClauseElement, rows: Iterable[Mapping[str, Any]]) -> None:
        batch = list(rows)
        if not batch:
            return
        c = compiled(stmt, self.dialect, keys=_column_keys(batch[0]))
        raw = await self._raw_for(c)
        args = [c.args(row) for row in batch]
        try:
            await raw.executemany(c.sql, args)
        except Exception as exc:
            raise self._failed(raw, exc) from exc

    # --- transaction ---------------------------------------------------------------------------

    async def begin(self) -> None:
        """Open the transaction (once; later calls do nothing). `finish()` ends it."""
        if self.in_transaction:
            return
        if self.dialect == "postgresql":
            held = await self._hold(writer=False)
            transaction = held.raw.transaction()
            try:
                await transaction.start()
            except Exception as exc:
                raise self._failed(held.raw, exc) from exc
            self._pg_transaction = transaction
        else:
            held = await self._hold(writer=True)
            # IMMEDIATE: take the write lock up front, so a read-then-write transaction never
            # fails half-way with "database is locked" when another writer got there first.
            await self._sql(held.raw, "BEGIN IMMEDIATE")
        self.in_transaction = True

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[None]:
        """A part of the transaction (begun here if needed) undone alone when it fails."""
        await self.begin()
        assert self._held is not None
        raw = self._held.raw
        name = f"sp_{next(self._savepoints)}"
        await self._sql(raw, f"SAVEPOINT {name}")
        self._open_savepoints.append(name)
        try:
            yield
        except BaseException:
            await self._sql(raw, f"ROLLBACK TO SAVEPOINT {name}")
            await self._sql(raw, f"RELEASE SAVEPOINT {name}")
            raise
        finally:
            self._open_savepoints.remove(name)
        await self._sql(raw, f"RELEASE SAVEPOINT {name}")

    async def recover(self) -> None:
        """After a statement the database refused: undo the work since the innermost
        savepoint, or the whole transaction when there is none, so that the connection
        can be used again (PostgreSQL refuses every statement of a failed transaction)."""
        held = self._held
        if held is None or not self.in_transaction:
            return
        if self._open_savepoints:
            await self._sql(held.raw, f"ROLLBACK TO SAVEPOINT {self._open_savepoints[-1]}")
            return
        self.in_transaction = False
        self.wrote_events = False
        await self._end(held, "ROLLBACK")

    async def run_again_when_undone(
        self,
        work: Callable[[], Awaitable[T]],
        *,
        also: tuple[type[BaseException], ...] = (),
    ) -> T:
        """`work()`, which begins its own transaction, run again from its start when the
        database undid it for another transaction's sake (a deadlock, a serialization
        failure: `RolledBack`) or, with `also`, when it failed on what a racing writer
        stored first: nothing of an undone run is kept, and the next reads what is there
        now. Up to `RUNS` runs; the last one's failure is raised."""
        undone: tuple[type[BaseException], ...] = (RolledBack, *also)
        for run in range(1, RUNS + 1):
            try:
                return await work()
            except undone:
                await self.recover()
                if run == RUNS:
                    raise
        raise AssertionError("unreachable")

    async def commit(self) -> None:
        """End the work so far: commit the transaction, if one was begun, and give the
        driver connection back; a later statement takes one again. For requests that wait
        between reads (the events feed's long poll) and must not hold a connection."""
        held, self._held = self._held, None
        if held is None:
            return
        try:
            if self.in_transaction:
                self.in_transaction = False
                await self._end(held, "COMMIT")
                self._committed()
        finally:
            await held.release(held.raw)

    async def plan_for_values(self) -> None:
        """PostgreSQL: plan the rest of this request's statements for their values (begins
        the transaction, as SET LOCAL needs one). A statement run five times gets a generic
        plan, made without its values: it cannot tell a search that matches three rows
        from one that matches them all, nor a batch of one from a batch of 500."""
        if self.dialect == "postgresql":
            await self.begin()
            assert self._held is not None
            await self._sql(self._held.raw, "SET LOCAL plan_cache_mode = force_custom_plan")

    def _committed(self) -> None:
        if self.wrote_events:
            self.wrote_events = False
            hook = self._db.on_events_committed
            if hook is not None:
                hook()

    async def finish(self, *, commit: bool) -> None:
        """Commit (or roll back) the transaction, if one was begun, and give the driver
        connection back. Called once per request, before its answer is sent; later calls
        do nothing."""
        if self.finished:
            return
        self.finished = True
        held, self._held = self._held, None
        if held is None:
            return
        try:
            if self.in_transaction:
                self.in_transaction = False
                if commit:
                    await self._end(held, "COMMIT")
                    self._committed()
                else:
                    await _quietly(self._end(held, "ROLLBACK"))
            else:
                # A statement of its own (PostgreSQL's one-statement evented update) was
                # committed as it ran, whatever the answer: its events wake the publisher
                # too, else the feed's long polls and the first deliveries waited for
                # the next idle round.
                self._committed()
        finally:
            await held.release(held.raw)

    # --- inside ------------------------------------------------------------------------------

    async def _raw_for(self, c: Compiled) -> Any:
        held = self._held
        if held is not None and (not c.writes or held.writer or self.dialect == "postgresql"):
            return held.raw
        if c.writes and self.dialect == "sqlite":
            # Every SQLite write goes through the process's one writer, in a transaction.
            await self.begin()
            assert self._held is not None
            return self._held.raw
        return (await self._hold(writer=False)).raw

    async def _hold(self, *, writer: bool) -> Held:
        if self.finished:
            raise RuntimeError("the connection of this request is already finished")
        held = self._held
        if held is not None and (held.writer or not writer or self.dialect == "postgresql"):
            return held
        if held is not None:  # a SQLite reader, to be traded for the writer
            self._held = None
            await held.release(held.raw)
        self._held = await self._db.acquire(writer=writer)
        return self._held

    async def _end(self, held: Held, verb: str) -> None:
        if self.dialect == "postgresql":
            transaction, self._pg_transaction = self._pg_transaction, None
            try:
                await (transaction.commit() if verb == "COMMIT" else transaction.rollback())
            except Exception as exc:
                raise self._failed(held.raw, exc) from exc
        else:
            await self._sql(held.raw, verb)

    async def _sql(self, raw: Any, sql: str) -> None:
        """A statement without parameters or results (transaction control)."""
        try:
            if self.dialect == "postgresql":
                await raw.execute(sql)
            else:
                async with raw.execute(sql):
                    pass
        except Exception as exc:
            raise self._failed(raw, exc) from exc

    def _failed(self, raw: Any, exc: Exception) -> BaseException:
        """Our error for the driver's. A PostgreSQL connection whose link or protocol
        failed (the server ended it, a reset, the driver's state out of step) is closed at
        once: its pool then never lends it again, and the next request gets a new one."""
        if (
            self.dialect == "postgresql"
            and isinstance(exc, _BROKEN)
            and not isinstance(exc, asyncpg.DataError)  # a value refused: the link is fine
        ):
            raw.terminate()
        return translate(exc)


# The driver's errors after which a connection cannot be trusted with another statement.
_BROKEN = (
    asyncpg.InternalClientError,
    asyncpg.InterfaceError,
    asyncpg.PostgresConnectionError,
    OSError,
)


def _column_keys(params: Mapping[str, Any]) -> list[str]:
    # Bound parameters of WHERE clauses start with "_"; the other keys are columns.
    return [key for key in params if not key.startswith("_")]


async def _quietly(awaitable: Any) -> None:
    """Best-effort cleanup after a failure: the original error is the one to report."""
    with suppress(Exception):  # the connection may be gone already
        await awaitable
