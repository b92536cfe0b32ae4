"""Property: with many writers committing concurrently (two server processes, so commits
interleave and finish out of order) a follower that polls with `next` receives every event
of the workspace exactly once, and each record's events in version order."""

from __future__ import annotations

import random
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import new_account
from tests.servers import Server, serve


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[Server]:
    with serve(database_url, workers=2) as running:
        yield running


def _client(server: Server, database_url: str) -> httpx.Client:
    account = new_account(database_url, "Feed property")
    return httpx.Client(
        base_url=server.base_url,
        headers={
            "Authorization": f"Bearer {account.api_key}",
            "x-workspace-id": account.workspace_id,
        },
        timeout=30,
    )


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    writers=st.integers(2, 6),
    writes=st.integers(3, 12),
    records=st.integers(1, 4),
    page=st.integers(1, 15),
    seed=st.integers(0, 2**16),
)
def test_follower_sees_every_event_once(
    server: Server, database_url: str, writers: int, writes: int, records: int, page: int, seed: int
) -> None:
    client = _client(server, database_url)
    ws = client.headers["x-workspace-id"]
    contacts = [
        _ok(client.post("/api/contact", json={"name": f"c{i}", "email": f"p{seed}-{i}-{ws}@x.io"}))[
            "id"
        ]
        for i in range(records)
    ]
    received: list[dict[str, Any]] = []
    done = threading.Event()
    failures: list[str] = []

    def write(n: int) -> None:
        rng = random.Random(seed * 100 + n)
        with httpx.Client(base_url=server.base_url, headers=client.headers, timeout=30) as mine:
            for i in range(writes):
                target = rng.choice(contacts)
                r = mine.put(
                    "/api/contact",
                    params={"id": target, "workspaceId": ws},
                    json={"paramToUpdate": "name", "name": f"w{n}-{i}"},
                )
                if r.status_code != 200:
                    failures.append(r.text)

    def follow() -> None:
        after = None
        with httpx.Client(base_url=server.base_url, headers=client.headers, timeout=30) as mine:
            while True:
                finished = done.is_set()
                params = {"pageSize": str(page), "wait": "0.2"}
                if after:
                    params["after"] = after
                data = _ok(mine.get("/api/events", params=params))
                received.extend(data["events"])
                after = data["next"]
                if finished and not data["events"]:
                    return

    follower = threading.Thread(target=follow)
    follower.start()
    threads = [threading.Thread(target=write, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    follower.join(timeout=60)
    assert not failures, failures[:3]

    ids = [e["id"] for e in received]
    assert len(ids) == len(set(ids)), "an event was received twice"
    everything: list[str] = []
    after = None
    while True:
        params = {"pageSize": "100", **({"after": after} if after else {})}
        data = _ok(client.get("/api/events", params=params))
        if not data["events"]:
            break
        everything += [e["id"] for e in data["events"]]
        after = data["next"]
    assert len(everything) == records + writers * writes
    assert ids == everything, "the follower missed events or saw them out of feed order"
    versions: dict[str, int] = {}
    for event in received:
        assert event["recordVersion"] > versions.get(event["recordId"], 0)
        versions[event["recordId"]] = event["recordVersion"]
    client.close()
