"""What the service makes of a database's refusals (db/errors.py): conditions of the moment
are `Unavailable` (the API answers 503, a client tries again); others are not."""

from __future__ import annotations

import asyncpg
import pytest

from chatcrm.db.errors import Unavailable, UniqueViolation, translate


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
