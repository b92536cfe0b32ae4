"""Workspace endpoints: Get workspace (B.3) and workspace set-up (C)."""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any

import httpx
import pytest

from chatcrm.config import Settings
from tests.client import Api, error, error_fields, ok_data, unique_email
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
UUID7 = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$")

OBTAINED = "Workspace obtained successfully."
CREATED = "Workspace created successfully."
STAGE_CREATED = "Stage created successfully."
TAG_CREATED = "Tag created successfully."
SEGMENTATION_CREATED = "Segmentation created successfully."
AGENT_CREATED = "Agent created successfully."


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
    ["Mars/Olympus_Mons", "", "  ", "GMT+5 hours", "../../etc/passwd", "/etc/localtime", 5, True],
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


# --- Stages --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["contact", "opportunity"])
def test_add_stage_appends_with_the_next_order(api: Api, kind: str) -> None:
    first = ok_data(
        api.post(f"/api/workspace/{api.ws}/stages", json={"kind": kind, "name": "Extra"}),
        STAGE_CREATED,
    )
    assert list(first) == ["id", "name", "order"]
    assert UUID7.match(first["id"])
    assert first["name"] == "Extra" and first["order"] == 5
    second = api.add_stage(kind, "Later")
    assert second["order"] == 6
    view = api.workspace()
    stages = view[f"{kind}Stages"]
    assert stages[-2:] == [first, second]
    assert [s["order"] for s in stages] == [1, 2, 3, 4, 5, 6]
    other = "opportunity" if kind == "contact" else "contact"
    assert len(view[f"{other}Stages"]) == 4


def test_stages_created_at_once_take_distinct_orders(api: Api) -> None:
    import threading
    from concurrent.futures import ThreadPoolExecutor

    path = f"/api/workspace/{api.ws}/stages"
    for round_ in range(3):
        start = threading.Barrier(3)

        def add(name: str, start: threading.Barrier = start) -> httpx.Response:
            start.wait()
            return api.post(path, json={"kind": "contact", "name": name})

        with ThreadPoolExecutor(3) as pool:
            answers = list(pool.map(add, [f"R{round_}-{i}" for i in range(3)]))
        assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    orders = [s["order"] for s in api.workspace()["contactStages"]]
    assert orders == list(range(1, len(orders) + 1)), orders


def test_new_stages_are_usable(api: Api) -> None:
    contact_stage = api.add_stage("contact")
    opportunity_stage = api.add_stage("opportunity")
    contact = api.create_contact(stageId=contact_stage["id"])
    assert contact["stageId"] == contact_stage["id"]
    opportunity = api.create_opportunity(stageId=opportunity_stage["id"])
    assert opportunity["stageId"] == opportunity_stage["id"]


def test_stage_orders_are_per_workspace(api: Api) -> None:
    api.add_stage("contact")
    data = ok_data(create_workspace(api, {"name": "Other"}))
    stage = ok_data(
        api.post(
            f"/api/workspace/{data['id']}/stages",
            json={"kind": "contact", "name": "X"},
            workspace=None,
        )
    )
    assert stage["order"] == 5


@pytest.mark.parametrize("kind", ["Contact", "lead", "", "contacts", 1, ["contact"], True])
def test_stage_kind_must_be_contact_or_opportunity(api: Api, kind: Any) -> None:
    body = error(
        api.post(f"/api/workspace/{api.ws}/stages", json={"kind": kind, "name": "X"}),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["kind"]
    assert len(api.workspace()["contactStages"]) == 4


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"name": "X"}, ["kind"]),
        ({"kind": "contact"}, ["name"]),
        ({"kind": "contact", "name": None}, ["name"]),
        ({}, ["kind", "name"]),
        ({"kind": "contact", "name": ""}, ["name"]),
        ({"kind": "contact", "name": "x" * 201}, ["name"]),
        ({"kind": "bad", "name": ""}, ["kind", "name"]),
    ],
)
def test_stage_value_errors_are_422(api: Api, body: dict[str, Any], fields: list[str]) -> None:
    response = error(
        api.post(f"/api/workspace/{api.ws}/stages", json=body), 422, "VALIDATION_ERROR"
    )
    assert sorted(error_fields(response)) == sorted(fields)
    assert len(api.workspace()["contactStages"]) == 4


def test_stage_unknown_key_is_400(api: Api) -> None:
    body = error(
        api.post(
            f"/api/workspace/{api.ws}/stages", json={"kind": "contact", "name": "X", "order": 1}
        ),
        400,
        "BAD_REQUEST",
    )
    assert error_fields(body) == ["order"]
    assert len(api.workspace()["contactStages"]) == 4


# --- Tags ----------------------------------------------------------------------------


def test_add_tag_returns_it_and_it_appears(api: Api) -> None:
    tag = ok_data(
        api.post(f"/api/workspace/{api.ws}/tags", json={"name": "vip", "color": "#ff0000"}),
        TAG_CREATED,
    )
    assert list(tag) == ["id", "name", "color"]
    assert UUID7.match(tag["id"])
    assert tag["name"] == "vip" and tag["color"] == "#ff0000"
    assert api.workspace()["tags"] == [tag]
    contact = api.create_contact(tags=[tag["id"]])
    assert [t["id"] for t in contact["tags"]] == [tag["id"]]
    assert contact["tags"][0]["name"] == "vip" and contact["tags"][0]["color"] == "#ff0000"


def test_tag_color_is_optional(api: Api) -> None:
    tag = ok_data(api.post(f"/api/workspace/{api.ws}/tags", json={"name": "plain"}), TAG_CREATED)
    assert tag["color"] is None
    tag = ok_data(api.post(f"/api/workspace/{api.ws}/tags", json={"name": "p2", "color": None}))
    assert tag["color"] is None


@pytest.mark.parametrize(
    ("body", "status", "fields"),
    [
        ({}, 422, ["name"]),
        ({"color": "#000"}, 422, ["name"]),
        ({"name": None}, 422, ["name"]),
        ({"name": ""}, 422, ["name"]),
        ({"name": 5}, 422, ["name"]),
        ({"name": "t", "color": 5}, 422, ["color"]),
        ({"name": "t", "colour": "#000"}, 400, ["colour"]),
        ({"name": "t", "id": "x"}, 400, ["id"]),
    ],
)
def test_tag_errors(api: Api, body: dict[str, Any], status: int, fields: list[str]) -> None:
    code = "VALIDATION_ERROR" if status == 422 else "BAD_REQUEST"
    response = error(api.post(f"/api/workspace/{api.ws}/tags", json=body), status, code)
    assert error_fields(response) == fields
    assert api.workspace()["tags"] == []


# --- Segmentations -------------------------------------------------------------------


def test_add_segmentation_returns_it_and_it_appears(api: Api) -> None:
    seg = ok_data(
        api.post(f"/api/workspace/{api.ws}/segmentations", json={"name": "Retail"}),
        SEGMENTATION_CREATED,
    )
    assert list(seg) == ["id", "name"]
    assert UUID7.match(seg["id"]) and seg["name"] == "Retail"
    assert api.workspace()["segmentations"] == [seg]
    assert api.create_contact(segmentationId=seg["id"])["segmentationId"] == seg["id"]
    assert api.create_opportunity(segmentationId=seg["id"])["segmentationId"] == seg["id"]


@pytest.mark.parametrize(
    ("body", "status", "fields"),
    [
        ({}, 422, ["name"]),
        ({"name": None}, 422, ["name"]),
        ({"name": "  "}, 422, ["name"]),
        ({"name": "x" * 201}, 422, ["name"]),
        ({"name": "s", "color": "#000"}, 400, ["color"]),
    ],
)
def test_segmentation_errors(
    api: Api, body: dict[str, Any], status: int, fields: list[str]
) -> None:
    code = "VALIDATION_ERROR" if status == 422 else "BAD_REQUEST"
    response = error(api.post(f"/api/workspace/{api.ws}/segmentations", json=body), status, code)
    assert error_fields(response) == fields
    assert api.workspace()["segmentations"] == []


# --- Agents --------------------------------------------------------------------------


def test_add_agent_returns_it_and_it_appears(api: Api) -> None:
    email = unique_email()
    agent = ok_data(
        api.post(f"/api/workspace/{api.ws}/agents", json={"name": "Eva Ruiz", "email": email}),
        AGENT_CREATED,
    )
    assert list(agent) == ["id", "name", "email"]
    assert UUID7.match(agent["id"])
    assert agent["name"] == "Eva Ruiz" and agent["email"] == email
    assert api.workspace()["agents"] == [agent]
    contact = api.create_contact(assignedAgentId=agent["id"])
    assert contact["assignedAgentId"] == agent["id"]
    assert contact["assignedAgentName"] == "Eva Ruiz"


@pytest.mark.parametrize(
    "email",
    [
        "not-an-email",
        "a@",
        "@b.co",
        "a b@c.co",
        "a@b",
        "a..b@c.co",
        "",
        None,
        5,
        "x" * 250 + "@b.co",
    ],
)
def test_agent_email_is_validated(api: Api, email: Any) -> None:
    response = error(
        api.post(f"/api/workspace/{api.ws}/agents", json={"name": "Eva", "email": email}),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(response) == ["email"]
    assert api.workspace()["agents"] == []


@pytest.mark.parametrize(
    ("body", "status", "fields"),
    [
        ({"email": "eva@example.com"}, 422, ["name"]),
        ({"name": "Eva"}, 422, ["email"]),
        ({}, 422, ["name", "email"]),
        ({"name": "", "email": "bad"}, 422, ["name", "email"]),
        ({"name": "Eva", "email": "eva@example.com", "phone": "1"}, 400, ["phone"]),
    ],
)
def test_agent_errors(api: Api, body: dict[str, Any], status: int, fields: list[str]) -> None:
    code = "VALIDATION_ERROR" if status == 422 else "BAD_REQUEST"
    response = error(api.post(f"/api/workspace/{api.ws}/agents", json=body), status, code)
    assert sorted(error_fields(response)) == sorted(fields)
    assert api.workspace()["agents"] == []


# --- common to the set-up routes ----------------------------------------------------


@pytest.mark.parametrize("item", ["stages", "tags", "segmentations", "agents"])
def test_setup_body_must_be_a_json_object(api: Api, item: str) -> None:
    for content in (b"[]", b'"x"', b"{", b""):
        error(
            api.post(
                f"/api/workspace/{api.ws}/{item}",
                content=content,
                headers={"Content-Type": "application/json"},
            ),
            400,
            "BAD_REQUEST",
        )


@pytest.mark.parametrize("item", ["stages", "tags", "segmentations", "agents"])
def test_setup_accepts_a_matching_body_workspace_id(api: Api, item: str) -> None:
    body = {
        "stages": {"kind": "contact", "name": "S"},
        "tags": {"name": "T"},
        "segmentations": {"name": "G"},
        "agents": {"name": "A", "email": unique_email()},
    }[item]
    created = ok_data(
        api.post(f"/api/workspace/{api.ws}/{item}", json={**body, "workspaceId": api.ws})
    )
    key = "contactStages" if item == "stages" else item
    assert created in api.workspace()[key]
