"""No duplicate creates (contract C): `Idempotency-Key` on POST.

The first answer is stored in the database for 24 h and replayed (same status, same bytes,
same ETag, plus `Idempotent-Replayed: true`) for the same key and the same JSON body; the
key is scoped to the account, the method and the path.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.schema import idempotency_keys
from tests.client import Api, error, error_fields, ok_data, unique_email
from tests.conftest import migrated_database, new_account
from tests.reliability.conftest import AsyncApi, add_key, app_client, sql

CREATED = "Contact created successfully."
REPLAYED = "idempotent-replayed"


def new_key() -> str:
    return f"idem-{uuid.uuid4()}"


def with_key(key: str, **extra: str) -> dict[str, str]:
    return {"Idempotency-Key": key, **extra}


def post_contact(api: Api, body: Any, key: str | None, **kw: Any) -> httpx.Response:
    headers = with_key(key) if key is not None else {}
    return api.post("/api/contact", json=body, headers=headers, **kw)


def post_raw(api: Api, path: str, raw: bytes, key: str) -> httpx.Response:
    headers = with_key(key, **{"Content-Type": "application/json"})
    return api.post(path, content=raw, headers=headers)


def assert_replay(first: httpx.Response, again: httpx.Response) -> None:
    """`again` is the stored first answer: status, bytes and ETag, marked as a replay."""
    assert REPLAYED not in first.headers
    assert again.headers.get(REPLAYED) == "true", again.headers
    assert again.status_code == first.status_code
    assert again.content == first.content
    assert again.headers.get("etag") == first.headers.get("etag")
    assert again.headers["content-type"] == first.headers["content-type"]


def assert_fresh(response: httpx.Response) -> None:
    assert REPLAYED not in response.headers, response.headers


def contacts_named(api: Api, name: str) -> list[dict[str, Any]]:
    data = ok_data(api.get("/api/contact", params={"q": name, "pageSize": "100"}))
    return [c for c in data["data"] if c["name"] == name]


def all_contacts(api: Api) -> list[dict[str, Any]]:
    return list(ok_data(api.get("/api/contact", params={"pageSize": "100"}))["data"])


def all_opportunities(api: Api) -> list[dict[str, Any]]:
    return list(ok_data(api.get("/api/opportunity", params={"pageSize": "100"}))["data"])


def stored_rows(database_url: str, key: str) -> list[Any]:
    t = idempotency_keys.c
    return sql(
        database_url,
        select(
            t.account_id,
            t.method,
            t.path,
            t.status_code,
            t.response_body,
            t.created_at,
            t.expires_at,
        ).where(t.key == key),
    )


# --- replay --------------------------------------------------------------------------------------


def test_same_key_and_body_replays_the_first_answer_exactly(api: Api) -> None:
    key = new_key()
    body = {"name": "Once", "email": unique_email(), "variables": [{"name": "a", "value": 1}]}
    first = post_contact(api, body, key)
    contact = ok_data(first, CREATED)["contact"]
    assert first.headers["etag"] == '"1"'
    again = post_contact(api, body, key)
    assert_replay(first, again)
    assert len(contacts_named(api, "Once")) == 1
    # The replay is the stored answer, not a new read: after a change, still version 1.
    ok_data(api.update_contact(contact["id"], {"paramToUpdate": "lastname", "lastname": "Z"}))
    third = post_contact(api, body, key)
    assert_replay(first, third)
    assert third.headers["etag"] == '"1"'
    assert len(contacts_named(api, "Once")) == 1


def test_an_answer_stored_before_an_upgrade_is_replayed_after_it(
    api: Api, database_url: str
) -> None:
    """A client retrying across a deploy: versions before people (J) fingerprinted a
    request without the caller's line, so the retry of an answer they stored (kept 24
    hours) was refused 409 as another request by this version. It is that answer."""
    key = new_key()
    body = {"name": "Across a deploy", "email": unique_email()}
    first = post_contact(api, body, key)
    ok_data(first, CREATED)
    earlier = hashlib.sha256(
        f"{api.ws}\n".encode() + orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    ).hexdigest()
    t = idempotency_keys.c
    sql(database_url, update(idempotency_keys).where(t.key == key).values(request_hash=earlier))
    assert_replay(first, post_contact(api, body, key))
    other = post_contact(api, {**body, "name": "Another"}, key)
    error(other, 409, "IDEMPOTENCY_KEY_REUSED")
    assert len(contacts_named(api, "Across a deploy")) == 1


def test_without_a_key_two_identical_posts_create_two_records(api: Api) -> None:
    first = ok_data(api.post("/api/opportunity", json={"name": "Twice", "amount": 5}))
    second = ok_data(api.post("/api/opportunity", json={"name": "Twice", "amount": 5}))
    assert first["id"] != second["id"]
    assert [o["name"] for o in all_opportunities(api)].count("Twice") == 2


def test_the_first_answer_is_stored_in_the_database_for_24_hours(
    api: Api, database_url: str
) -> None:
    key = new_key()
    before = datetime.now(UTC)
    first = post_contact(api, {"name": "Stored", "email": unique_email()}, key)
    ok_data(first, CREATED)
    rows = stored_rows(database_url, key)
    assert len(rows) == 1
    account_id, method, path, status, body, created_at, expires_at = rows[0]
    assert (account_id, method, path, status) == (
        api.account.account_id,
        "POST",
        "/api/contact",
        200,
    )
    assert body == first.text
    assert before - timedelta(seconds=5) <= created_at <= datetime.now(UTC)
    assert expires_at - created_at == timedelta(hours=24)


def test_a_new_app_process_replays_from_the_database(
    api: Api, settings: Settings, database_url: str
) -> None:
    key = new_key()
    body = {"name": "Restarted", "email": unique_email()}
    first = post_contact(api, body, key)
    ok_data(first, CREATED)
    with TestClient(create_app(settings)) as fresh:
        again = fresh.post("/api/contact", json=body, headers={**api.headers(), **with_key(key)})
    assert_replay(first, again)
    assert len(contacts_named(api, "Restarted")) == 1


# --- the body, compared as parsed JSON --------------------------------------------------------


@pytest.mark.parametrize(
    ("first_raw", "second_raw"),
    [
        (b'{"name":"Spell","amount":1.50,"description":"x"}',
         b'{ "description" : "x",\n  "amount" : 1.5,  "name" : "Spell" }'),
        (b'{"name":"Spell","amount":1}', b'{"amount":1.0,"name":"Spell"}'),
        (b'{"name":"Spell","amount":2.50}', b'{"name":"Spell","amount":2.5000}'),
        (b'{"name":"Spell","amount":100}', b'{"name":"Spell","amount":1e2}'),
    ],
)  # fmt: skip
def test_key_order_spacing_and_number_spelling_do_not_count(
    api: Api, first_raw: bytes, second_raw: bytes
) -> None:
    key = new_key()
    first = post_raw(api, "/api/opportunity", first_raw, key)
    ok_data(first, "Opportunity successfully created.")
    again = post_raw(api, "/api/opportunity", second_raw, key)
    assert_replay(first, again)
    assert len(all_opportunities(api)) == 1


def test_nested_values_are_compared_as_parsed_json(api: Api) -> None:
    key = new_key()
    email = unique_email()
    first = post_raw(
        api,
        "/api/contact",
        b'{"name":"Nested","email":"%s","variables":[{"name":"a","value":2.50}]}' % email.encode(),
        key,
    )
    ok_data(first, CREATED)
    again = post_raw(
        api,
        "/api/contact",
        b'{"variables":[{"value":2.5,"name":"a"}],"email":"%s","name":"Nested"}' % email.encode(),
        key,
    )
    assert_replay(first, again)


@pytest.mark.parametrize(
    "second",
    [
        {"name": "Deal", "amount": 2},  # another value
        {"name": "Deal", "amount": "1"},  # a string is not the number
        {"name": "Deal", "amount": 1, "description": ""},  # an extra key
        {"name": "Deal"},  # a missing key
        {"name": "Deal", "amount": 1.0001},
        {"name": "deal", "amount": 1},
    ],
)
def test_same_key_with_another_body_is_409_and_creates_nothing(
    api: Api, second: dict[str, Any]
) -> None:
    key = new_key()
    first = api.post("/api/opportunity", json={"name": "Deal", "amount": 1}, headers=with_key(key))
    ok_data(first)
    refused = api.post("/api/opportunity", json=second, headers=with_key(key))
    error(refused, 409, "IDEMPOTENCY_KEY_REUSED")
    assert REPLAYED not in refused.headers
    assert len(all_opportunities(api)) == 1
    # The first answer is still the one the key replays.
    again = api.post("/api/opportunity", json={"name": "Deal", "amount": 1}, headers=with_key(key))
    assert_replay(first, again)


def test_array_order_is_part_of_the_body(api: Api) -> None:
    one, two = api.add_tag(), api.add_tag()
    key = new_key()
    email = unique_email()
    first = post_contact(api, {"name": "T", "email": email, "tags": [one["id"], two["id"]]}, key)
    ok_data(first, CREATED)
    refused = post_contact(api, {"name": "T", "email": email, "tags": [two["id"], one["id"]]}, key)
    error(refused, 409, "IDEMPOTENCY_KEY_REUSED")
    assert len(all_contacts(api)) == 1


# --- scope: account, method and path ------------------------------------------------------------


def test_the_same_key_on_another_path_is_a_new_request(api: Api) -> None:
    key = new_key()
    contact = post_contact(api, {"name": "Scoped", "email": unique_email()}, key)
    ok_data(contact, CREATED)
    opportunity = api.post(
        "/api/opportunity", json={"name": "Scoped", "amount": 3}, headers=with_key(key)
    )
    assert ok_data(opportunity, "Opportunity successfully created.")["opportunity"]["name"] == (
        "Scoped"
    )
    assert_fresh(opportunity)
    # Each path keeps its own first answer.
    again = api.post(
        "/api/opportunity", json={"name": "Scoped", "amount": 3}, headers=with_key(key)
    )
    assert_replay(opportunity, again)
    activity = api.post(
        f"/api/contact/{ok_data(contact)['id']}/activities",
        json={"content": "note"},
        headers=with_key(key),
    )
    ok_data(activity, "The activity was recorded successfully.")
    assert_fresh(activity)


def test_the_same_key_of_another_account_is_a_new_request(api: Api, other_api: Api) -> None:
    key = new_key()
    body = {"name": "Shared key", "email": unique_email()}
    mine = post_contact(api, body, key)
    theirs = post_contact(other_api, body, key)
    mine_contact = ok_data(mine, CREATED)["contact"]
    their_contact = ok_data(theirs, CREATED)["contact"]
    assert_fresh(theirs)
    assert mine_contact["id"] != their_contact["id"]
    assert their_contact["workspaceId"] == other_api.ws
    assert len(contacts_named(other_api, "Shared key")) == 1
    # And another body under that key there is not a conflict with my first request.
    assert_replay(mine, post_contact(api, body, key))
    assert_replay(theirs, post_contact(other_api, body, key))


def test_another_key_of_the_same_account_replays(api: Api, database_url: str) -> None:
    _, second_key = add_key(database_url, api.account.account_id)
    key = new_key()
    body = {"name": "Same account", "email": unique_email()}
    first = post_contact(api, body, key)
    ok_data(first, CREATED)
    again = post_contact(api, body, key, auth=second_key)
    assert_replay(first, again)
    assert len(contacts_named(api, "Same account")) == 1


def test_a_put_ignores_the_key(api: Api) -> None:
    """Only POST is made idempotent by the key; an update runs every time it is sent."""
    contact = api.create_contact(name="Put")
    key = new_key()
    body = {"paramToUpdate": "isRead", "isRead": True}
    first = api.update_contact(contact["id"], body, headers=with_key(key))
    second = api.update_contact(contact["id"], body, headers=with_key(key))
    assert (first.headers["etag"], second.headers["etag"]) == ('"2"', '"3"')
    assert_fresh(second)


# --- which answers are stored ------------------------------------------------------------------


def test_a_422_is_stored_and_replayed(api: Api, database_url: str) -> None:
    key = new_key()
    body = {"name": "Bad", "amount": -1}
    first = api.post("/api/opportunity", json=body, headers=with_key(key))
    assert error_fields(error(first, 422, "VALIDATION_ERROR")) == ["amount"]
    again = api.post("/api/opportunity", json=body, headers=with_key(key))
    assert_replay(first, again)
    assert [row[3] for row in stored_rows(database_url, key)] == [422]
    assert all_opportunities(api) == []


def test_a_409_is_stored_and_replayed_even_once_the_conflict_is_gone(api: Api) -> None:
    email = unique_email()
    existing = api.create_contact(name="Existing", email=email)
    key = new_key()
    body = {"name": "Duplicate", "email": email}
    first = post_contact(api, body, key)
    assert error(first, 409, "DUPLICATE_CONTACT")["data"]["existingId"] == existing["id"]
    ok_data(
        api.post("/api/contact/delete-batch", json={"contactIds": [{"ids": existing["id"]}]}),
        "Contacts deleted successfully.",
    )
    # Sent again without the key it would now succeed; with the key it is the stored 409.
    again = post_contact(api, body, key)
    assert_replay(first, again)
    assert all_contacts(api) == []


def test_a_400_is_stored_and_replayed(api: Api) -> None:
    key = new_key()
    body = {"name": "X", "email": unique_email(), "unknownField": 1}
    first = post_contact(api, body, key)
    error(first, 400, "BAD_REQUEST")
    assert_replay(first, post_contact(api, body, key))
    assert all_contacts(api) == []


async def test_a_429_is_not_stored(settings: Settings, database_url: str) -> None:
    account = await asyncio.to_thread(new_account, database_url)
    limited = settings.model_copy(update={"rate_limit": 1, "rate_burst": 1})
    async with app_client(limited) as client:
        api = AsyncApi(client, account)
        key = new_key()
        body = {"name": "Limited", "email": unique_email()}
        ok_data(await api.get(f"/api/workspace/{api.ws}"))  # spends the only token
        refused = await api.post("/api/contact", json=body, headers=with_key(key))
        error(refused, 429, "RATE_LIMITED")
        assert await asyncio.to_thread(stored_rows, database_url, key) == []
        await asyncio.sleep(1.1)  # one token back (1 per second)
        created = await api.post("/api/contact", json=body, headers=with_key(key))
        ok_data(created, CREATED)
        assert_fresh(created)
        rows = await asyncio.to_thread(stored_rows, database_url, key)
        assert [row[3] for row in rows] == [200]


async def test_a_5xx_is_not_stored_and_the_retry_runs(
    settings: Settings,
    database_url: str,
    backend: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """While the database cannot take the write the answer is 503; nothing is kept of it, so
    the retry with the same key is done for real."""
    if backend != "postgresql":
        await _a_5xx_is_not_stored(settings, database_url, backend)
        return
    # The write is blocked by a transaction held for a second, in a database of its own: the
    # feed's gate keeps that database's readers behind it (tests/events/test_feed_gate.py).
    with migrated_database(backend, tmp_path_factory) as own:
        await _a_5xx_is_not_stored(settings.model_copy(update={"database_url": own}), own, backend)


async def _a_5xx_is_not_stored(settings: Settings, database_url: str, backend: str) -> None:
    account = await asyncio.to_thread(new_account, database_url)
    impatient = settings.model_copy(
        update={"db_statement_timeout": 1, "sqlite_busy_timeout_ms": 200}
    )
    async with app_client(impatient) as client:
        api = AsyncApi(client, account)
        ok_data(await api.get(f"/api/workspace/{api.ws}"))
        key = new_key()
        body = {"name": "Retried", "email": unique_email()}
        async with _writes_blocked(database_url, backend):
            failed = await api.post("/api/contact", json=body, headers=with_key(key))
        error(failed, 503, "SERVICE_UNAVAILABLE")
        assert int(failed.headers["retry-after"]) >= 1
        assert await asyncio.to_thread(stored_rows, database_url, key) == []
        retried = await api.post("/api/contact", json=body, headers=with_key(key))
        ok_data(retried, CREATED)
        assert_fresh(retried)
        again = await api.post("/api/contact", json=body, headers=with_key(key))
        assert_replay(retried, again)
        assert [c["name"] for c in await api.list_all("/api/contact")] == ["Retried"]


class _writes_blocked:
    """Another connection holds the lock the app's write needs (SQLite: the write lock;
    PostgreSQL: an exclusive lock on `contacts`, taken after the key's claim)."""

    def __init__(self, database_url: str, backend: str) -> None:
        self.database_url = database_url
        self.backend = backend
        self.release: Callable[[], Any] | None = None

    async def __aenter__(self) -> None:
        if self.backend == "sqlite":
            import sqlite3

            path = self.database_url.removeprefix("sqlite:///")
            # The app's background work (event publishing, webhook claims) takes the write
            # lock for short moments too, on this event loop: wait for it in a thread, so
            # that the loop can run it to its commit.
            conn = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
            await asyncio.to_thread(conn.execute, "BEGIN IMMEDIATE")

            async def release_sqlite() -> None:
                conn.rollback()
                conn.close()

            self.release = release_sqlite
            return
        pg = await asyncpg.connect(self.database_url)
        tx = pg.transaction()
        await tx.start()
        await pg.execute("LOCK TABLE contacts IN ACCESS EXCLUSIVE MODE")

        async def release_pg() -> None:
            await tx.rollback()
            await pg.close()

        self.release = release_pg

    async def __aexit__(self, *exc: object) -> None:
        assert self.release is not None
        await self.release()


# --- expiry and key syntax ------------------------------------------------------------------------


def test_an_expired_key_is_ignored_and_the_request_runs_again(api: Api, database_url: str) -> None:
    key = new_key()
    body = {"name": "Expiring", "email": unique_email()}
    first = post_contact(api, body, key)
    first_id = ok_data(first, CREATED)["id"]
    t = idempotency_keys.c
    sql(
        database_url,
        update(idempotency_keys)
        .where(t.key == key)
        .values(expires_at=datetime.now(UTC) - timedelta(seconds=1)),
    )
    # The email is taken by the first contact, so a new run answers 409, not the stored 200.
    rerun = post_contact(api, body, key)
    error(rerun, 409, "DUPLICATE_CONTACT")
    assert_fresh(rerun)
    rows = stored_rows(database_url, key)
    assert [row[3] for row in rows] == [409]
    assert rows[0][6] > datetime.now(UTC) + timedelta(hours=23)
    # A body that can succeed: after expiry, a second record is created.
    key2 = new_key()
    opp = api.post("/api/opportunity", json={"name": "Exp", "amount": 1}, headers=with_key(key2))
    first_opp = ok_data(opp)["id"]
    sql(
        database_url,
        update(idempotency_keys)
        .where(t.key == key2)
        .values(expires_at=datetime.now(UTC) - timedelta(hours=1)),
    )
    rerun_opp = api.post(
        "/api/opportunity", json={"name": "Exp", "amount": 1}, headers=with_key(key2)
    )
    assert ok_data(rerun_opp)["id"] != first_opp
    assert_fresh(rerun_opp)
    assert first_id in [c["id"] for c in all_contacts(api)]
    assert len(all_opportunities(api)) == 2


@pytest.mark.parametrize(
    "key",
    ["k" * 256, "has space", "tab\there", "", "caf\u00e9"],
    ids=["256-chars", "space", "tab", "empty", "non-ascii"],
)
def test_an_invalid_key_is_400_and_nothing_is_done(api: Api, key: str) -> None:
    response = api.http.post(
        "/api/contact",
        json={"name": "Invalid key", "email": unique_email()},
        headers={**api.headers(), "Idempotency-Key": key.encode("latin-1")},
    )
    body = error(response, 400, "BAD_REQUEST")
    assert error_fields(body) == ["Idempotency-Key"]
    assert all_contacts(api) == []


def test_the_longest_valid_key_is_accepted(api: Api) -> None:
    key = "~" + "K" * 253 + "!"
    assert len(key) == 255
    body = {"name": "Long key", "email": unique_email()}
    first = post_contact(api, body, key)
    ok_data(first, CREATED)
    assert_replay(first, post_contact(api, body, key))


# --- concurrency ------------------------------------------------------------------------------


async def test_concurrent_requests_with_one_key_create_one_record(aapi: AsyncApi) -> None:
    key = new_key()
    body = {"name": "Raced", "email": unique_email(), "variables": [{"name": "n", "value": 1}]}
    responses = await asyncio.gather(
        *(aapi.post("/api/contact", json=body, headers=with_key(key)) for _ in range(16))
    )
    for response in responses:
        ok_data(response, CREATED)
    fresh = [r for r in responses if REPLAYED not in r.headers]
    assert len(fresh) == 1, [r.headers.get(REPLAYED) for r in responses]
    for response in responses:
        if response is not fresh[0]:
            assert_replay(fresh[0], response)
    contacts = await aapi.list_all("/api/contact")
    assert [c["id"] for c in contacts] == [fresh[0].json()["data"]["id"]]


async def test_concurrent_opportunity_creates_with_one_key_draw_one_code(aapi: AsyncApi) -> None:
    key = new_key()
    responses = await asyncio.gather(
        *(
            aapi.post(
                "/api/opportunity", json={"name": "Raced", "amount": 1}, headers=with_key(key)
            )
            for _ in range(16)
        )
    )
    assert {r.content for r in responses} == {responses[0].content}
    assert all(r.status_code == 200 for r in responses)
    records = await aapi.list_all("/api/opportunity")
    assert len(records) == 1
    assert records[0]["opportCode"].endswith("-0001")
    # The next create (without a key) takes the next number: no number was burnt.
    created = await aapi.create_opportunity(name="Next")
    assert created["opportCode"].endswith("-0002")


# --- every POST route ----------------------------------------------------------------------------


def _workspace_items(api: Api, kind: str) -> int:
    return len(api.workspace()[kind])


def _route_cases(api: Api, database_url: str) -> dict[str, tuple[str, Any, Callable[[], int]]]:
    """(path, body, how many records of that kind exist) for each POST route."""
    contact = api.create_contact()
    opportunity = api.create_opportunity()
    victim = api.create_contact()
    return {
        "tag": (f"/api/workspace/{api.ws}/tags", {"name": "idem-tag", "color": "#000000"},
                lambda: _workspace_items(api, "tags")),
        "agent": (f"/api/workspace/{api.ws}/agents", {"name": "Idem", "email": unique_email()},
                  lambda: _workspace_items(api, "agents")),
        "segmentation": (f"/api/workspace/{api.ws}/segmentations", {"name": "idem-seg"},
                         lambda: _workspace_items(api, "segmentations")),
        "stage": (f"/api/workspace/{api.ws}/stages", {"kind": "opportunity", "name": "idem"},
                  lambda: _workspace_items(api, "opportunityStages")),
        "workspace": ("/api/workspace", {"name": "Idempotent workspace"},
                      lambda: int(sql(database_url,
                                      "SELECT count(*) FROM workspaces WHERE account_id = :a",
                                      {"a": api.account.account_id})[0][0])),
        "contact activity": (
            f"/api/contact/{contact['id']}/activities", {"content": "once"},
            lambda: len(ok_data(api.get(f"/api/contact/{contact['id']}/activities"))["data"]),
        ),
        "opportunity activity": (
            f"/api/opportunity/{opportunity['id']}/agent/activities",
            {"content": "once", "categoryType": "Meeting"},
            lambda: len(ok_data(api.get(f"/api/opportunity/{opportunity['id']}"))["data"][0][
                "activities"]),
        ),
        "delete batch": (
            "/api/contact/delete-batch", {"contactIds": [{"ids": victim["id"]}]},
            lambda: 2 - len(all_contacts(api)),  # deleted of the two contacts made here
        ),
    }  # fmt: skip


@pytest.mark.parametrize(
    "route",
    [
        "tag",
        "agent",
        "segmentation",
        "stage",
        "workspace",
        "contact activity",
        "opportunity activity",
        "delete batch",
    ],
)
def test_every_post_route_is_idempotent(api: Api, database_url: str, route: str) -> None:
    path, body, count = _route_cases(api, database_url)[route]
    before = count()
    key = new_key()
    first = api.post(path, json=body, headers=with_key(key))
    ok_data(first)
    after_first = count()
    assert after_first == before + 1
    again = api.post(path, json=body, headers=with_key(key))
    assert_replay(first, again)
    assert count() == after_first
