"""Everything together, over HTTP, as a team runs it (contract D.4): two `chatcrm serve`
processes (two workers each) on one database, changes made through both, a webhook
subscribed through the API, and a real receiver that verifies every delivery with the
Standard Webhooks reference library. Each event is delivered once, and is the feed's."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from standardwebhooks.webhooks import Webhook

from tests.conftest import new_account
from tests.servers import Server, serve_nodes
from tests.webhooks.processes import LOCAL
from tests.webhooks.receiver import Receiver

WRITES_PER_SERVER = 40


@pytest.fixture
def servers(dispatch_url: str) -> Iterator[list[Server]]:
    env = {**LOCAL, "CHATCRM_RATE_LIMIT": "0"}
    with serve_nodes(dispatch_url, 2, workers=2, env=env) as nodes:
        yield nodes


def _client(server: Server, key: str, workspace: str) -> httpx.Client:
    headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace}
    return httpx.Client(base_url=server.base_url, headers=headers, timeout=30)


def _ok(response: httpx.Response) -> Any:
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_two_servers_deliver_each_event_once_signed(
    dispatch_url: str, servers: list[Server], receiver: Receiver
) -> None:
    account = new_account(dispatch_url, "End to end")
    clients = [_client(s, account.api_key, account.workspace_id) for s in servers]
    made = _ok(
        clients[0].post(
            "/api/webhook", json={"url": receiver.url("/hook"), "eventTypes": ["contact.*"]}
        )
    )
    secret = made["webhook"]["secret"]
    contacts = [
        _ok(c.post("/api/contact", json={"name": f"n{i}", "email": f"e2e{i}@example.com"}))
        for i, c in enumerate(clients)
    ]
    for n in range(WRITES_PER_SERVER):
        for client, contact in zip(clients, contacts, strict=True):
            _ok(
                client.put(
                    "/api/contact",
                    params={"id": contact["id"], "workspaceId": account.workspace_id},
                    json={"paramToUpdate": "name", "name": f"name {n}"},
                )
            )
    _ok(clients[1].post("/api/opportunity", json={"name": "Deal", "amount": 5}))  # not sent

    feed: list[dict[str, Any]] = []
    after = None
    while True:
        params = {"pageSize": "100", "types": "contact.*", **({"after": after} if after else {})}
        page = _ok(clients[1].get("/api/events", params=params))
        if not page["events"]:
            break
        feed += page["events"]
        after = page["next"]
    assert len(feed) == 2 + 2 * WRITES_PER_SERVER

    got = receiver.wait_for(len(feed), "/hook", timeout=60)
    time.sleep(1.5)  # a duplicate would come now
    got = receiver.requests("/hook")
    ids = [r.headers["webhook-id"] for r in got]
    assert len(ids) == len(set(ids)), "an event was delivered twice"
    assert sorted(ids) == sorted(e["id"] for e in feed)
    verifier = Webhook(secret)
    by_id = {e["id"]: e for e in feed}
    for r in got:
        headers = {
            k: r.headers[k] for k in ("webhook-id", "webhook-timestamp", "webhook-signature")
        }
        verifier.verify(r.body, headers)  # raises on a bad signature
        assert json.loads(r.body) == by_id[r.headers["webhook-id"]]
        assert r.headers["content-type"] == "application/json"
        assert r.headers["user-agent"].startswith("chatcrm-webhooks/")
    # Every delivery is recorded as succeeded, once.
    log = _ok(clients[0].get(f"/api/webhook/{made['id']}/deliveries", params={"pageSize": "100"}))
    assert {d["status"] for d in log["data"]} == {"succeeded"}
    assert {d["attempts"] for d in log["data"]} == {1}
    for c in clients:
        c.close()
