"""Workspace set-up (C): stages, tags, segmentations and agents."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.client import UUID7, Api, error, error_fields, ok_data, unique_email
from tests.workspaces.test_workspace import create_workspace

STAGE_CREATED = "Stage created successfully."
TAG_CREATED = "Tag created successfully."
SEGMENTATION_CREATED = "Segmentation created successfully."
AGENT_CREATED = "Agent created successfully."


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
