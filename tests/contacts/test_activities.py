"""Contact activity (contract B.3): record one, and read a contact's activities back, oldest
first, in pages like the lists."""

from __future__ import annotations

import asyncio
import dataclasses
import re
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from chatcrm.auth.service import create_key
from chatcrm.config import Settings
from chatcrm.db.database import Database
from tests.client import UUID7, Api, error, error_fields, ok_data

RECORDED = "The activity was recorded successfully."
OBTAINED = "Activities obtained successfully."
PAGE_KEYS = ["contactId", "continuationToken", "data"]
ACTIVITY_KEYS = ["id", "content", "date", "createdBy"]
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"


def add(api: Api, contact_id: str, body: Any, **kw: Any) -> httpx.Response:
    return api.post(f"/api/contact/{contact_id}/activities", json=body, **kw)


def record(api: Api, contact_id: str, content: str) -> None:
    assert ok_data(add(api, contact_id, {"content": content}), RECORDED) is None


def read(api: Api, contact_id: str, **params: Any) -> httpx.Response:
    return api.get(f"/api/contact/{contact_id}/activities", params=params)


def page(api: Api, contact_id: str, **params: Any) -> dict[str, Any]:
    data: dict[str, Any] = ok_data(read(api, contact_id, **params), OBTAINED)
    assert list(data) == PAGE_KEYS
    assert data["contactId"] == contact_id
    for activity in data["data"]:
        assert list(activity) == ACTIVITY_KEYS
    return data


def all_activities(api: Api, contact_id: str, size: int | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    token = None
    while True:
        params: dict[str, Any] = {}
        if size is not None:
            params["pageSize"] = size
        if token is not None:
            params["continuationToken"] = token
        data = page(api, contact_id, **params)
        out += data["data"]
        token = data["continuationToken"]
        if token is None:
            return out
        assert data["data"]


def contents(activities: list[dict[str, Any]]) -> list[str]:
    return [a["content"] for a in activities]


def invalid(response: httpx.Response, *fields: str) -> None:
    body = error(response, 422, "VALIDATION_ERROR")
    assert error_fields(body) == list(fields), body


def delete(api: Api, contact_id: str) -> None:
    body = {"contactIds": [{"ids": contact_id}]}
    assert ok_data(api.post("/api/contact/delete-batch", json=body))["deletedIds"] == [contact_id]


def second_workspace(api: Api) -> Api:
    data = ok_data(api.post("/api/workspace", json={"name": "Second"}))
    return Api(api.http, dataclasses.replace(api.account, workspace_id=data["id"]))


def second_key(api: Api, database_url: str) -> Api:
    """The same account and workspace, through another API key."""

    async def run() -> tuple[str, str]:
        db = Database(Settings(database_url=database_url))
        try:
            async with db.transaction() as conn:
                return await create_key(conn, account_id=api.account.account_id)
        finally:
            await db.dispose()

    key_id, raw = asyncio.run(run())
    return Api(api.http, dataclasses.replace(api.account, key_id=key_id, api_key=raw))


# --- recording ------------------------------------------------------------------------------


def test_record_an_activity(api: Api) -> None:
    contact = api.create_contact()
    before = datetime.now(UTC)
    response = add(api, contact["id"], {"content": "Called, no answer"})
    after = datetime.now(UTC)
    assert ok_data(response, RECORDED) is None
    data = page(api, contact["id"])
    assert data["continuationToken"] is None
    [activity] = data["data"]
    assert activity["content"] == "Called, no answer"
    assert activity["createdBy"] == api.account.key_id
    assert TIMESTAMP.match(activity["date"])
    assert before <= datetime.fromisoformat(activity["date"]) <= after
    assert UUID7.fullmatch(activity["id"])


def test_content_is_kept_exactly(api: Api) -> None:
    contact = api.create_contact()
    text = '  Línea 1\nLínea 2 — ñandú 🎉 <b>"quoted"</b>\t '
    record(api, contact["id"], text)
    assert contents(page(api, contact["id"])["data"]) == [text]


def test_created_by_is_the_key_that_recorded_it(api: Api, database_url: str) -> None:
    contact = api.create_contact()
    other_key = second_key(api, database_url)
    record(api, contact["id"], "first")
    record(other_key, contact["id"], "second")
    activities = page(api, contact["id"])["data"]
    assert [a["createdBy"] for a in activities] == [api.account.key_id, other_key.account.key_id]


def test_workspace_from_the_body(api: Api) -> None:
    contact = api.create_contact()
    response = add(api, contact["id"], {"workspaceId": api.ws, "content": "x"}, workspace=None)
    assert ok_data(response, RECORDED) is None
    assert contents(page(api, contact["id"])["data"]) == ["x"]


def test_body_and_header_naming_different_workspaces_is_403(api: Api) -> None:
    contact = api.create_contact()
    sibling = second_workspace(api)
    error(add(api, contact["id"], {"workspaceId": sibling.ws, "content": "x"}), 403, "FORBIDDEN")
    assert page(api, contact["id"])["data"] == []


def test_content_of_10000_characters_is_accepted(api: Api) -> None:
    contact = api.create_contact()
    record(api, contact["id"], "a" * 10_000)
    assert contents(page(api, contact["id"])["data"]) == ["a" * 10_000]


@pytest.mark.parametrize("content", ["a" * 10_001, "", "   ", "\n\t", 5, True, [], {}, ["x"]])
def test_invalid_content_is_422(api: Api, content: Any) -> None:
    contact = api.create_contact()
    invalid(add(api, contact["id"], {"content": content}), "content")
    assert page(api, contact["id"])["data"] == []


@pytest.mark.parametrize("body", [{}, {"content": None}, {"workspaceId": None}])
def test_missing_content_is_422(api: Api, body: dict[str, Any]) -> None:
    contact = api.create_contact()
    invalid(add(api, contact["id"], body), "content")


def test_an_unknown_body_key_is_400(api: Api) -> None:
    contact = api.create_contact()
    response = add(api, contact["id"], {"content": "x", "date": "2025-01-01"})
    body = error(response, 400, "BAD_REQUEST")
    assert error_fields(body) == ["date"]
    assert page(api, contact["id"])["data"] == []


@pytest.mark.parametrize("raw", ["[]", '"text"', "{", "null"])
def test_a_body_that_is_not_an_object_is_400(api: Api, raw: str) -> None:
    contact = api.create_contact()
    response = api.post(
        f"/api/contact/{contact['id']}/activities",
        content=raw,
        headers={"Content-Type": "application/json"},
    )
    error(response, 400, "BAD_REQUEST")


@pytest.mark.parametrize("contact_id", [UNKNOWN_ID, "not-an-id"])
def test_recording_on_an_unknown_contact_is_404(api: Api, contact_id: str) -> None:
    error(add(api, contact_id, {"content": "x"}), 404, "CONTACT_NOT_FOUND")


def test_an_invalid_body_is_422_before_the_contact_is_looked_up(api: Api) -> None:
    invalid(add(api, UNKNOWN_ID, {"content": ""}), "content")


def test_recording_on_a_deleted_contact_is_404(api: Api) -> None:
    contact = api.create_contact()
    delete(api, contact["id"])
    error(add(api, contact["id"], {"content": "x"}), 404, "CONTACT_NOT_FOUND")


def test_recording_on_another_workspaces_contact_is_404(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    siblings = second_workspace(api).create_contact()
    error(add(api, theirs["id"], {"content": "x"}), 404, "CONTACT_NOT_FOUND")
    error(add(api, siblings["id"], {"content": "x"}), 404, "CONTACT_NOT_FOUND")
    assert page(other_api, theirs["id"])["data"] == []


def test_recording_in_another_accounts_workspace_is_403(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    error(add(api, theirs["id"], {"content": "x"}, workspace=other_api.ws), 403, "FORBIDDEN")


def test_no_key_is_401(api: Api) -> None:
    contact = api.create_contact()
    error(add(api, contact["id"], {"content": "x"}, auth=None), 401, "UNAUTHORIZED")
    error(api.get(f"/api/contact/{contact['id']}/activities", auth=None), 401, "UNAUTHORIZED")


# --- reading ----------------------------------------------------------------------------------


def test_no_activities_yet(api: Api) -> None:
    contact = api.create_contact()
    assert page(api, contact["id"]) == {
        "contactId": contact["id"],
        "continuationToken": None,
        "data": [],
    }


def test_activities_are_oldest_first(api: Api) -> None:
    contact = api.create_contact()
    for n in range(5):
        record(api, contact["id"], f"note {n}")
    activities = page(api, contact["id"])["data"]
    assert contents(activities) == [f"note {n}" for n in range(5)]
    keys = [(a["date"], a["id"]) for a in activities]
    assert keys == sorted(keys)


def test_only_the_contacts_own_activities(api: Api) -> None:
    a, b = api.create_contact(), api.create_contact()
    record(api, a["id"], "for a")
    record(api, b["id"], "for b")
    record(api, a["id"], "for a again")
    assert contents(page(api, a["id"])["data"]) == ["for a", "for a again"]
    assert contents(page(api, b["id"])["data"]) == ["for b"]


def test_default_page_of_20_then_the_rest(api: Api) -> None:
    contact = api.create_contact()
    for n in range(23):
        record(api, contact["id"], f"n{n}")
    first = page(api, contact["id"])
    assert contents(first["data"]) == [f"n{n}" for n in range(20)]
    assert first["continuationToken"]
    second = page(api, contact["id"], continuationToken=first["continuationToken"])
    assert contents(second["data"]) == ["n20", "n21", "n22"]
    assert second["continuationToken"] is None


def test_an_exactly_full_last_page_has_no_token(api: Api) -> None:
    contact = api.create_contact()
    for n in range(6):
        record(api, contact["id"], f"n{n}")
    first = page(api, contact["id"], pageSize=3)
    second = page(api, contact["id"], pageSize=3, continuationToken=first["continuationToken"])
    assert contents(second["data"]) == ["n3", "n4", "n5"]
    assert second["continuationToken"] is None


def test_page_size_may_change_between_pages(api: Api) -> None:
    contact = api.create_contact()
    for n in range(9):
        record(api, contact["id"], f"n{n}")
    first = page(api, contact["id"], pageSize=2)
    second = page(api, contact["id"], pageSize=5, continuationToken=first["continuationToken"])
    third = page(api, contact["id"], pageSize=1, continuationToken=second["continuationToken"])
    assert contents(first["data"] + second["data"] + third["data"]) == [f"n{n}" for n in range(8)]
    assert contents(all_activities(api, contact["id"], 4)) == [f"n{n}" for n in range(9)]


def test_activities_recorded_while_paging_come_at_the_end(api: Api) -> None:
    contact = api.create_contact()
    for n in range(4):
        record(api, contact["id"], f"n{n}")
    first = page(api, contact["id"], pageSize=3)
    record(api, contact["id"], "late")
    rest = page(api, contact["id"], pageSize=10, continuationToken=first["continuationToken"])
    assert contents(first["data"] + rest["data"]) == ["n0", "n1", "n2", "n3", "late"]


@pytest.mark.parametrize("size", ["0", "101", "abc", "-1", "2.0"])
def test_invalid_page_size_is_422(api: Api, size: str) -> None:
    contact = api.create_contact()
    invalid(read(api, contact["id"], pageSize=size), "pageSize")


def test_page_size_100_is_accepted(api: Api) -> None:
    contact = api.create_contact()
    record(api, contact["id"], "x")
    assert len(page(api, contact["id"], pageSize=100)["data"]) == 1


@pytest.mark.parametrize("name", ["q", "foo", "stageId"])
def test_an_unknown_query_parameter_is_400(api: Api, name: str) -> None:
    contact = api.create_contact()
    body = error(read(api, contact["id"], **{name: "x"}), 400, "BAD_REQUEST")
    assert error_fields(body) == [name]


def test_empty_parameters_count_as_absent(api: Api) -> None:
    contact = api.create_contact()
    record(api, contact["id"], "x")
    response = api.get(f"/api/contact/{contact['id']}/activities?pageSize=&continuationToken=")
    assert contents(ok_data(response, OBTAINED)["data"]) == ["x"]


def test_a_garbage_token_is_400(api: Api) -> None:
    contact = api.create_contact()
    record(api, contact["id"], "x")
    error(read(api, contact["id"], continuationToken="garbage"), 400, "INVALID_CONTINUATION_TOKEN")


def test_a_token_of_another_contact_is_400(api: Api) -> None:
    a, b = api.create_contact(), api.create_contact()
    for contact in (a, b):
        for n in range(3):
            record(api, contact["id"], f"n{n}")
    token = page(api, a["id"], pageSize=1)["continuationToken"]
    assert token
    error(read(api, b["id"], continuationToken=token), 400, "INVALID_CONTINUATION_TOKEN")
    assert page(api, a["id"], continuationToken=token)["data"]


def test_a_token_of_activities_is_400_on_the_contact_list(api: Api) -> None:
    contact = api.create_contact()
    for n in range(3):
        record(api, contact["id"], f"n{n}")
    token = page(api, contact["id"], pageSize=1)["continuationToken"]
    error(
        api.get("/api/contact", params={"continuationToken": token}),
        400,
        "INVALID_CONTINUATION_TOKEN",
    )


def test_a_truncated_token_is_400(api: Api) -> None:
    contact = api.create_contact()
    for n in range(3):
        record(api, contact["id"], f"n{n}")
    token = page(api, contact["id"], pageSize=1)["continuationToken"]
    for cut in (5, len(token) // 2, len(token) - 1):
        response = read(api, contact["id"], continuationToken=token[:cut])
        error(response, 400, "INVALID_CONTINUATION_TOKEN")


@pytest.mark.parametrize("contact_id", [UNKNOWN_ID, "not-an-id"])
def test_reading_an_unknown_contact_is_404(api: Api, contact_id: str) -> None:
    error(read(api, contact_id), 404, "CONTACT_NOT_FOUND")


def test_reading_a_deleted_contact_is_404(api: Api) -> None:
    contact = api.create_contact()
    record(api, contact["id"], "x")
    delete(api, contact["id"])
    error(read(api, contact["id"]), 404, "CONTACT_NOT_FOUND")


def test_reading_another_workspaces_contact_is_404(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    record(other_api, theirs["id"], "private")
    error(read(api, theirs["id"]), 404, "CONTACT_NOT_FOUND")


def test_reading_with_the_workspace_in_the_query(api: Api, other_api: Api) -> None:
    contact = api.create_contact()
    record(api, contact["id"], "x")
    response = api.get(
        f"/api/contact/{contact['id']}/activities", params={"workspaceId": api.ws}, workspace=None
    )
    assert contents(ok_data(response, OBTAINED)["data"]) == ["x"]
    sibling = second_workspace(api)
    mismatch = read(api, contact["id"], workspaceId=sibling.ws)
    error(mismatch, 403, "FORBIDDEN")
    path = f"/api/contact/{contact['id']}/activities"
    error(api.get(path, workspace=None), 401, "WORKSPACE_REQUIRED")
    error(api.get(path, workspace=other_api.ws), 403, "FORBIDDEN")
