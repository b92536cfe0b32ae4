"""Contract E.1: `GET /api/opportunity/{id}/agent/activities` — the opportunity's
activities, oldest first, each in the activity element's shape."""

from __future__ import annotations

from tests.client import Api, error, error_fields, ok_data

LISTED = "Successfully obtained list."
ACTIVITY_KEYS = ["id", "categoryType", "content", "date", "createdBy"]
UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"


def path(opportunity_id: str) -> str:
    return f"/api/opportunity/{opportunity_id}/agent/activities"


def test_oldest_first_as_the_record_shows_them(api: Api) -> None:
    deal = api.create_opportunity()
    data = ok_data(api.get(path(deal["id"])), LISTED)
    assert data == {"opportunityId": deal["id"], "data": []}
    for content, date, category in (
        ("second", "2025-04-08T10:00:00Z", "Meeting"),
        ("first", "2025-04-07T09:00:00-05:00", "Calls"),
        ("third", "2025-04-09T00:00:00.5Z", "Email"),
    ):
        ok_data(
            api.post(
                path(deal["id"]), json={"content": content, "date": date, "categoryType": category}
            )
        )
    data = ok_data(api.get(path(deal["id"]), params={"workspaceId": api.ws}), LISTED)
    assert list(data) == ["opportunityId", "data"]
    assert [a["content"] for a in data["data"]] == ["first", "second", "third"]
    assert [a["categoryType"] for a in data["data"]] == ["Calls", "Meeting", "Email"]
    first = data["data"][0]
    assert list(first) == ACTIVITY_KEYS
    assert first["date"] == "2025-04-07T14:00:00.000000Z"
    assert first["createdBy"] == api.account.key_id
    # exactly what the opportunity itself shows
    record = ok_data(api.get(f"/api/opportunity/{deal['id']}"))["data"][0]
    assert record["activities"] == data["data"]
    # another opportunity's activities are not listed
    other = api.create_opportunity()
    assert ok_data(api.get(path(other["id"])))["data"] == []


def test_unknown_deleted_or_foreign_is_404(api: Api, other_api: Api) -> None:
    deal = api.create_opportunity()
    ok_data(api.post(path(deal["id"]), json={"content": "x", "categoryType": "Calls"}))
    for missing in (UNKNOWN_ID, "not-an-id"):
        error(api.get(path(missing)), 404, "OPPORTUNITY_NOT_FOUND")
    error(other_api.get(path(deal["id"])), 404, "OPPORTUNITY_NOT_FOUND")
    ok_data(api.delete(f"/api/opportunity/{deal['id']}"))
    error(api.get(path(deal["id"])), 404, "OPPORTUNITY_NOT_FOUND")


def test_query_and_workspace_rules(api: Api, other_api: Api) -> None:
    deal = api.create_opportunity()
    body = error(api.get(path(deal["id"]), params={"pageSize": "5"}), 400, "BAD_REQUEST")
    assert error_fields(body) == ["pageSize"]
    error(api.get(path(deal["id"]), workspace=None), 401, "WORKSPACE_REQUIRED")
    error(api.get(path(deal["id"]), workspace=other_api.ws), 403, "FORBIDDEN")
