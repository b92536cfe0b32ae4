"""Workspace endpoints: Get workspace (B.3) and Create workspace (C); the set-up items
are in test_setup.py."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import httpx
import pytest

from chatcrm.config import Settings
from tests.client import UUID7, Api, error, error_fields, ok_data, unique_email
from tests.conftest import new_account
from tests.reliability.conftest import AsyncApi, app_client

WORKSPACE_KEYS = [
    "id",
    "name",
    "timezone",
    "contactStages",
    "opportunityStages",
    "segmentations",
    "tags",
    "agents",
    "createdAt",
    "updatedAt",
    "agentsSeeOnlyAssigned",  # contract J.2
    "defaultCountry",  # contract N
]
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$")

OBTAINED = "Workspace obtained successfully."
CREATED = "Workspace created successfully."


def check_workspace_shape(data: dict[str, Any]) -> None:
    assert list(data) == WORKSPACE_KEYS
    assert UUID7.match(data["id"])
    for kind in ("contactStages", "opportunityStages"):
        for stage in data[kind]:
            assert list(stage) == ["id", "name", "order"]
            assert UUID7.match(stage["id"]) and isinstance(stage["order"], int)
    for tag in data["tags"]:
        assert list(tag) == ["id", "name", "color"]
    for segmentation in data["segmentations"]:
        assert list(segmentation) == ["id", "name"]
    for agent in data["agents"]:
        assert list(agent) == ["id", "name", "email"]
    assert TIMESTAMP.match(data["createdAt"]), data["createdAt"]
    assert TIMESTAMP.match(data["updatedAt"]), data["updatedAt"]
    assert data["createdAt"] <= data["updatedAt"]


def check_default_stages(data: dict[str, Any]) -> None:
    for kind in ("contactStages", "opportunityStages"):
        stages = data[kind]
        assert [s["order"] for s in stages] == [1, 2, 3, 4], stages
        names = [s["name"] for s in stages]
        assert all(isinstance(n, str) and n.strip() for n in names)
        assert len(set(names)) == 4
    all_ids = [s["id"] for s in data["contactStages"] + data["opportunityStages"]]
    assert len(set(all_ids)) == 8


def create_workspace(api: Api, body: Any) -> httpx.Response:
    return api.post("/api/workspace", json=body, workspace=None)


# --- Get workspace -------------------------------------------------------------------


def test_get_workspace_shape_and_defaults(api: Api) -> None:
    data = ok_data(api.get(f"/api/workspace/{api.ws}"), OBTAINED)
    check_workspace_shape(data)
    assert data["id"] == api.ws
    assert data["name"] == "Test workspace"
    assert data["timezone"] == "UTC"
    check_default_stages(data)
    assert data["segmentations"] == [] and data["tags"] == [] and data["agents"] == []


def test_get_workspace_lists_every_item_in_creation_order(api: Api) -> None:
    tags = [api.add_tag(f"tag{i}", color) for i, color in enumerate(["#111111", None, "red"])]
    agents = [api.add_agent(f"Agent {i}") for i in range(3)]
    segmentations = [api.add_segmentation(f"seg{i}") for i in range(3)]
    extra = api.add_stage("opportunity", "Won")
    data = api.workspace()
    check_workspace_shape(data)
    assert data["tags"] == tags
    assert data["agents"] == agents
    assert data["segmentations"] == segmentations
    assert data["opportunityStages"][-1] == extra
    assert len(data["contactStages"]) == 4


def test_get_workspace_is_never_stale(api: Api) -> None:
    first = ok_data(api.get(f"/api/workspace/{api.ws}"))
    tag = api.add_tag()
    second = ok_data(api.get(f"/api/workspace/{api.ws}"))
    assert second["tags"] == [tag]
    assert first["tags"] == []


def test_updated_at_moves_when_the_workspace_changes(api: Api) -> None:
    before = api.workspace()
    time.sleep(0.01)
    api.add_tag()
    after = api.workspace()
    assert after["createdAt"] == before["createdAt"]
    assert after["updatedAt"] > before["updatedAt"]
    for add in (api.add_agent, api.add_segmentation, api.add_stage):
        previous = api.workspace()["updatedAt"]
        time.sleep(0.01)
        add()
        assert api.workspace()["updatedAt"] > previous


@pytest.mark.not_on_citus  # the same check before any statement on every backend
def test_if_match_on_a_change_of_something_without_versions_is_412(api: Api) -> None:
    """A workspace's settings (a webhook, a user…) have no ETag: `If-Match` naming a tag
    can match nothing, so it is refused, not ignored (RFC 9110 13.1.1); `*` matches."""
    path = f"/api/workspace/{api.ws}"
    for tag in ('"1"', 'W/"1"', '"1", "2"'):
        answer = api.put(path, json={"name": "stale"}, headers={"If-Match": tag})
        error(answer, 412, "PRECONDITION_FAILED")
    assert ok_data(api.get(path))["name"] != "stale"
    renamed = api.put(path, json={"name": "any"}, headers={"If-Match": "*"})
    assert ok_data(renamed)["name"] == "any"
    hook = {"url": "http://93.184.216.34/hook"}
    made = ok_data(api.post("/api/webhook", json=hook))
    hook_id = made["id"] if "id" in made else made["webhook"]["id"]
    gone = api.delete(f"/api/webhook/{hook_id}", headers={"If-Match": '"3"'})
    error(gone, 412, "PRECONDITION_FAILED")
    # A POST that changes something without a version: the same.
    rotated = api.post(f"/api/webhook/{hook_id}/rotate-secret", headers={"If-Match": '"1"'})
    error(rotated, 412, "PRECONDITION_FAILED")
    made = api.post(
        f"/api/workspace/{api.ws}/tags", json={"name": "t"}, headers={"If-Match": '"1"'}
    )
    error(made, 412, "PRECONDITION_FAILED")


# --- Create workspace ---------------------------------------------------------------


def test_create_workspace_returns_it_and_the_key_can_use_it(api: Api) -> None:
    data = ok_data(create_workspace(api, {"name": "Lima office"}), CREATED)
    check_workspace_shape(data)
    assert data["name"] == "Lima office"
    assert data["timezone"] == "UTC"
    assert data["id"] != api.ws
    check_default_stages(data)
    assert data["tags"] == [] and data["agents"] == [] and data["segmentations"] == []
    # The same view comes back from Get workspace.
    assert ok_data(api.get(f"/api/workspace/{data['id']}", workspace=None), OBTAINED) == data
    # Usable by the same key for records.
    contact = api.post(
        "/api/contact", json={"name": "Ana", "email": unique_email()}, workspace=data["id"]
    )
    record = ok_data(contact)["contact"]
    assert record["workspaceId"] == data["id"]
    assert record["stageId"] == data["contactStages"][0]["id"]
    opportunity = ok_data(
        api.post("/api/opportunity", json={"name": "D", "amount": 1}, workspace=data["id"])
    )["opportunity"]
    assert opportunity["stageId"] == data["opportunityStages"][0]["id"]
    # The original workspace is untouched.
    assert api.workspace()["name"] == "Test workspace"


def test_create_workspace_belongs_to_the_key_account_whatever_header(
    api: Api, other_api: Api
) -> None:
    """The new workspace is the key's account's; a header naming one of its workspaces is
    fine, one the key cannot use is refused like everywhere (never silently ignored)."""
    data = ok_data(api.post("/api/workspace", json={"name": "W"}, workspace=api.ws))
    ok_data(api.get(f"/api/workspace/{data['id']}", workspace=None))
    error(other_api.get(f"/api/workspace/{data['id']}", workspace=None), 403, "FORBIDDEN")
    error(api.post("/api/workspace", json={"name": "W"}, workspace=other_api.ws), 403, "FORBIDDEN")


def test_new_workspace_is_not_usable_by_another_account(api: Api, other_api: Api) -> None:
    data = ok_data(create_workspace(api, {"name": "Private"}))
    error(other_api.get(f"/api/workspace/{data['id']}", workspace=None), 403, "FORBIDDEN")
    error(
        other_api.post("/api/contact", json={"name": "X", "email": "x@y.co"}, workspace=data["id"]),
        403,
        "FORBIDDEN",
    )


@pytest.mark.parametrize("timezone", ["America/Lima", "Europe/Madrid", "Asia/Kolkata", "UTC"])
def test_create_workspace_with_an_iana_timezone(api: Api, timezone: str) -> None:
    data = ok_data(create_workspace(api, {"name": "Tz", "timezone": timezone}), CREATED)
    assert data["timezone"] == timezone
    again = ok_data(api.get(f"/api/workspace/{data['id']}", workspace=None))
    assert again["timezone"] == timezone


def test_null_timezone_means_the_default(api: Api) -> None:
    data = ok_data(create_workspace(api, {"name": "Tz", "timezone": None}))
    assert data["timezone"] == "UTC"


@pytest.mark.parametrize(
    "timezone",
    [
        "Mars/Olympus_Mons",
        "",
        "  ",
        "GMT+5 hours",
        "../../etc/passwd",
        "/etc/localtime",
        # Files of the machine's zoneinfo folder that are no IANA name: another zone, or
        # none, on another node.
        "localtime",
        "posix/America/Lima",
        "right/UTC",
        5,
        True,
    ],
)
def test_invalid_timezone_is_422(api: Api, timezone: Any) -> None:
    body = error(
        create_workspace(api, {"name": "Tz", "timezone": timezone}), 422, "VALIDATION_ERROR"
    )
    assert error_fields(body) == ["timezone"]


def test_a_workspace_created_without_a_name_gets_one_no_other_has(api: Api, other_api: Api) -> None:
    """Contract N: absent or null, the name is chosen: "My workspace", then the first of
    "My workspace 2", 3… that no workspace of the account has, named ones included."""
    names = [ok_data(create_workspace(api, body), CREATED)["name"] for body in ({}, {"name": None})]
    assert names == ["My workspace", "My workspace 2"]
    ok_data(create_workspace(api, {"name": "My workspace 3"}))
    named = ok_data(create_workspace(api, {"timezone": "America/Lima"}))
    assert (named["name"], named["timezone"]) == ("My workspace 4", "America/Lima")
    check_workspace_shape(named)
    # Another account's names are its own.
    assert ok_data(create_workspace(other_api, {}))["name"] == "My workspace"
    # The chosen name is a name like any other: the workspace can be renamed.
    renamed = ok_data(
        api.put(
            f"/api/workspace/{named['id']}",
            json={"paramToUpdate": "name", "name": "Lima"},
            workspace=named["id"],
        )
    )
    assert renamed["name"] == "Lima"
    assert ok_data(create_workspace(api, {}))["name"] == "My workspace 4"
    # Told apart as people tell names apart: case and surrounding spaces do not count.
    ok_data(create_workspace(api, {"name": "my WORKSPACE 5"}))
    ok_data(create_workspace(api, {"name": " My workspace 6 "}))
    assert ok_data(create_workspace(api, {}))["name"] == "My workspace 7"


async def test_workspaces_created_together_without_names_get_different_ones(
    settings: Settings, database_url: str
) -> None:
    account = await asyncio.to_thread(new_account, database_url)
    async with app_client(settings) as client:
        aapi = AsyncApi(client, account)
        answers = await asyncio.gather(*(aapi.post("/api/workspace", json={}) for _ in range(6)))
    names = [ok_data(answer, CREATED)["name"] for answer in answers]
    assert sorted(names) == ["My workspace", *(f"My workspace {n}" for n in range(2, 7))]


@pytest.mark.parametrize("name", ["", "   ", 12, ["x"], {"x": 1}, False, "x" * 201])
def test_create_workspace_with_a_bad_name_is_422(api: Api, name: Any) -> None:
    response = error(create_workspace(api, {"name": name}), 422, "VALIDATION_ERROR")
    assert error_fields(response) == ["name"]


def test_create_workspace_name_of_200_characters_is_accepted(api: Api) -> None:
    assert ok_data(create_workspace(api, {"name": "n" * 200}))["name"] == "n" * 200


def test_create_workspace_collects_every_value_error(api: Api) -> None:
    body = error(
        create_workspace(api, {"name": "", "timezone": "No/Where"}), 422, "VALIDATION_ERROR"
    )
    assert sorted(error_fields(body)) == ["name", "timezone"]


@pytest.mark.parametrize("extra", ["account", "id", "accountId", "contactStages", "Name"])
def test_create_workspace_unknown_key_is_400(api: Api, extra: str) -> None:
    body = error(create_workspace(api, {"name": "W", extra: "x"}), 400, "BAD_REQUEST")
    assert error_fields(body) == [extra]
    assert extra in body["message"]


def test_create_workspace_needs_a_key(api: Api) -> None:
    error(api.post("/api/workspace", json={"name": "W"}, auth=None), 401, "UNAUTHORIZED")
