"""Contract D.2 (the events feed) and D.3 (record history)."""

from __future__ import annotations

import asyncio
import threading
import time
from datetime import timedelta
from typing import Any

from sqlalchemy import update

from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.db.schema import events
from chatcrm.events import retention
from tests.client import Api, error, error_fields, ok_data
from tests.events.test_outbox import all_events, history


def feed(api: Api, **params: str) -> dict:
    data = ok_data(api.get("/api/events", params=params), "Successfully obtained list.")
    assert list(data) == ["workspaceId", "events", "next"]
    assert data["workspaceId"] == api.ws
    return data


def test_empty_feed_and_next(api: Api) -> None:
    assert feed(api) == {"workspaceId": api.ws, "events": [], "next": None}
    contact = api.create_contact()
    page = feed(api)
    assert [e["recordId"] for e in page["events"]] == [contact["id"]]
    assert page["next"] == page["events"][0]["id"]
    # Nothing after it: the same `after` comes back as next.
    assert feed(api, after=page["next"]) == {
        "workspaceId": api.ws,
        "events": [],
        "next": page["next"],
    }


def test_after_end_starts_from_the_feeds_current_end(api: Api) -> None:
    """`after=end` (docs/api.md 2.23): nothing of the past, `next` naming the last event, and
    from it every later event; an empty workspace's end is null; a history has no end."""
    assert feed(api, after="end") == {"workspaceId": api.ws, "events": [], "next": None}
    contacts = [api.create_contact() for _ in range(3)]
    last = all_events(api)[-1]["id"]
    for types in ({}, {"types": "opportunity.*"}):
        assert feed(api, after="end", **types) == {
            "workspaceId": api.ws,
            "events": [],
            "next": last,
        }
    api.set_contact(contacts[0]["id"], isRead=True)
    page = feed(api, after=last)
    assert [(e["type"], e["recordId"]) for e in page["events"]] == [
        ("contact.updated", contacts[0]["id"])
    ]
    body = error(
        api.get(f"/api/contact/{contacts[0]['id']}/history", params={"after": "end"}),
        400,
        "INVALID_CURSOR",
    )
    assert error_fields(body) == ["after"]


def test_paging_sees_every_event_once_in_order(api: Api) -> None:
    contacts = [api.create_contact() for _ in range(7)]
    for c in contacts[:3]:
        api.set_contact(c["id"], isRead=True)
    seen: list[str] = []
    after = None
    for size in ("1", "2", "3", "100", "5"):
        page = feed(api, pageSize=size, **({"after": after} if after else {}))
        assert len(page["events"]) <= int(size)
        seen.extend(e["id"] for e in page["events"])
        after = page["next"]
    assert len(seen) == len(set(seen)) == 10
    assert seen == [e["id"] for e in all_events(api)]
    assert seen == sorted(seen, key=seen.index)


def test_types_and_families(api: Api) -> None:
    contact = api.create_contact()
    api.set_contact(contact["id"], isRead=True)
    deal = api.create_opportunity()
    types = lambda **q: [e["type"] for e in feed(api, **q)["events"]]  # noqa: E731
    assert types(types="contact.*") == ["contact.created", "contact.updated"]
    assert types(types="opportunity.*") == ["opportunity.created"]
    assert types(types="contact.updated,opportunity.created") == [
        "contact.updated",
        "opportunity.created",
    ]
    assert types(types=" contact.created , opportunity.* ") == [
        "contact.created",
        "opportunity.created",
    ]
    assert types(recordId=deal["id"]) == ["opportunity.created"]
    assert types(recordId=contact["id"], types="contact.updated") == ["contact.updated"]
    # `*` is every type, as in a webhook's eventTypes.
    assert (
        types(types="*")
        == types()
        == [
            "contact.created",
            "contact.updated",
            "opportunity.created",
        ]
    )
    body = error(
        api.get("/api/events", params={"types": "contact.*,lead.created"}), 422, "VALIDATION_ERROR"
    )
    assert "lead.created" in body["message"] or "lead.created" in str(body["data"])


def test_bad_parameters(api: Api) -> None:
    body = error(
        api.get("/api/events", params={"pageSize": "0", "wait": "31", "types": "x"}),
        422,
        "VALIDATION_ERROR",
    )
    assert sorted(error_fields(body)) == ["pageSize", "types", "wait"]
    # Seconds in ASCII decimal only, as pageSize: none of what float() would also take.
    for wait in ("-1", "nan", "abc", "inf", "1_0", "1e1", " 1 ", "\uff11", "\u0661", "+1"):
        error(api.get("/api/events", params={"wait": wait}), 422, "VALIDATION_ERROR")
    error(api.get("/api/events", params={"pageSize": "101"}), 422, "VALIDATION_ERROR")
    error(api.get("/api/events", params={"cursor": "x"}), 400, "BAD_REQUEST")
    error(api.get("/api/events", params={"after": "evt_nope"}), 400, "INVALID_CURSOR")
    error(api.get("/api/events", params={"workspaceId": "other"}), 403, "FORBIDDEN")


def test_webhook_test_events_and_other_records_are_not_cursors_of_a_history(api: Api) -> None:
    a, b = api.create_contact(), api.create_contact()
    first_of_b = history(api, "contact", b["id"])[0]["id"]
    body = error(
        api.get(f"/api/contact/{a['id']}/history", params={"after": first_of_b}),
        400,
        "INVALID_CURSOR",
    )
    # It is an event of the workspace: the answer says what is wrong with it.
    assert "is not an event of this record" in body["message"], body["message"]
    assert body["data"]["errors"][0]["message"].startswith("is unknown, of another record")


def test_history_pages_and_survives_deletion(api: Api) -> None:
    deal = api.create_opportunity()
    for amount in (1, 2, 3):
        api.set_opportunity(deal["id"], amount=amount)
    ok_data(api.delete(f"/api/opportunity/{deal['id']}"))
    page = ok_data(api.get(f"/api/opportunity/{deal['id']}/history", params={"pageSize": "2"}))
    assert page["id"] == deal["id"] and len(page["events"]) == 2
    rest = ok_data(
        api.get(f"/api/opportunity/{deal['id']}/history", params={"after": page["next"]})
    )
    versions = [e["recordVersion"] for e in page["events"] + rest["events"]]
    assert versions == [1, 2, 3, 4, 5]
    assert rest["events"][-1]["type"] == "opportunity.deleted"
    empty = ok_data(
        api.get(f"/api/opportunity/{deal['id']}/history", params={"after": rest["next"]})
    )
    assert empty["events"] == [] and empty["next"] == rest["next"]
    error(api.get("/api/opportunity/nope/history"), 404, "OPPORTUNITY_NOT_FOUND")
    error(
        api.get("/api/contact/01a2171a-6503-76f1-9d1a-7587fcc9ac74/history"),
        404,
        "CONTACT_NOT_FOUND",
    )
    error(api.get(f"/api/contact/{deal['id']}/history"), 404, "CONTACT_NOT_FOUND")


def test_wait_answers_when_an_event_is_committed(api: Api) -> None:
    after = feed(api)["next"]
    contact = api.create_contact()
    after = feed(api, **({"after": after} if after else {}))["next"]
    started = time.monotonic()
    assert feed(api, after=after, wait="0.5")["events"] == []
    assert 0.45 <= time.monotonic() - started < 5

    def later() -> None:
        time.sleep(0.7)
        api.set_contact(contact["id"], isRead=True)

    writer = threading.Thread(target=later)
    writer.start()
    started = time.monotonic()
    page = feed(api, after=after, wait="20")
    took = time.monotonic() - started
    writer.join()
    assert [e["type"] for e in page["events"]] == ["contact.updated"]
    assert 0.6 <= took < 5, took


def test_every_write_of_an_event_wakes_the_publisher(api: Api) -> None:
    """The publisher wakes the feed's long polls and queues the first deliveries after a
    commit that wrote events. PostgreSQL's Update Contact and Update Opportunity are one
    statement, committed as it runs, outside a transaction of the request's: they did not
    wake it, and a long poll answered at its next 1 s look (0.4 s after the write, where
    docs/api.md 2.23 says about 0.25 s) and deliveries waited for the 0.5 s idle round."""
    db: Any = api.http.app.state.db  # type: ignore[attr-defined]
    woken: list[str] = []
    wake, db.on_events_committed = db.on_events_committed, lambda: woken.append("woken")
    try:
        contact = api.create_contact()
        deal = api.create_opportunity(name="Deal", amount=1)
        for write in (
            lambda: api.set_contact(contact["id"], isRead=True),
            lambda: ok_data(
                api.put(
                    f"/api/opportunity?id={deal['id']}",
                    json={"paramToUpdate": "amount", "amount": 2},
                )
            ),
        ):
            woken.clear()
            write()
            assert woken, "the write's events did not wake the publisher"
    finally:
        db.on_events_committed = wake


def test_a_waiting_poll_of_a_key_revoked_meanwhile_gets_no_event(api: Api) -> None:
    """I: a revoked key is refused within 1 s, also by a poll that was already waiting
    when it was revoked (it handed the next event out)."""
    made = ok_data(
        api.post("/api/key", json={"name": "follower", "scopes": ["events:read"]}, workspace=None)
    )
    after = ok_data(api.get("/api/events", params={"after": "end"}, auth=made["apiKey"]))["next"]

    def later() -> None:
        time.sleep(0.7)
        ok_data(api.delete(f"/api/key/{made['id']}", workspace=None))
        time.sleep(0.3)
        api.create_contact()

    writer = threading.Thread(target=later)
    writer.start()
    params = {"wait": "20", **({"after": after} if after else {})}
    answer = api.get("/api/events", params=params, auth=made["apiKey"])
    writer.join()
    error(answer, 401, "UNAUTHORIZED")


def test_expired_events_leave_the_feed(api: Api, database_url: str) -> None:
    old = api.create_contact()
    new = api.create_contact()
    old_event = history(api, "contact", old["id"])[0]["id"]

    async def age_and_purge() -> None:
        db = Database(Settings(database_url=database_url))
        try:
            async with db.transaction() as conn:
                await conn.execute(
                    update(events)
                    .where(events.c.id == old_event)
                    .values(created_at=utcnow() - timedelta(days=31))
                )
            await retention.purge(db, days=30)
        finally:
            await db.dispose()

    asyncio.run(age_and_purge())
    error(api.get("/api/events", params={"after": old_event}), 400, "INVALID_CURSOR")
    assert [e["recordId"] for e in all_events(api)] == [new["id"]]
    assert history(api, "contact", old["id"]) == []
