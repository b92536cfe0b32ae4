"""What the service makes of a database's refusals (db/errors.py): conditions of the moment
are `Unavailable` (the API answers 503, a client tries again); others are not."""

from __future__ import annotations

import asyncpg
import pytest

from chatcrm.api.errors import unavailable
from chatcrm.core.errors import DATABASE_UNREACHABLE, ROLLED_BACK
from chatcrm.db.errors import RolledBack, Unavailable, UniqueViolation, translate


@pytest.mark.parametrize(
    "exc",
    [
        # Citus's detector of deadlocks across nodes (seen between a key's INSERT and the
        # key-use upkeep's UPDATE of the `api_keys` reference table), and PostgreSQL's own.
        asyncpg.DeadlockDetectedError(
            "canceling the transaction since it was involved in a distributed deadlock"
        ),
        asyncpg.SerializationError("could not serialize access due to concurrent update"),
        asyncpg.QueryCanceledError("canceling statement due to statement timeout"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_a_rolled_back_transaction_is_unavailable_not_an_error(exc: Exception) -> None:
    assert isinstance(translate(exc), Unavailable)


def test_a_duplicate_is_not_unavailable() -> None:
    translated = translate(asyncpg.UniqueViolationError("duplicate key value"))
    assert isinstance(translated, UniqueViolation)
    assert not isinstance(translated, Unavailable)


@pytest.mark.parametrize(
    "exc",
    [
        asyncpg.DeadlockDetectedError(
            "canceling the transaction since it was involved in a distributed deadlock"
        ),
        asyncpg.SerializationError("could not serialize access due to concurrent update"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_a_transaction_undone_for_another_says_so(exc: Exception) -> None:
    """The database is fine: the 503 tells the client its request met another, not that
    the database is unreachable (which would send someone to look at the database)."""
    assert isinstance(translate(exc), RolledBack)
    answer = unavailable(exc)
    assert (answer.status, answer.error_code) == (503, "SERVICE_UNAVAILABLE")
    assert answer.message == ROLLED_BACK
    assert answer.headers == {"Retry-After": "2"}


@pytest.mark.parametrize(
    "exc",
    [
        asyncpg.QueryCanceledError("canceling statement due to statement timeout"),
        ConnectionRefusedError(111, "Connection refused"),
        asyncpg.TooManyConnectionsError("sorry, too many clients already"),
    ],
    ids=lambda exc: type(exc).__name__,
)
def test_a_database_out_of_reach_is_said_to_be(exc: Exception) -> None:
    assert not isinstance(translate(exc), RolledBack)
    answer = unavailable(exc)
    assert (answer.status, answer.message) == (503, DATABASE_UNREACHABLE)
    assert answer.headers == {"Retry-After": "2"}
