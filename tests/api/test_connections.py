"""One database connection per request: no request ever holds two pooled connections, and
every connection goes back to its pool before the answer is sent.

The database counts the driver connections lent out (`in_use`) and the most ever lent at
once (`peak_in_use`); requests are sent one at a time, so the peak of each is its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.database import Database
from tests.client import Api, unique_email, unique_phone
from tests.conftest import new_account


def _requests(api: Api, other: Api) -> list[tuple[str, Callable[[], httpx.Response]]]:
    """Every kind of request the service answers, each a thunk (some depend on others)."""
    ws = api.ws
    contact = api.create_contact(phone=unique_phone())
    opportunity = api.create_opportunity(contactId=contact["id"])
    stage = api.stage_ids()[1]
    token_page = api.get("/api/contact", params={"pageSize": 1}).json()["data"]
    token = token_page["continuationToken"]
    update = {"id": contact["id"], "workspaceId": ws}
    key = {"Idempotency-Key": unique_email()}
    return [
        ("GET contact", lambda: api.get(f"/api/contact/{contact['id']}")),
        ("GET unknown contact", lambda: api.get("/api/contact/nope")),
        ("GET opportunity", lambda: api.get(f"/api/opportunity/{opportunity['id']}")),
        ("list contacts", lambda: api.get("/api/contact", params={"q": "a", "isSolved": "false"})),
        ("list next page", lambda: api.get("/api/contact", params={"continuationToken": token})),
        ("list opportunities", lambda: api.get("/api/opportunity", params={"winLossStatus": 0})),
        ("search phone", lambda: api.get("/api/contact/searchByCellphone",
                                         params={"cellphone": contact["internalWhatsappNumber"]})),
        ("search email", lambda: api.get("/api/contact/searchByEmail",
                                         params={"email": contact["email"]})),
        ("update (one statement)", lambda: api.put("/api/contact", params=update,
                                                   json={"paramToUpdate": "name", "name": "N"})),
        ("update (row lock)", lambda: api.put("/api/contact", params=update,
                                              json={"paramToUpdate": "stageId", "stageId": stage})),
        ("update, stale If-Match", lambda: api.put("/api/contact", params=update,
                                                   headers={"If-Match": '"999"'},
                                                   json={"paramToUpdate": "name", "name": "X"})),
        ("update opportunity", lambda: api.put("/api/opportunity", params={"id": opportunity["id"]},
                                               json={"paramToUpdate": "amount", "amount": 5})),
        ("create contact", lambda: api.post("/api/contact", json={"name": "C",
                                                                  "email": unique_email()})),
        ("create, duplicate email", lambda: api.post("/api/contact", json={
            "name": "D", "email": contact["email"]})),
        ("create, idempotent", lambda: api.post("/api/contact", headers=key,
                                                json={"name": "I", "email": "i@example.com"})),
        ("create, replayed", lambda: api.post("/api/contact", headers=key,
                                              json={"name": "I", "email": "i@example.com"})),
        ("create, key reused", lambda: api.post("/api/contact", headers=key,
                                                json={"name": "J", "email": "j@example.com"})),
        ("create, idempotent 422", lambda: api.post("/api/contact",
                                                    headers={"Idempotency-Key": unique_email()},
                                                    json={"name": ""})),
        ("create opportunity", lambda: api.post("/api/opportunity", json={"name": "O",
                                                                          "amount": 1})),
        ("contact activity", lambda: api.post(f"/api/contact/{contact['id']}/activities",
                                              json={"content": "called"})),
        ("contact activities", lambda: api.get(f"/api/contact/{contact['id']}/activities")),
        ("opportunity activity", lambda: api.post(
            f"/api/opportunity/{opportunity['id']}/agent/activities",
            json={"content": "met", "categoryType": "Meeting"})),
        ("delete opportunity", lambda: api.delete(f"/api/opportunity/{opportunity['id']}")),
        ("delete contacts", lambda: api.post("/api/contact/delete-batch",
                                             json={"contactIds": [{"ids": contact["id"]}]})),
        ("workspace", lambda: api.get(f"/api/workspace/{ws}")),
        ("new workspace", lambda: api.post("/api/workspace", json={"name": "W"})),
        ("new tag", lambda: api.post(f"/api/workspace/{ws}/tags", json={"name": "t"})),
        ("foreign workspace", lambda: api.get(f"/api/workspace/{other.ws}")),
        ("key not cached yet", lambda: other.get(f"/api/workspace/{other.ws}")),
        ("no key", lambda: api.get("/api/contact", auth=None)),
        ("unknown route", lambda: api.get("/api/nope")),
        ("ready", lambda: api.http.get("/ready")),
    ]  # fmt: skip


def test_no_request_holds_two_connections(api: Api, database_url: str) -> None:
    other = Api(api.http, new_account(database_url))
    db: Any = api.http.app.state.db  # type: ignore[attr-defined]
    for label, send in _requests(api, other):
        db.reset_peak()
        response = send()
        assert response.status_code < 500, (label, response.text)
        assert db.peak_in_use <= 1, f"{label}: held {db.peak_in_use} connections at once"
        assert db.in_use == 0, f"{label}: a connection was not given back"


@asynccontextmanager
async def pool_of_one(
    database_url: str, connect_timeout: float
) -> AsyncIterator[tuple[Database, httpx.AsyncClient]]:
    """The app with a pool of one connection, running, and a client of a new account."""
    account = new_account(database_url)
    settings = Settings(
        database_url=database_url,
        rate_limit=0,
        access_log=False,
        db_pool_size=1,
        db_max_overflow=0,
        db_connect_timeout=connect_timeout,
    )
    app = create_app(settings)
    headers = {
        "Authorization": f"Bearer {account.api_key}",
        "x-workspace-id": account.workspace_id,
    }
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(
            transport=transport, base_url="http://test", headers=headers, timeout=30
        ) as client:
            yield app.state.db, client


@pytest.mark.postgres_only
def test_a_pool_of_one_serves_concurrent_requests(postgres_url: str) -> None:
    """With one pooled connection, requests that needed two (an idempotent POST reading
    while its transaction is open) would wait for themselves and time out as 503."""

    async def run() -> list[httpx.Response]:
        async with pool_of_one(postgres_url, connect_timeout=3) as (_, client):

            def create(i: int) -> Any:
                return client.post(
                    "/api/contact",
                    headers={"Idempotency-Key": f"pool-{i}"},
                    json={"name": f"P{i}", "email": f"pool{i}@example.com"},
                )

            requests = [create(i) for i in range(12)]
            requests += [client.get("/api/contact") for _ in range(6)]
            return list(await asyncio.gather(*requests))

    for response in asyncio.run(run()):
        assert response.status_code == 200, response.text


@pytest.mark.postgres_only
def test_a_request_waits_for_a_full_pool_only_as_long_as_the_connect_timeout(
    postgres_url: str,
) -> None:
    """operations.md 3.3: with every connection of the pool lent out, a request waits up to
    CHATCRM_DB_CONNECT_TIMEOUT for one, then answers 503; once one is back, it is served."""

    async def run() -> tuple[httpx.Response, float, httpx.Response]:
        async with pool_of_one(postgres_url, connect_timeout=0.5) as (db, client):
            await client.get("/api/contact")  # the key is cached: no second connection
            held = await db.acquire(writer=False)  # the pool's only connection
            started = asyncio.get_running_loop().time()
            try:
                refused = await client.get("/api/contact")
            finally:
                waited = asyncio.get_running_loop().time() - started
                await held.release(held.raw)
            served = await client.get("/api/contact")
            return refused, waited, served

    refused, waited, served = asyncio.run(run())
    assert refused.status_code == 503, refused.text
    assert refused.json()["errorCode"] is not None
    # Said as what it is: the database may be fine, this server's connections are busy.
    assert (
        refused.json()["message"]
        == "Every database connection of this server is in use; retry shortly."
    )
    assert 0.4 <= waited < 3, waited
    assert served.status_code == 200, served.text
