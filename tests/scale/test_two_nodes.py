"""Part I of the contract on two nodes of one PostgreSQL database (two workers each): a
request behaves the same whichever node it reaches, a key has one rate budget across all
of them, a revoked key is refused everywhere within 1 s, and each webhook endpoint gets
each event once however many processes dispatch."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import cycle
from typing import Any

import asyncpg
import httpx
import pytest

from chatcrm.auth.service import revoke_key
from chatcrm.config import Settings
from chatcrm.db.database import Database
from tests.client import unique_email
from tests.conftest import run_sync
from tests.scale.conftest import Cluster
from tests.test_cli import chatcrm_executable
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.slow

NO_SUCH_CONTACT = "01a214de-0000-7000-8000-000000000000"


def ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_a_continuation_token_from_one_node_pages_on_the_other(cluster: Cluster) -> None:
    account = cluster.account()
    a, b = cluster.clients(account.api_key, account.workspace_id)
    made = {
        ok(client.post("/api/contact", json={"name": "Page", "email": unique_email()}))["contact"][
            "id"
        ]
        for client, _ in zip(cycle((a, b)), range(7), strict=False)
    }
    seen: list[str] = []
    params = {"pageSize": "2"}
    for client in cycle((a, b)):  # every page from the other node than the last
        page = ok(client.get("/api/contact", params=params))
        seen += [c["id"] for c in page["data"]]
        if page["continuationToken"] is None:
            break
        params = {"pageSize": "2", "continuationToken": page["continuationToken"]}
    assert sorted(seen) == sorted(made)
    # A forged token is refused by either node alike.
    for client in (a, b):
        bad = client.get("/api/contact", params={"continuationToken": "forged"})
        assert bad.json()["errorCode"] == "INVALID_CONTINUATION_TOKEN", bad.text


def test_an_idempotent_post_replays_on_the_other_node(cluster: Cluster) -> None:
    account = cluster.account()
    a, b = cluster.clients(account.api_key, account.workspace_id)
    body = {"name": "Once", "email": unique_email()}
    headers = {"Idempotency-Key": "scale-1"}
    first = a.post("/api/contact", json=body, headers=headers)
    again = b.post("/api/contact", json=body, headers=headers)
    assert first.status_code == again.status_code == 200, (first.text, again.text)
    assert again.json() == first.json()
    assert again.headers["etag"] == first.headers["etag"]
    assert again.headers["idempotent-replayed"] == "true"
    reused = b.post("/api/contact", json={**body, "name": "Other"}, headers=headers)
    assert reused.status_code == 409 and reused.json()["errorCode"] == "IDEMPOTENCY_KEY_REUSED"
    listed = ok(a.get("/api/contact", params={"q": body["email"]}))["data"]
    assert [c["id"] for c in listed] == [first.json()["data"]["contact"]["id"]]


def test_opportunity_codes_are_unique_and_gap_free_when_both_nodes_create(
    cluster: Cluster,
) -> None:
    account = cluster.account()
    clients = cluster.clients(account.api_key, account.workspace_id)
    per_node = 12

    def create(n: int) -> str:
        client = clients[n % 2]
        made = ok(client.post("/api/opportunity", json={"name": f"Deal {n}", "amount": n}))
        code: str = made["opportunity"]["opportCode"]
        return code

    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(create, range(2 * per_node)))
    year = codes[0].split("-")[1]
    assert sorted(codes) == [f"OPP-{year}-{n:04d}" for n in range(1, 2 * per_node + 1)]


def test_a_key_has_one_rate_budget_across_both_nodes(cluster: Cluster) -> None:
    """5 requests/s with bursts of 10, spent from four processes on two nodes: together
    they allow at most 10 + 5 per second (the bound of docs/operations.md), not that much
    per node or per process."""
    account = cluster.account()
    _, key = cluster.key(account, rate_limit=5)
    clients = cluster.clients(key, account.workspace_id)
    answers: list[httpx.Response] = []
    lock = threading.Lock()
    seconds = 2.0

    def hammer(client: httpx.Client, stop_at: float) -> None:
        while time.monotonic() < stop_at:
            response = client.get(f"/api/contact/{NO_SUCH_CONTACT}")
            with lock:
                answers.append(response)

    start = time.monotonic()
    threads = [
        threading.Thread(target=hammer, args=(client, start + seconds))
        for client in clients
        for _ in range(3)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - start
    allowed = [r for r in answers if r.status_code == 404]
    refused = [r for r in answers if r.status_code == 429]
    assert len(allowed) + len(refused) == len(answers), {r.status_code for r in answers}
    assert len(refused) > len(allowed), (len(allowed), len(refused))
    # The bucket starts full (10) and refills 5 per second, whichever node answers.
    assert len(allowed) <= 10 + 5 * elapsed + 1, (len(allowed), elapsed)
    assert len(allowed) >= 10 + 5 * (seconds - 1), (len(allowed), elapsed)
    for response in answers:
        assert response.headers["ratelimit-limit"] == "10"
    for response in refused:
        assert int(response.headers["retry-after"]) >= 1
        assert response.headers["ratelimit-remaining"] == "0"


def _key_cached_on_both_nodes(cluster: Cluster) -> tuple[str, Callable[[int], int]]:
    """A new key, used on both nodes (so cached by the workers that answered): its id, and
    the status a node answers it with now."""
    account = cluster.account()
    key_id, key = cluster.key(account)
    return key_id, _cached_on_both_nodes(cluster, account.workspace_id, key)


def _cached_on_both_nodes(cluster: Cluster, workspace_id: str, key: str) -> Callable[[int], int]:
    path = f"/api/contact/{NO_SUCH_CONTACT}"
    headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace_id}

    def status(node: int) -> int:
        # A connection of its own each time, so that requests reach both workers of a node.
        url = cluster.nodes[node].base_url + path
        return httpx.get(url, headers=headers, timeout=10).status_code

    for node in (0, 1):
        assert {status(node) for _ in range(8)} == {404}
    return status


def _refused_by_both_within_a_second(status: Callable[[int], int], revoked_at: float) -> None:
    refused_after: dict[int, float] = {}
    while len(refused_after) < 2:
        for node in (0, 1):
            if node not in refused_after and status(node) == 401:
                refused_after[node] = time.monotonic() - revoked_at
        assert time.monotonic() - revoked_at < 5, refused_after
    # From then on, and past the second, every worker of both nodes refuses it.
    time.sleep(max(0.0, 1.0 - (time.monotonic() - revoked_at)))
    for node in (0, 1):
        assert {status(node) for _ in range(8)} == {401}
    assert max(refused_after.values()) < 1.0, refused_after


def _revoke_then_refused_by_both(
    cluster: Cluster, key_id: str, status: Callable[[int], int]
) -> None:
    """`chatcrm keys revoke`, then `status` is 401 on both nodes within a second."""
    done = subprocess.run(
        [chatcrm_executable(), "keys", "revoke", key_id, "--database-url", cluster.url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    _refused_by_both_within_a_second(status, time.monotonic())


def test_a_revoked_key_is_refused_by_every_node_within_a_second(cluster: Cluster) -> None:
    key_id, status = _key_cached_on_both_nodes(cluster)
    _revoke_then_refused_by_both(cluster, key_id, status)


def test_keys_made_with_a_revoked_key_are_refused_by_every_node_within_a_second(
    cluster: Cluster,
) -> None:
    account = cluster.account()
    parent_id, parent = cluster.key(account)
    made = httpx.post(
        cluster.nodes[0].base_url + "/api/key",
        json={"name": "made with the parent", "scopes": ["*"]},
        headers={"Authorization": f"Bearer {parent}"},
        timeout=10,
    )
    assert made.status_code == 200, made.text
    status = _cached_on_both_nodes(cluster, account.workspace_id, made.json()["data"]["apiKey"])
    _revoke_then_refused_by_both(cluster, parent_id, status)


# The processes' LISTEN connections: the last statement each ran is its last LISTEN.
_LISTENING = (
    "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %'"
)


def test_a_key_revoked_while_the_nodes_hear_no_notification_is_still_refused_within_a_second(
    cluster: Cluster,
) -> None:
    """A process whose LISTEN connection was just lost hears no revocation until it is open
    again (about 2 s later): the key must stop within 1 s all the same."""
    key_id, status = _key_cached_on_both_nodes(cluster)

    async def cut_then_revoke() -> tuple[int, float]:
        db = Database(Settings(database_url=cluster.url))
        try:
            admin = await asyncpg.connect(cluster.url)
            try:
                cut = await admin.fetch(f"SELECT pg_terminate_backend(pid) FROM ({_LISTENING}) l")
            finally:
                await admin.close()
            cut_at = time.monotonic()
            async with db.transaction() as conn:
                assert await revoke_key(conn, key_id)
            return len(cut), time.monotonic() - cut_at
        finally:
            await db.dispose()

    cut, revoke_took = run_sync(cut_then_revoke)
    revoked_at = time.monotonic()
    assert cut >= 4, cut  # two workers on each node
    # Revoked before any of them could have listened again (they wait 2 s).
    assert revoke_took < 1.5, revoke_took
    _refused_by_both_within_a_second(status, revoked_at)

    async def listening() -> int:
        admin = await asyncpg.connect(cluster.url)
        try:
            return len(await admin.fetch(_LISTENING))
        finally:
            await admin.close()

    # The nodes listen again, for the tests after this one.
    deadline = time.monotonic() + 15
    while run_sync(listening) < cut:
        assert time.monotonic() < deadline, "the nodes did not listen again"
        time.sleep(0.2)


def _feed(client: httpx.Client) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    after = None
    while True:
        params = {"pageSize": "100", **({"after": after} if after else {})}
        page = ok(client.get("/api/events", params=params))
        if not page["events"]:
            return events
        events += page["events"]
        after = page["next"]


def test_webhooks_go_once_per_endpoint_and_the_feed_is_the_same_from_both_nodes(
    cluster: Cluster, receiver: Receiver
) -> None:
    account = cluster.account()
    a, b = cluster.clients(account.api_key, account.workspace_id)
    for client, path in ((a, "/one"), (b, "/two")):
        ok(
            client.post(
                "/api/webhook", json={"url": receiver.url(path), "eventTypes": ["contact.*"]}
            )
        )
    writes = 10

    def write(n: int) -> None:
        client = (a, b)[n % 2]
        ok(client.post("/api/contact", json={"name": f"n{n}", "email": unique_email()}))

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(write, range(writes)))
    feed = {name: _feed(client) for name, client in (("a", a), ("b", b))}
    assert len(feed["a"]) == writes
    assert feed["a"] == feed["b"]
    ids = sorted(e["id"] for e in feed["a"])
    for path in ("/one", "/two"):
        receiver.wait_for(writes, path, timeout=30)
    time.sleep(1.0)  # a duplicate from another of the four dispatchers would come now
    for path in ("/one", "/two"):
        got = [r.headers["webhook-id"] for r in receiver.requests(path)]
        assert sorted(got) == ids, path
