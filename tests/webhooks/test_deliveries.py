"""An endpoint's deliveries over HTTP (contract D.4): the test event, the delivery log
(filter, pages, tokens) and replays by event id and by time."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chatcrm.config import Settings
from chatcrm.db.database import Database
from chatcrm.events.outbox import NOT_IN_FEED, write_event
from chatcrm.events.publisher import publish_pending
from chatcrm.webhooks import deliveries
from tests.client import Api, error, error_fields, ok_data
from tests.webhooks import hooks
from tests.webhooks.hooks import DELIVERY_KEYS, NOT_FOUND

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
LISTED = "List obtained successfully."
QUEUED = "Events queued successfully."


def page(api: Api, webhook_id: str, **params: str) -> dict[str, Any]:
    data = ok_data(api.get(f"/api/webhook/{webhook_id}/deliveries", params=params), LISTED)
    assert list(data) == ["webhookId", "continuationToken", "data"]
    assert data["webhookId"] == webhook_id
    return data


def event_ids(data: dict[str, Any]) -> list[str]:
    return [d["eventId"] for d in data["data"]]


def replay(api: Api, webhook_id: str, body: Any) -> int:
    data = ok_data(api.post(f"/api/webhook/{webhook_id}/replay", json=body), QUEUED)
    assert list(data) == ["queued"]
    queued: int = data["queued"]
    return queued


def stored_event(database_url: str, workspace_id: str, event_id: str) -> dict[str, Any]:
    rows = hooks.sql(
        database_url,
        "SELECT type, txid, record_id, body FROM events WHERE workspace_id = :ws AND id = :id",
        {"ws": workspace_id, "id": event_id},
    )
    assert len(rows) == 1
    return rows[0]


# --- test -----------------------------------------------------------------------------------


def test_test_queues_a_webhook_test_event_for_this_endpoint_only(
    api: Api, database_url: str
) -> None:
    target, other = hooks.create(api), hooks.create(api, eventTypes=["webhook.test"])
    event_id = hooks.queue_test(api, target["id"])
    assert event_id.startswith("evt_")
    event = stored_event(database_url, api.ws, event_id)
    assert event["type"] == "webhook.test"
    assert event["txid"] == NOT_IN_FEED
    body = json.loads(event["body"])
    assert body["type"] == "webhook.test" and body["id"] == event_id
    assert body["data"] == {"webhookId": target["id"]}
    assert body["workspaceId"] == api.ws and body["recordId"] is None
    [delivery] = hooks.deliveries(database_url, api.ws, target["id"])
    assert delivery["event_id"] == event_id and delivery["event_type"] == "webhook.test"
    assert delivery["status"] == "pending" and delivery["attempts"] == 0
    assert delivery["next_attempt_at"] == delivery["created_at"]
    assert delivery["last_attempt_at"] is None and delivery["last_error"] is None
    assert abs(delivery["created_at"] - datetime.now(UTC)) < timedelta(minutes=1)
    assert hooks.deliveries(database_url, api.ws, other["id"]) == []


def test_test_takes_no_body_fields_and_works_on_a_disabled_endpoint(
    api: Api, other_api: Api
) -> None:
    made = hooks.create(api)
    hooks.update(api, made["id"], enabled=False)
    path = f"/api/webhook/{made['id']}/test"
    assert ok_data(api.post(path, json={}))["id"] == made["id"]
    assert ok_data(api.post(path, json={"workspaceId": api.ws}, workspace=None))
    answer = error(api.post(path, json={"eventType": "contact.created"}), 400, "BAD_REQUEST")
    assert error_fields(answer) == ["eventType"]
    error(api.post(path, json="x"), 400, "BAD_REQUEST")
    error(other_api.post(path), 404, NOT_FOUND)
    error(api.post("/api/webhook/nope/test"), 404, NOT_FOUND)
    assert len(page(api, made["id"])["data"]) == 2


# --- the log ----------------------------------------------------------------------------------


def test_the_log_is_newest_first_in_the_element_shape(api: Api, database_url: str) -> None:
    made = hooks.create(api)
    assert page(api, made["id"]) == {
        "webhookId": made["id"],
        "continuationToken": None,
        "data": [],
    }
    queued = [hooks.queue_test(api, made["id"]) for _ in range(3)]
    data = page(api, made["id"])
    assert event_ids(data) == queued[::-1]
    assert data["continuationToken"] is None
    first = data["data"][0]
    assert list(first) == DELIVERY_KEYS
    assert first["eventType"] == "webhook.test" and first["status"] == "pending"
    assert first["attempts"] == 0
    assert first["lastAttemptAt"] is None and first["lastResponseStatus"] is None
    assert first["lastError"] is None
    assert TIMESTAMP.fullmatch(first["nextAttemptAt"])
    # After attempts, as the dispatcher records them.
    attempted = datetime(2026, 11, 26, 8, 30, 1, 5, tzinfo=UTC)
    hooks.set_delivery(
        database_url,
        api.ws,
        queued[0],
        status="failed",
        attempts=8,
        last_attempt_at=attempted,
        next_attempt_at=None,
        last_response_status=503,
        last_error="HTTP 503",
    )
    oldest = page(api, made["id"])["data"][-1]
    assert oldest == {
        "eventId": queued[0],
        "eventType": "webhook.test",
        "status": "failed",
        "attempts": 8,
        "lastAttemptAt": "2026-11-26T08:30:01.000005Z",
        "nextAttemptAt": None,
        "lastResponseStatus": 503,
        "lastError": "HTTP 503",
    }


def test_the_log_filters_by_status_and_pages_with_bound_tokens(api: Api, database_url: str) -> None:
    made = hooks.create(api)
    queued = [hooks.queue_test(api, made["id"]) for _ in range(7)]
    statuses = ["succeeded", "failed", "pending", "succeeded", "succeeded", "failed", "pending"]
    for event_id, status in zip(queued, statuses, strict=True):
        hooks.set_delivery(database_url, api.ws, event_id, status=status)
    for status in ("pending", "succeeded", "failed"):
        wanted = [e for e, s in zip(queued, statuses, strict=True) if s == status][::-1]
        assert event_ids(page(api, made["id"], status=status)) == wanted
        assert {d["status"] for d in page(api, made["id"], status=status)["data"]} == {status}
    assert len(page(api, made["id"], status="")["data"]) == 7  # empty: no filter

    # Every delivery once, newest first, whatever the page size (it may change per page).
    seen: list[str] = []
    token: str | None = None
    for size in ("2", "3", "1", "100"):
        params = {"pageSize": size, **({"continuationToken": token} if token else {})}
        data = page(api, made["id"], **params)
        seen += event_ids(data)
        token = data["continuationToken"]
        if token is None:
            break
    assert seen == queued[::-1]

    succeeded = page(api, made["id"], status="succeeded", pageSize="1")
    token = succeeded["continuationToken"]
    assert token
    more = page(api, made["id"], status="succeeded", continuationToken=token)
    assert event_ids(succeeded) + event_ids(more) == [queued[4], queued[3], queued[0]]
    # A token is bound to its filter, its endpoint and its workspace.
    path = f"/api/webhook/{made['id']}/deliveries"
    for params in ({"continuationToken": token}, {"status": "failed", "continuationToken": token}):
        error(api.get(path, params=params), 400, "INVALID_CONTINUATION_TOKEN")
    other = hooks.create(api)
    error(
        api.get(f"/api/webhook/{other['id']}/deliveries", params={"continuationToken": token}),
        400,
        "INVALID_CONTINUATION_TOKEN",
    )
    error(api.get(path, params={"continuationToken": token[:-2]}), 400,
          "INVALID_CONTINUATION_TOKEN")  # fmt: skip


@pytest.mark.parametrize(
    ("params", "fields"),
    [
        ({"status": "done"}, ["status"]),
        ({"status": "PENDING"}, ["status"]),
        ({"pageSize": "0"}, ["pageSize"]),
        ({"pageSize": "101"}, ["pageSize"]),
        ({"pageSize": "x", "status": "nope"}, ["status", "pageSize"]),
    ],
)
def test_bad_filter_values_are_one_422(api: Api, params: dict[str, str], fields: list[str]) -> None:
    made = hooks.create(api)
    answer = error(api.get(f"/api/webhook/{made['id']}/deliveries", params=params), 422,
                   "VALIDATION_ERROR")  # fmt: skip
    assert error_fields(answer) == fields


def test_the_log_refuses_unknown_parameters_and_other_workspaces(api: Api, other_api: Api) -> None:
    made = hooks.create(api)
    hooks.queue_test(api, made["id"])
    path = f"/api/webhook/{made['id']}/deliveries"
    answer = error(api.get(path, params={"state": "pending"}), 400, "BAD_REQUEST")
    assert error_fields(answer) == ["state"]
    error(other_api.get(path), 404, NOT_FOUND)
    error(api.get(path, params={"workspaceId": other_api.ws}), 403, "FORBIDDEN")
    error(api.get("/api/webhook/nope/deliveries"), 404, NOT_FOUND)
    via_query = api.get(path, params={"workspaceId": api.ws}, workspace=None)
    assert len(ok_data(via_query)["data"]) == 1


# --- replay -------------------------------------------------------------------------------------


def test_replay_one_event_queues_it_again_even_when_it_succeeded(
    api: Api, database_url: str
) -> None:
    made = hooks.create(api)
    event_id = hooks.queue_test(api, made["id"])
    hooks.set_delivery(
        database_url,
        api.ws,
        event_id,
        status="succeeded",
        attempts=3,
        last_attempt_at=datetime(2026, 1, 1, tzinfo=UTC),
        next_attempt_at=None,
        last_response_status=200,
        last_error="HTTP 500",
    )
    before = datetime.now(UTC)
    assert replay(api, made["id"], {"eventId": event_id}) == 1
    [row] = hooks.deliveries(database_url, api.ws, made["id"])
    assert row["status"] == "pending" and row["attempts"] == 0 and row["last_error"] is None
    assert row["next_attempt_at"] >= before - timedelta(seconds=1)
    # A contact's event, whatever the endpoint's eventTypes say: the caller named it.
    hooks.update(api, made["id"], eventTypes=["opportunity.*"])
    contact = api.create_contact()
    hooks.publish(api, database_url)
    [contact_event] = hooks.sql(
        database_url,
        "SELECT id FROM events WHERE workspace_id = :ws AND record_id = :id",
        {"ws": api.ws, "id": contact["id"]},
    )
    assert event_ids(page(api, made["id"])) == [event_id]  # not subscribed: never queued
    assert replay(api, made["id"], {"eventId": contact_event["id"]}) == 1
    newest = page(api, made["id"])["data"][0]
    assert newest["eventId"] == contact_event["id"]
    assert newest["eventType"] == "contact.created" and newest["status"] == "pending"


def test_a_test_event_is_replayed_only_to_its_own_endpoint(api: Api) -> None:
    """D.1: `webhook.test` is sent to that endpoint only, replays included."""
    tested = hooks.create(api)
    other = hooks.create(api)
    event_id = hooks.queue_test(api, tested["id"])
    refused = api.post(f"/api/webhook/{other['id']}/replay", json={"eventId": event_id})
    assert error_fields(error(refused, 422, "VALIDATION_ERROR")) == ["eventId"]
    assert event_id not in event_ids(page(api, other["id"]))
    assert replay(api, tested["id"], {"eventId": event_id}) == 1


def test_replay_since_queues_the_feed_events_the_endpoint_takes(
    api: Api, database_url: str
) -> None:
    contacts_only = hooks.create(api, eventTypes=["contact.*"])
    everything = hooks.create(api)
    updates = hooks.create(api, eventTypes=["contact.updated", "opportunity.created"])
    early = api.create_contact()
    later = api.create_contact()
    api.set_contact(later["id"], name="Renamed")
    api.create_opportunity()
    hooks.queue_test(api, everything["id"])  # webhook.test: never in the feed, never replayed
    hooks.publish(api, database_url)
    since = {"since": later["creationDate"]}  # its event's time: included (at or after)
    assert replay(api, contacts_only["id"], since) == 2
    assert replay(api, everything["id"], since) == 3
    assert replay(api, updates["id"], since) == 2
    assert replay(api, everything["id"], {"since": "2000-01-01"}) == 4
    kinds = {d["eventType"] for d in page(api, everything["id"])["data"]}
    assert kinds == {"contact.created", "contact.updated", "opportunity.created", "webhook.test"}
    assert len(page(api, everything["id"])["data"]) == 5  # re-queued rows, not new ones
    assert replay(api, everything["id"], {"since": "2999-01-01T00:00:00+05:00"}) == 0
    contact_kinds = {d["eventType"] for d in page(api, contacts_only["id"])["data"]}
    assert contact_kinds == {"contact.created", "contact.updated"}
    assert early["id"] != later["id"]
    # Every delivery made pending again, none added twice (the shared app's dispatcher may
    # already have made its next attempt: its receivers do not exist).
    for delivery in page(api, everything["id"])["data"]:
        assert delivery["status"] == "pending"


def test_a_replay_before_the_publisher_is_the_one_delivery(api: Api, database_url: str) -> None:
    """An event replayed in the very transaction that writes it (so before any publisher
    can see it) is queued by the replay; the publisher, coming after, leaves that row as
    it is: one delivery, pending, no attempt."""
    made = hooks.create(api)

    async def run() -> str:
        db = Database(Settings(database_url=database_url))
        try:
            async with db.transaction() as conn:
                event_id = await write_event(
                    conn,
                    workspace_id=api.ws,
                    type="contact.created",
                    record_id=None,
                    record_version=None,
                    changed=[],
                    data={},
                    now=datetime.now(UTC),
                )
                kw: dict[str, Any] = {"workspace_id": api.ws, "webhook_id": made["id"]}
                assert await deliveries.replay(conn, **kw, body={"eventId": event_id}) == 1
            await publish_pending(db)
            return event_id
        finally:
            await db.dispose()

    event_id = asyncio.run(run())
    hooks.publish(api, database_url)
    rows = [d for d in page(api, made["id"])["data"] if d["eventId"] == event_id]
    assert len(rows) == 1
    assert rows[0]["status"] == "pending"


@pytest.mark.parametrize(
    ("body", "status", "fields"),
    [
        ({}, 422, ["eventId"]),
        ({"eventId": None, "since": None}, 422, ["eventId"]),
        ({"eventId": "evt_x", "since": "2025-01-01T00:00:00Z"}, 422, ["since"]),
        ({"eventId": ""}, 422, ["eventId"]),
        ({"eventId": 5}, 422, ["eventId"]),
        ({"since": "yesterday"}, 422, ["since"]),
        ({"since": "2025-01-01", "events": []}, 400, ["events"]),
        ({"eventId": "evt_01a214f55d2474c9af624b385a9d0a37"}, 422, ["eventId"]),
    ],
)
def test_replay_needs_exactly_one_of_event_id_and_since(
    api: Api, body: dict[str, Any], status: int, fields: list[str]
) -> None:
    made = hooks.create(api)
    code = "VALIDATION_ERROR" if status == 422 else "BAD_REQUEST"
    answer = error(api.post(f"/api/webhook/{made['id']}/replay", json=body), status, code)
    assert error_fields(answer) == fields


def test_replay_never_reaches_another_workspace(
    api: Api, other_api: Api, database_url: str
) -> None:
    mine, theirs = hooks.create(api), hooks.create(other_api)
    their_event = hooks.queue_test(other_api, theirs["id"])
    answer = error(
        api.post(f"/api/webhook/{mine['id']}/replay", json={"eventId": their_event}),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(answer) == ["eventId"]
    path = f"/api/webhook/{theirs['id']}/replay"
    error(api.post(path, json={"since": "2000-01-01"}), 404, NOT_FOUND)
    error(api.post(path, json={"since": "2000-01-01", "workspaceId": other_api.ws}), 403,
          "FORBIDDEN")  # fmt: skip
    assert hooks.deliveries(database_url, api.ws, mine["id"]) == []
    [theirs_row] = hooks.deliveries(database_url, other_api.ws, theirs["id"])
    assert theirs_row["event_id"] == their_event
