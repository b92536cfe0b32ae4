"""Contract E.2: `GET /api/workspace` — the workspaces of the key's account, oldest first."""

from __future__ import annotations

from tests.client import Api, error, error_fields, ok_data

LISTED = "List obtained successfully."


def test_the_accounts_workspaces_oldest_first(api: Api, other_api: Api) -> None:
    data = ok_data(api.get("/api/workspace", workspace=None), LISTED)
    assert data == {"data": [{"id": api.ws, "name": "Test workspace"}]}
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}, workspace=None))
    third = ok_data(api.post("/api/workspace", json={"name": "Third"}, workspace=None))
    data = ok_data(api.get("/api/workspace"), LISTED)
    assert list(data) == ["data"]
    assert data["data"] == [
        {"id": api.ws, "name": "Test workspace"},
        {"id": second["id"], "name": "Second"},
        {"id": third["id"], "name": "Third"},
    ]
    for item in data["data"]:
        assert list(item) == ["id", "name"]
    # another account sees only its own
    theirs = ok_data(other_api.get("/api/workspace"))["data"]
    assert theirs == [{"id": other_api.ws, "name": "Other account's workspace"}]
    # the header, when sent, must name a workspace of the key's account
    error(other_api.get("/api/workspace", workspace=api.ws), 403, "FORBIDDEN")
    assert ok_data(api.get("/api/workspace", workspace=second["id"]))["data"] == data["data"]


def test_rules(api: Api) -> None:
    body = error(api.get("/api/workspace", params={"pageSize": "1"}), 400, "BAD_REQUEST")
    assert error_fields(body) == ["pageSize"]
    error(api.get("/api/workspace", auth=None), 401, "UNAUTHORIZED")
    error(api.get("/api/workspace", auth="ck_nope"), 401, "UNAUTHORIZED")
