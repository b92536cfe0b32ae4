"""A search reads through the trigram index (migration 0013) on PostgreSQL and Citus, every
time — also after the five runs that let PostgreSQL cache a generic plan, which would walk
the list in its order and fold every row (records/listing.py `plan_searches`). Read from
PostgreSQL's own counters of the index (on Citus, of its shards on the workers)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.contacts.table import contacts
from tests.client import Api, ok_data
from tests.conftest import migrated_database, new_account
from tests.webhooks import hooks

CONTACTS = 10_000  # fewer, and a scan of them all costs PostgreSQL's planner less
SEARCHES = 8
# Each search of a name reads the index once for each folded column (name, lastname, email).
SCANS_PER_SEARCH = 3

_ONE_TABLE = (
    "SELECT coalesce(sum(idx_scan), 0) AS scans FROM pg_stat_user_indexes "
    "WHERE indexrelname = 'ix_contacts_search'"
)
_SHARDS = (
    "SELECT coalesce(sum(result::bigint), 0) AS scans "
    "FROM run_command_on_placements('contacts', "
    "$$SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes "
    "WHERE relid = '%s'::regclass AND indexrelname LIKE 'ix_contacts_search%%'$$)"
)


def _copies_of(database_url: str, contact: dict[str, object]) -> None:
    """CONTACTS - 1 copies of a contact ("Person 1", person1@example.com…), older than it,
    written in statements of 500 rows (through the API they would take a minute). Each is a
    short transaction: a long one would hold back the events feed of every database on this
    PostgreSQL server, other tests' included, for its length."""
    made = {
        "id": "gen_random_uuid()::text",
        "name": "'Person ' || g",
        "email": "'person' || g || '@example.com'",
        "email_key": "'person' || g || '@example.com'",
        "created_at": "created_at - g * interval '1 second'",
        "modified_at": "modified_at - g * interval '1 second'",
    }
    columns = [c.name for c in contacts.c]
    values = ", ".join(made.get(name, name) for name in columns)
    for start in range(1, CONTACTS, 500):
        end = min(start + 499, CONTACTS - 1)
        hooks.sql(
            database_url,
            f"INSERT INTO contacts ({', '.join(columns)}) SELECT {values} FROM contacts, "
            f"generate_series({start}, {end}) AS g WHERE id = :id",
            {"id": contact["id"]},
        )


def _scans(database_url: str, backend: str) -> int:
    return int(hooks.sql(database_url, _SHARDS if backend == "citus" else _ONE_TABLE)[0]["scans"])


@pytest.fixture
def own_database(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A database of its own: no other test's searches in its counters."""
    if backend == "sqlite":
        pytest.skip("SQLite has no index for a substring; it folds each row (docs/api.md 2.5)")
    with migrated_database(backend, tmp_path_factory) as url:
        yield url


def test_a_search_reads_the_index_every_time(own_database: str, backend: str) -> None:
    url = own_database
    account = new_account(url)
    settings = Settings(database_url=url, rate_limit=0, access_log=False, dispatch=False)
    with TestClient(create_app(settings), raise_server_exceptions=False) as http:
        api = Api(http, account)
        _copies_of(url, api.create_contact(name="Person", email="person@example.com"))
        nunez = api.create_contact(name="Ana", lastname="Núñez")
        hooks.sql(url, "ANALYZE contacts")
        before = _scans(url, backend)
        for _ in range(SEARCHES):
            page = ok_data(api.get("/api/contact", params={"q": "nunez"}))["data"]
            assert [c["id"] for c in page] == [nunez["id"]]
        # A q every contact holds still answers a full page.
        page = ok_data(api.get("/api/contact", params={"q": "PERSON"}))["data"]
        assert [c["name"] for c in page] == ["Person", *(f"Person {i}" for i in range(1, 20))]
    # The app's connections are closed: their counters have been sent.
    deadline = time.monotonic() + 10
    scans = _scans(url, backend) - before
    while scans < SEARCHES * SCANS_PER_SEARCH and time.monotonic() < deadline:
        time.sleep(0.2)
        scans = _scans(url, backend) - before
    assert scans >= SEARCHES * SCANS_PER_SEARCH
