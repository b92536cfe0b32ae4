"""No lost updates (contract C): versions and ETags, `If-Match`, and truly concurrent writers.

The concurrent tests fire their requests with `asyncio.gather` at an app of their own, so
the updates of one record overlap in the database (row lock on PostgreSQL, the write lock
on SQLite); every change must survive, and every answer must have seen the one before it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import httpx
import pytest

from tests.client import Api, error, ok_data, unique_email, unique_phone
from tests.reliability.conftest import AsyncApi

N = 32
CONTACT_UPDATED = "Contact updated successfully."
OPPORTUNITY_UPDATED = "Opportunity successfully updated."
ACTIVITY_RECORDED = "The activity was recorded successfully."


def version(response: httpx.Response) -> int:
    tag = response.headers["etag"]
    assert tag.startswith('"') and tag.endswith('"'), tag
    return int(tag[1:-1])


def precondition_failed(response: httpx.Response) -> None:
    body = error(response, 412, "PRECONDITION_FAILED")
    assert body["data"] is None


# --- ETag and If-Match, one client ---------------------------------------------------------------


def test_contact_etag_names_the_version_in_every_shape(api: Api) -> None:
    created = api.post("/api/contact", json={"name": "Ana", "email": unique_email()})
    contact = ok_data(created, "Contact created successfully.")["contact"]
    assert created.headers["etag"] == '"1"'
    assert api.get_contact(contact["id"]).headers["etag"] == '"1"'
    updated = api.update_contact(contact["id"], {"paramToUpdate": "name", "name": "Bea"})
    ok_data(updated, CONTACT_UPDATED)
    assert updated.headers["etag"] == '"2"'
    assert api.get_contact(contact["id"]).headers["etag"] == '"2"'  # read shape, same tag
    ok_data(api.update_contact(contact["id"], {"paramToUpdate": "isRead", "isRead": True}))
    assert api.get_contact(contact["id"]).headers["etag"] == '"3"'


def test_opportunity_etag_names_the_version_and_activities_move_it(api: Api) -> None:
    created = api.post("/api/opportunity", json={"name": "Deal", "amount": 10})
    opportunity = ok_data(created, "Opportunity successfully created.")["opportunity"]
    assert created.headers["etag"] == '"1"'
    path = f"/api/opportunity/{opportunity['id']}"
    assert api.get(path).headers["etag"] == '"1"'
    updated = api.update_opportunity(opportunity["id"], {"paramToUpdate": "amount", "amount": 20})
    ok_data(updated, OPPORTUNITY_UPDATED)
    assert updated.headers["etag"] == '"2"'
    ok_data(
        api.post(f"{path}/agent/activities", json={"content": "call", "categoryType": "Calls"}),
        ACTIVITY_RECORDED,
    )
    assert api.get(path).headers["etag"] == '"3"'


def test_stale_if_match_on_a_contact_is_412_and_changes_nothing(api: Api) -> None:
    contact = api.create_contact(name="Ana", variables=[{"name": "a", "value": 1}])
    ok_data(api.update_contact(contact["id"], {"paramToUpdate": "lastname", "lastname": "Lee"}))
    before = api.get_contact(contact["id"])
    assert before.headers["etag"] == '"2"'
    for stale in ('"1"', '"3"', "1", 'W/"2"', '"1", "3"'):
        body = {
            "paramToUpdate": "name,variables",
            "name": "Stale",
            "variables": [{"name": "b", "value": 2}],
        }
        precondition_failed(api.update_contact(contact["id"], body, headers={"If-Match": stale}))
    after = api.get_contact(contact["id"])
    assert after.headers["etag"] == '"2"'
    assert after.json() == before.json()
    # Nothing was merged into the variables either.
    current = ok_data(
        api.update_contact(contact["id"], {"paramToUpdate": "variables", "variables": []}),
        CONTACT_UPDATED,
    )["contact"]
    assert current["variables"] == [{"name": "a", "value": 1}]
    assert current["name"] == "Ana"


def test_current_or_wildcard_if_match_applies_the_update(api: Api) -> None:
    contact = api.create_contact(name="Ana")
    first = api.update_contact(
        contact["id"], {"paramToUpdate": "name", "name": "Bea"}, headers={"If-Match": '"1"'}
    )
    assert ok_data(first, CONTACT_UPDATED)["contact"]["name"] == "Bea"
    assert first.headers["etag"] == '"2"'
    listed = api.update_contact(
        contact["id"], {"paramToUpdate": "name", "name": "Cid"}, headers={"If-Match": '"9", "2"'}
    )
    assert ok_data(listed, CONTACT_UPDATED)["contact"]["name"] == "Cid"
    wildcard = api.update_contact(
        contact["id"], {"paramToUpdate": "name", "name": "Dan"}, headers={"If-Match": "*"}
    )
    assert ok_data(wildcard, CONTACT_UPDATED)["contact"]["name"] == "Dan"
    assert wildcard.headers["etag"] == '"4"'


def test_stale_if_match_on_an_opportunity_is_412_and_changes_nothing(api: Api) -> None:
    opportunity = api.create_opportunity(name="Deal", amount=10)
    path = f"/api/opportunity/{opportunity['id']}"
    ok_data(api.update_opportunity(opportunity["id"], {"paramToUpdate": "amount", "amount": 20}))
    before = api.get(path)
    precondition_failed(
        api.update_opportunity(
            opportunity["id"],
            {"paramToUpdate": "name,amount", "name": "Stale", "amount": 99},
            headers={"If-Match": '"1"'},
        )
    )
    # A stale delete is refused too, and the opportunity stays.
    precondition_failed(api.delete(path, headers={"If-Match": '"1"'}))
    after = api.get(path)
    assert after.headers["etag"] == before.headers["etag"] == '"2"'
    assert after.json() == before.json()
    record = ok_data(after)["data"][0]
    assert (record["name"], record["amount"], record["statusId"]) == ("Deal", 20, 1)
    good = api.update_opportunity(
        opportunity["id"], {"paramToUpdate": "name", "name": "Fresh"}, headers={"If-Match": '"2"'}
    )
    assert ok_data(good, OPPORTUNITY_UPDATED)["oportunity"]["name"] == "Fresh"
    ok_data(api.delete(path, headers={"If-Match": '"3"'}), "Opportunity successfully deleted.")
    error(api.get(path), 404, "OPPORTUNITY_NOT_FOUND")


# --- concurrent writers without If-Match: every change survives ----------------------------


async def test_concurrent_updates_of_one_contact_all_survive(aapi: AsyncApi) -> None:
    tag = await aapi.add_tag()
    agent = await aapi.add_agent()
    segmentation = await aapi.add_segmentation()
    contact = await aapi.create_contact(
        name="Ana", variables=[{"name": "kept", "value": "yes"}], tags=[]
    )
    changes: dict[str, Any] = {
        "name": "Renamed",
        "lastname": "Lastname",
        "email": unique_email(),
        "avatarColor": "#123456",
        "isRead": True,
        "isBotEnabled": False,
        "lastMessage": "last words",
        "files": ["https://example.com/a.pdf", "ref-2"],
        "tags": [tag["id"]],
        "segmentationId": segmentation["id"],
        "assignedAgentId": agent["id"],
        "orderInCards": 7,
        "internalWhatsappNumber": unique_phone(),
        "isSolved": True,
    }
    names = [f"var{i:02d}" for i in range(N - len(changes))]
    bodies: list[dict[str, Any]] = [{"paramToUpdate": f, f: value} for f, value in changes.items()]
    bodies += [
        {"paramToUpdate": "variables", "variables": [{"name": name, "value": i}]}
        for i, name in enumerate(names)
    ]
    assert len(bodies) == N
    responses = await asyncio.gather(*(aapi.update_contact(contact["id"], b) for b in bodies))
    answered = [ok_data(r, CONTACT_UPDATED)["contact"] for r in responses]
    # Each update saw all the ones before it: the versions are 2..33, each exactly once.
    assert sorted(version(r) for r in responses) == list(range(2, N + 2))

    final = ok_data(
        await aapi.update_contact(contact["id"], {"paramToUpdate": "variables", "variables": []}),
        CONTACT_UPDATED,
    )["contact"]
    for (field, value), record in zip(changes.items(), answered[: len(changes)], strict=True):
        assert final[field] == record[field], field
        if field != "tags":
            assert final[field] == value, field
    assert [t["id"] for t in final["tags"]] == [tag["id"]]
    assert final["assignedAgentName"] == agent["name"]
    expected = [{"name": "kept", "value": "yes"}] + [
        {"name": name, "value": i} for i, name in enumerate(names)
    ]
    assert sorted(final["variables"], key=lambda item: item["name"]) == sorted(
        expected, key=lambda item: item["name"]
    )
    read = await aapi.get_contact(contact["id"])
    assert read.headers["etag"] == f'"{N + 2}"'


async def test_concurrent_variables_merge_by_name(aapi: AsyncApi) -> None:
    contact = await aapi.create_contact(name="Ana")
    names = [f"v{i}" for i in range(20)]
    bodies = [
        {"paramToUpdate": "variables", "variables": [{"name": names[i % 20], "value": i}]}
        for i in range(N)
    ]
    responses = await asyncio.gather(*(aapi.update_contact(contact["id"], b) for b in bodies))
    for response in responses:
        ok_data(response, CONTACT_UPDATED)
    assert sorted(version(r) for r in responses) == list(range(2, N + 2))
    final = ok_data(
        await aapi.update_contact(contact["id"], {"paramToUpdate": "variables", "variables": []})
    )["contact"]
    got = {item["name"]: item["value"] for item in final["variables"]}
    assert sorted(got) == sorted(names)
    # A name written twice holds one of its two values (whichever came last), never a gap.
    for i, name in enumerate(names):
        assert got[name] in {j for j in range(N) if j % 20 == i}, name


async def test_concurrent_updates_and_activities_of_one_opportunity_all_survive(
    aapi: AsyncApi,
) -> None:
    agent = await aapi.add_agent()
    segmentation = await aapi.add_segmentation()
    stage = await aapi.add_stage("opportunity")
    contact = await aapi.create_contact(name="Buyer")
    opportunity = await aapi.create_opportunity(name="Deal", amount=100)
    oid = opportunity["id"]
    changes: dict[str, Any] = {
        "name": "Big deal",
        "description": "a long story",
        "amount": 250.5,
        "finalAmount": 300,
        "expirationDate": "2031-01-02T03:04:05.123456Z",
        "files": ["https://example.com/offer.pdf"],
        "stageId": stage["id"],
        "assignedAgentId": agent["id"],
        "segmentationId": segmentation["id"],
        "contactId": contact["id"],
        "winLossStatus": 1,
    }
    contents = [f"note {i}" for i in range(N - len(changes))]
    updates = [
        aapi.update_opportunity(oid, {"paramToUpdate": f, f: value}) for f, value in changes.items()
    ]
    activities = [
        aapi.post(
            f"/api/opportunity/{oid}/agent/activities",
            json={"content": content, "categoryType": "Calls"},
        )
        for content in contents
    ]
    responses = await asyncio.gather(*updates, *activities)
    answered = [ok_data(r, OPPORTUNITY_UPDATED)["oportunity"] for r in responses[: len(changes)]]
    for response in responses[len(changes) :]:
        assert ok_data(response, ACTIVITY_RECORDED) is None
    versions = [version(r) for r in responses[: len(changes)]]
    assert len(set(versions)) == len(changes), versions
    assert all(2 <= v <= N + 1 for v in versions), versions

    read = await aapi.get_opportunity(oid)
    final = ok_data(read)["data"][0]
    assert read.headers["etag"] == f'"{N + 1}"'
    for (field, value), record in zip(changes.items(), answered, strict=True):
        assert final[field] == record[field] == value, field
    assert final["opportStatus"] == 2 and final["winLossDate"] is not None
    assert sorted(a["content"] for a in final["activities"]) == sorted(contents)
    assert final["opportCode"] == opportunity["opportCode"]


# --- concurrent writers with the same If-Match: exactly one wins ---------------------------


async def test_concurrent_if_match_updates_of_a_contact_one_wins(aapi: AsyncApi) -> None:
    contact = await aapi.create_contact(name="Ana")
    responses = await asyncio.gather(
        *(
            aapi.update_contact(
                contact["id"],
                {"paramToUpdate": "name", "name": f"Writer {i}"},
                headers={"If-Match": '"1"'},
            )
            for i in range(N)
        )
    )
    winners = [r for r in responses if r.status_code == 200]
    assert len(winners) == 1, [r.status_code for r in responses]
    for response in responses:
        if response.status_code != 200:
            precondition_failed(response)
    winner = ok_data(winners[0], CONTACT_UPDATED)["contact"]["name"]
    read = await aapi.get_contact(contact["id"])
    assert read.headers["etag"] == '"2"'
    assert ok_data(read)["data"][0]["name"] == winner


async def test_concurrent_if_match_updates_of_an_opportunity_one_wins(aapi: AsyncApi) -> None:
    opportunity = await aapi.create_opportunity(name="Deal", amount=1)
    responses = await asyncio.gather(
        *(
            aapi.update_opportunity(
                opportunity["id"],
                {"paramToUpdate": "amount", "amount": i + 2},
                headers={"If-Match": '"1"'},
            )
            for i in range(N)
        )
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [412] * (N - 1), statuses
    for response in responses:
        if response.status_code != 200:
            precondition_failed(response)
    winner = next(r for r in responses if r.status_code == 200)
    amount = ok_data(winner, OPPORTUNITY_UPDATED)["oportunity"]["amount"]
    read = await aapi.get_opportunity(opportunity["id"])
    assert read.headers["etag"] == '"2"'
    assert ok_data(read)["data"][0]["amount"] == amount


async def test_if_match_read_modify_write_loops_lose_nothing(aapi: AsyncApi) -> None:
    """Clients that read, then write with If-Match and retry on 412, never overwrite."""
    opportunity = await aapi.create_opportunity(name="Counter", amount=0)
    oid = opportunity["id"]

    async def increment() -> int:
        retries = 0
        while True:
            read = await aapi.get_opportunity(oid)
            amount = ok_data(read)["data"][0]["amount"]
            response = await aapi.update_opportunity(
                oid,
                {"paramToUpdate": "amount", "amount": amount + 1},
                headers={"If-Match": read.headers["etag"]},
            )
            if response.status_code == 200:
                return retries
            precondition_failed(response)
            retries += 1

    clients, rounds = 8, 3
    for _ in range(rounds):
        await asyncio.gather(*(increment() for _ in range(clients)))
    final = ok_data(await aapi.get_opportunity(oid))["data"][0]
    assert final["amount"] == rounds * clients


async def test_concurrent_upsert_batches_naming_the_same_contacts_in_other_orders(
    aapi: AsyncApi,
) -> None:
    """Batches matching the same contacts by email, each in its own order, at the same
    moment: every one applies (none is undone as a deadlock, 503), each item counted."""
    emails = [unique_email() for _ in range(12)]
    for email in emails:
        ok_data(await aapi.post("/api/contact", json={"name": "Base", "email": email}))
    rounds = []
    for i in range(N):
        chosen = [emails[(i * 5 + k * 7) % 12] for k in range(4)]
        items = [{"email": e, "lastname": f"L{i}"} for e in chosen]
        rounds.append({"contacts": items, "matchBy": "email"})
    responses = await asyncio.gather(
        *(aapi.post("/api/contact/upsert-batch", json=body) for body in rounds)
    )
    assert [r.status_code for r in responses] == [200] * N, [
        r.text for r in responses if r.status_code != 200
    ][:2]


async def test_concurrent_upsert_batches_creating_the_same_contacts_in_other_orders(
    aapi: AsyncApi,
) -> None:
    """Batches that create the same new contacts (phone and email), each in its own order,
    at the same moment: new contacts are inserted in one order and the contacts a batch
    redoes are locked in that order first, so none is undone as a deadlock (503). One
    batch creates them; the others find them and update or leave them."""
    people = [
        {"name": f"P{i}", "email": unique_email(), "internalWhatsappNumber": unique_phone()}
        for i in range(40)
    ]
    rounds = []
    for i in range(10):
        items = people[i * 7 % 40 :] + people[: i * 7 % 40]
        rounds.append({"contacts": items[::-1] if i % 2 else items, "matchBy": "auto"})
    responses = await asyncio.gather(
        *(aapi.post("/api/contact/upsert-batch", json=body) for body in rounds)
    )
    assert [r.status_code for r in responses] == [200] * len(rounds), [
        r.text for r in responses if r.status_code != 200
    ][:2]
    created = sum(ok_data(r)["created"] for r in responses)
    assert created == len(people)
    for response in responses:
        assert ok_data(response)["failed"] == 0, response.text


async def test_concurrent_upsert_batches_matching_one_contact_by_phone_and_another_by_email(
    aapi: AsyncApi,
) -> None:
    """Batches that match contact X by its phone and Y by its email, and batches that match
    Y by its phone and X by its email, at the same moment: the first kind holds X and waits
    for Y, the second holds Y and waits for X. The database undoes one of each such pair (a
    deadlock); the service runs it again, so every batch applies and answers 200."""
    pairs = []
    for _ in range(4):
        made = []
        for _ in range(2):
            phone, email = unique_phone(), unique_email()
            body = {"name": "Base", "internalWhatsappNumber": phone, "email": email}
            ok_data(await aapi.post("/api/contact", json=body))
            made.append((phone, email))
        pairs.append(made)
    rounds = []
    for i in range(N):
        (x_phone, x_email), (y_phone, y_email) = pairs[i // 2 % len(pairs)]
        first, second = (
            ({"internalWhatsappNumber": x_phone}, {"email": y_email})
            if i % 2
            else ({"internalWhatsappNumber": y_phone}, {"email": x_email})
        )
        items = [{**first, "lastname": f"L{i}"}, {**second, "lastname": f"L{i}"}]
        rounds.append({"contacts": items, "matchBy": "auto"})
    responses = await asyncio.gather(
        *(aapi.post("/api/contact/upsert-batch", json=body) for body in rounds)
    )
    assert [r.status_code for r in responses] == [200] * N, [
        r.text for r in responses if r.status_code != 200
    ][:2]
    for response in responses:
        data = ok_data(response)
        assert data["updated"] + data["unchanged"] == 2, data


def test_an_update_that_waited_for_its_row_shows_what_committed_before_it(
    api: Api, database_url: str, backend: str
) -> None:
    """PostgreSQL's one-statement update renders the record (its tags, its activities) from
    the statement's snapshot. A change committed while it waited for the row (here a tag,
    as another request's tags update writes it) was missing from its answer and event,
    under the version after both. The statement now updates only the row it saw, and the
    locked path takes over: the answer and the event show the tag."""
    if backend != "postgresql":
        pytest.skip("the one-statement update is PostgreSQL's (Citus reads after the lock)")
    tag = api.add_tag()["id"]
    contact = api.create_contact(name="Ana")["id"]

    async def race() -> dict[str, Any]:
        pg = await asyncpg.connect(database_url)
        try:
            tx = pg.transaction()
            await tx.start()
            await pg.execute(
                "UPDATE contacts SET version = version + 1 WHERE workspace_id = $1 AND id = $2",
                api.ws,
                contact,
            )
            await pg.execute(
                "INSERT INTO contact_tags (workspace_id, contact_id, tag_id, position, "
                "assigned_at) VALUES ($1, $2, $3, 0, now())",
                api.ws,
                contact,
                tag,
            )
            loop = asyncio.get_running_loop()
            pending = loop.run_in_executor(None, lambda: api.set_contact(contact, name="Bea"))
            waiting = 0
            for _ in range(200):  # until the update waits for the row this transaction holds
                waiting = await pg.fetchval(
                    "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND datname = current_database()"
                )
                if waiting:
                    break
                await asyncio.sleep(0.02)
            assert waiting, "the update never waited for the row"
            await tx.commit()
            return await pending
        finally:
            await pg.close()

    answered = asyncio.run(race())
    assert answered["name"] == "Bea"
    assert [t["id"] for t in answered["tags"]] == [tag]
    events = ok_data(api.get(f"/api/contact/{contact}/history"))["events"]
    last = events[-1]
    assert last["recordVersion"] == 3 and last["changed"] == ["name"]
    assert [t["id"] for t in last["data"]["tags"]] == [tag]
