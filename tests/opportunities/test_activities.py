"""Opportunity activity (contract B.3): `POST /api/opportunity/{id}/agent/activities`; the
activity shows in the opportunity's `activities`, sorted by date, and is a change of it."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.client import Api, error, error_fields, ok_data

RECORDED = "The activity was recorded successfully."
ACTIVITY_KEYS = ["id", "categoryType", "content", "date", "createdBy"]
CATEGORIES = ["Calls", "Meeting", "Whatsapp", "Email"]
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"


def add(api: Api, opportunity_id: str, body: Any, **kw: Any) -> httpx.Response:
    return api.post(f"/api/opportunity/{opportunity_id}/agent/activities", json=body, **kw)


def record(api: Api, opportunity_id: str, **body: Any) -> None:
    body = {"content": "Note", "categoryType": "Calls", **body}
    assert ok_data(add(api, opportunity_id, body), RECORDED) is None


def current(api: Api, opportunity_id: str) -> tuple[dict[str, Any], str]:
    response = api.get(f"/api/opportunity/{opportunity_id}")
    record: dict[str, Any] = ok_data(response)["data"][0]
    for activity in record["activities"]:
        assert list(activity) == ACTIVITY_KEYS
    return record, response.headers["etag"]


def activities(api: Api, opportunity_id: str) -> list[dict[str, Any]]:
    return current(api, opportunity_id)[0]["activities"]


def invalid(response: httpx.Response, *fields: str) -> None:
    body = error(response, 422, "VALIDATION_ERROR")
    assert sorted(error_fields(body)) == sorted(fields), body


def second_workspace(api: Api) -> Api:
    data = ok_data(api.post("/api/workspace", json={"name": "Second"}))
    return Api(api.http, dataclasses.replace(api.account, workspace_id=data["id"]))


# --- recording --------------------------------------------------------------------------------


def test_record_an_activity(api: Api) -> None:
    created = api.create_opportunity()
    assert created["activities"] == []
    before = datetime.now(UTC)
    response = add(api, created["id"], {"content": "Intro call", "categoryType": "Calls"})
    after = datetime.now(UTC)
    assert ok_data(response, RECORDED) is None
    [activity] = activities(api, created["id"])
    assert activity["categoryType"] == "Calls"
    assert activity["content"] == "Intro call"
    assert activity["createdBy"] == api.account.key_id
    assert TIMESTAMP.match(activity["date"])
    # Without a date, the activity is dated now.
    assert before <= datetime.fromisoformat(activity["date"]) <= after
    assert isinstance(activity["id"], str) and activity["id"] != created["id"]


@pytest.mark.parametrize("category", CATEGORIES)
def test_each_category_is_accepted_exactly(api: Api, category: str) -> None:
    created = api.create_opportunity()
    record(api, created["id"], categoryType=category)
    assert [a["categoryType"] for a in activities(api, created["id"])] == [category]


@pytest.mark.parametrize(
    "category",
    [
        "calls",
        "Call",
        "CALLS",
        "meeting",
        "WhatsApp",
        "email",
        "Email ",
        "Sms",
        "",
        1,
        True,
        None,
        ["Calls"],
        {"name": "Calls"},
    ],
)
def test_any_other_category_is_422(api: Api, category: Any) -> None:
    created = api.create_opportunity()
    invalid(add(api, created["id"], {"content": "x", "categoryType": category}), "categoryType")
    assert activities(api, created["id"]) == []


def test_a_missing_category_is_422(api: Api) -> None:
    created = api.create_opportunity()
    invalid(add(api, created["id"], {"content": "x"}), "categoryType")


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("2025-04-07T21:56:19.325443Z", "2025-04-07T21:56:19.325443Z"),
        ("2025-04-07T21:56:19Z", "2025-04-07T21:56:19.000000Z"),
        ("2025-04-07T16:56:19.5-05:00", "2025-04-07T21:56:19.500000Z"),
        ("2025-04-08T06:56:19+09:00", "2025-04-07T21:56:19.000000Z"),
        ("2025-04-07T21:56:19", "2025-04-07T21:56:19.000000Z"),
        ("2025-04-07", "2025-04-07T00:00:00.000000Z"),
    ],
)
def test_date_is_iso_8601_normalised_to_utc(api: Api, given: str, stored: str) -> None:
    created = api.create_opportunity()
    record(api, created["id"], date=given)
    assert [a["date"] for a in activities(api, created["id"])] == [stored]


def test_a_null_date_means_now(api: Api) -> None:
    created = api.create_opportunity()
    before = datetime.now(UTC)
    record(api, created["id"], date=None)
    [activity] = activities(api, created["id"])
    assert before <= datetime.fromisoformat(activity["date"]) <= datetime.now(UTC)


@pytest.mark.parametrize(
    "date", ["yesterday", "2025-13-01T00:00:00Z", "2025-02-30", "07/04/2025", "", 1744062979, True]
)
def test_a_bad_date_is_422(api: Api, date: Any) -> None:
    created = api.create_opportunity()
    body = {"content": "x", "categoryType": "Email", "date": date}
    invalid(add(api, created["id"], body), "date")
    assert activities(api, created["id"]) == []


def test_content_of_10000_characters_is_accepted(api: Api) -> None:
    created = api.create_opportunity()
    record(api, created["id"], content="é" * 10_000)
    assert activities(api, created["id"])[0]["content"] == "é" * 10_000


@pytest.mark.parametrize("content", ["a" * 10_001, "", "  ", 5, False, None, {}])
def test_invalid_content_is_422(api: Api, content: Any) -> None:
    created = api.create_opportunity()
    invalid(add(api, created["id"], {"content": content, "categoryType": "Calls"}), "content")


def test_a_missing_content_is_422(api: Api) -> None:
    created = api.create_opportunity()
    invalid(add(api, created["id"], {"categoryType": "Calls"}), "content")


def test_every_invalid_value_is_reported_together(api: Api) -> None:
    created = api.create_opportunity()
    response = add(api, created["id"], {"content": " ", "categoryType": "call", "date": "x"})
    invalid(response, "content", "categoryType", "date")


def test_an_unknown_body_key_is_400(api: Api) -> None:
    created = api.create_opportunity()
    body = {"content": "x", "categoryType": "Calls", "type": "Calls"}
    assert error_fields(error(add(api, created["id"], body), 400, "BAD_REQUEST")) == ["type"]
    assert activities(api, created["id"]) == []


@pytest.mark.parametrize("raw", ["[]", '"x"', "{", "null"])
def test_a_body_that_is_not_an_object_is_400(api: Api, raw: str) -> None:
    created = api.create_opportunity()
    response = api.post(
        f"/api/opportunity/{created['id']}/agent/activities",
        content=raw,
        headers={"Content-Type": "application/json"},
    )
    error(response, 400, "BAD_REQUEST")


# --- effect on the opportunity -------------------------------------------------------------------


def test_activities_are_sorted_by_date(api: Api) -> None:
    created = api.create_opportunity()
    for day, category in [(15, "Email"), (3, "Calls"), (28, "Meeting"), (9, "Whatsapp")]:
        record(
            api,
            created["id"],
            date=f"2025-05-{day:02d}T10:00:00Z",
            content=f"day {day}",
            categoryType=category,
        )
    record(api, created["id"], date="2025-05-20T10:00:00+05:00", content="day 20 early")
    found = activities(api, created["id"])
    assert [a["content"] for a in found] == [
        "day 3",
        "day 9",
        "day 15",
        "day 20 early",
        "day 28",
    ]
    assert [a["categoryType"] for a in found] == ["Calls", "Whatsapp", "Email", "Calls", "Meeting"]
    assert [a["date"] for a in found] == sorted(a["date"] for a in found)
    assert len({a["id"] for a in found}) == 5


def test_an_activity_is_a_change_of_the_opportunity(api: Api) -> None:
    created = api.create_opportunity()
    before, first_etag = current(api, created["id"])
    assert before["updatedDate"] is None
    assert first_etag == '"1"'
    record(api, created["id"])
    after, second_etag = current(api, created["id"])
    assert after["updatedDate"] is not None
    assert TIMESTAMP.match(after["updatedDate"])
    assert after["updatedDate"] >= after["creationDate"]
    assert second_etag != first_etag
    assert second_etag == '"2"'
    # Nothing else of the record changed.
    unchanged = {k: v for k, v in after.items() if k not in ("updatedDate", "activities")}
    assert unchanged == {k: v for k, v in before.items() if k not in ("updatedDate", "activities")}
    # An update carrying the old ETag is now stale.
    stale = api.update_opportunity(
        created["id"], {"paramToUpdate": "name", "name": "x"}, headers={"If-Match": first_etag}
    )
    error(stale, 412, "PRECONDITION_FAILED")


def test_each_activity_moves_updated_date_and_etag(api: Api) -> None:
    created = api.create_opportunity()
    record(api, created["id"], date="2020-01-01T00:00:00Z")
    first, first_etag = current(api, created["id"])
    record(api, created["id"], date="2019-01-01T00:00:00Z")
    second, second_etag = current(api, created["id"])
    # updatedDate is the time of the change, not the activity's own date.
    assert first["updatedDate"] > "2025"
    assert second["updatedDate"] >= first["updatedDate"]
    assert (first_etag, second_etag) == ('"2"', '"3"')


def test_activities_show_in_lists_and_updates(api: Api) -> None:
    created = api.create_opportunity()
    record(api, created["id"], content="listed")
    [listed] = ok_data(api.get("/api/opportunity"))["data"]
    assert [a["content"] for a in listed["activities"]] == ["listed"]
    updated = api.set_opportunity(created["id"], name="Renamed")
    assert [a["content"] for a in updated["activities"]] == ["listed"]


def test_activities_belong_to_their_opportunity(api: Api) -> None:
    a, b = api.create_opportunity(), api.create_opportunity()
    record(api, a["id"], content="for a")
    record(api, b["id"], content="for b")
    assert [x["content"] for x in activities(api, a["id"])] == ["for a"]
    assert [x["content"] for x in activities(api, b["id"])] == ["for b"]


# --- not found and workspaces ---------------------------------------------------------------------


@pytest.mark.parametrize("opportunity_id", [UNKNOWN_ID, "not-an-id"])
def test_unknown_opportunity_is_404(api: Api, opportunity_id: str) -> None:
    response = add(api, opportunity_id, {"content": "x", "categoryType": "Calls"})
    error(response, 404, "OPPORTUNITY_NOT_FOUND")


def test_an_invalid_body_is_422_before_the_lookup(api: Api) -> None:
    invalid(add(api, UNKNOWN_ID, {"content": "x", "categoryType": "calls"}), "categoryType")


def test_another_workspaces_opportunity_is_404(api: Api, other_api: Api) -> None:
    theirs = other_api.create_opportunity()
    siblings = second_workspace(api).create_opportunity()
    body = {"content": "x", "categoryType": "Calls"}
    error(add(api, theirs["id"], body), 404, "OPPORTUNITY_NOT_FOUND")
    error(add(api, siblings["id"], body), 404, "OPPORTUNITY_NOT_FOUND")
    assert activities(other_api, theirs["id"]) == []


def test_workspace_from_the_body(api: Api) -> None:
    created = api.create_opportunity()
    body = {"workspaceId": api.ws, "content": "x", "categoryType": "Email"}
    assert ok_data(add(api, created["id"], body, workspace=None), RECORDED) is None
    assert len(activities(api, created["id"])) == 1


def test_workspace_rules(api: Api, other_api: Api) -> None:
    created = api.create_opportunity()
    theirs = other_api.create_opportunity()
    sibling = second_workspace(api)
    body = {"content": "x", "categoryType": "Calls"}
    error(add(api, created["id"], {**body, "workspaceId": sibling.ws}), 403, "FORBIDDEN")
    error(add(api, theirs["id"], body, workspace=other_api.ws), 403, "FORBIDDEN")
    error(add(api, created["id"], body, workspace=None), 401, "WORKSPACE_REQUIRED")
    error(add(api, created["id"], body, auth=None), 401, "UNAUTHORIZED")
    assert activities(api, created["id"]) == []
