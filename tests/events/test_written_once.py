"""Each event is written once (contract M): ordering a committed event costs no UPDATE of its
row. Read from PostgreSQL's own counters (`pg_stat_user_tables`) of the event table — on
Citus, of each of its shards on the workers — after a workload of creates, updates,
deletes, activities, a merge, feed and history reads and queued webhook deliveries."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from tests.client import Api, ok_data
from tests.conftest import migrated_database, new_account
from tests.webhooks import hooks

_ONE_TABLE = (
    "SELECT coalesce(sum(n_tup_ins), 0) AS ins, coalesce(sum(n_tup_upd), 0) AS upd "
    "FROM pg_stat_user_tables WHERE relname = 'events'"
)
# Citus: the counters of the shards, on the workers that hold them.
_SHARDS = (
    "SELECT coalesce(sum(split_part(result, ',', 1)::bigint), 0) AS ins, "
    "coalesce(sum(split_part(result, ',', 2)::bigint), 0) AS upd "
    "FROM run_command_on_placements('events', "
    "$$SELECT n_tup_ins || ',' || n_tup_upd FROM pg_stat_user_tables "
    "WHERE relid = '%s'::regclass$$)"
)


def _counters(database_url: str, backend: str) -> tuple[int, int]:
    # A backend sends its counters at most once a second (PostgreSQL 15): read them fresh.
    row = hooks.sql(database_url, _SHARDS if backend == "citus" else _ONE_TABLE)[0]
    return int(row["ins"]), int(row["upd"])


def _workload(api: Api) -> int:
    """Changes of every kind that write events; returns how many it wrote."""
    ids = [api.create_contact(name=f"Once {i}")["id"] for i in range(20)]
    for i, contact_id in enumerate(ids):
        api.set_contact(contact_id, name=f"Changed {i}")
    opportunity = api.create_opportunity()
    api.set_opportunity(opportunity["id"], amount=120)
    assert api.delete(f"/api/contact/{ids[1]}").status_code == 200
    merged = api.post("/api/contact/merge", json={"primaryId": ids[2], "duplicateIds": [ids[3]]})
    assert merged.status_code == 200, merged.text
    return 20 + 20 + 2 + 1 + 2


@pytest.fixture
def own_api(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, str]]:
    """An app on a database of its own: no other test's writes in its counters."""
    if backend == "sqlite":
        pytest.skip("SQLite keeps no per-table counters; its writes are the same statements")
    with migrated_database(backend, tmp_path_factory) as url:
        settings = Settings(database_url=url, rate_limit=0, access_log=False, dispatch=False)
        with TestClient(create_app(settings), raise_server_exceptions=False) as http:
            yield Api(http, new_account(url)), url


def test_no_event_row_is_ever_updated(own_api: tuple[Api, str], backend: str) -> None:
    api, database_url = own_api
    hooks.create(api)  # deliveries are queued for every event
    written = _workload(api)
    hooks.publish(api, database_url)
    feed = ok_data(api.get("/api/events", params={"pageSize": "100"}))
    assert len(feed["events"]) >= written
    # The counters reach the statistics within seconds of each transaction's end.
    deadline = time.monotonic() + 15
    inserted, updated = _counters(database_url, backend)
    while inserted < written and time.monotonic() < deadline:
        time.sleep(0.2)
        inserted, updated = _counters(database_url, backend)
    assert inserted >= written
    assert updated == 0
