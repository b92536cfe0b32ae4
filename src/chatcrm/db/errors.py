"""Driver errors, translated once, so services and handlers need not know the driver."""

from __future__ import annotations

import asyncio
import sqlite3

import asyncpg


class DatabaseError(Exception):
    """Base of the errors below."""


class IntegrityViolation(DatabaseError):
    """A unique or foreign-key constraint refused the change."""


class UniqueViolation(IntegrityViolation):
    pass


class DataProblem(DatabaseError):
    """The database refused a value (out of range, bad encoding)."""


class Unavailable(DatabaseError):
    """The database cannot be reached or used right now; retrying later may work."""


class RolledBack(Unavailable):
    """The database undid the transaction because another one changed the same data at
    the same moment (a deadlock, also one across Citus's nodes, or a serialization
    failure): the database is fine, and the same request run again passes."""


def translate(exc: BaseException) -> BaseException:
    """Our error for a driver's, or the original when it is not a database condition."""
    if isinstance(exc, DatabaseError):
        return exc
    if isinstance(exc, asyncpg.UniqueViolationError):
        return UniqueViolation(str(exc))
    if isinstance(exc, asyncpg.IntegrityConstraintViolationError):
        return IntegrityViolation(str(exc))
    if isinstance(exc, asyncpg.DataError):
        return DataProblem(type(exc).__name__)
    if isinstance(exc, sqlite3.IntegrityError):
        return UniqueViolation(str(exc)) if "UNIQUE" in str(exc) else IntegrityViolation(str(exc))
    if isinstance(exc, sqlite3.OperationalError):
        # Busy, locked, full, unreadable: conditions of the moment. Anything else (a bad
        # statement) is a bug and must surface as one.
        if any(words in str(exc) for words in _SQLITE_TRANSIENT):
            return Unavailable(f"{type(exc).__name__}: {exc}")
        return exc
    if isinstance(exc, asyncpg.TransactionRollbackError):  # SQLSTATE class 40
        return RolledBack(f"{type(exc).__name__}: {exc}")
    if _refused_at_connect(exc):
        return Unavailable(f"{type(exc).__name__}: {exc}")
    if isinstance(
        exc,
        asyncpg.PostgresConnectionError
        | asyncpg.InterfaceError
        | asyncpg.InternalClientError  # the server ended the connection as it was used
        | asyncpg.CannotConnectNowError
        | asyncpg.TooManyConnectionsError
        | asyncpg.AdminShutdownError
        | asyncpg.QueryCanceledError
        | ConnectionError
        | OSError
        | asyncio.TimeoutError,
    ):
        return Unavailable(f"{type(exc).__name__}: {exc}")
    return exc


_SQLITE_TRANSIENT = (
    "locked",
    "busy",
    "disk I/O error",
    "unable to open database",
    "database or disk is full",
    "readonly",
)


def _refused_at_connect(exc: BaseException) -> bool:
    """The server is up but will not give the service its database: it is not there
    (dropped or renamed: 3D000), takes no connections (`ALLOW_CONNECTIONS false`: 55000),
    or refuses the role (28000, 28P01: a rotated password). An operator's condition, which
    the service cannot mend and which may end: unavailable, like a server that is down."""
    if isinstance(
        exc, asyncpg.InvalidCatalogNameError | asyncpg.InvalidAuthorizationSpecificationError
    ):
        return True
    closed = type(exc) is asyncpg.ObjectNotInPrerequisiteStateError
    return closed and "not currently accepting connections" in str(exc)
