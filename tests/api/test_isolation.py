"""Isolation: a key of another account cannot use a workspace (403), and a record of one
workspace is invisible through another workspace of the same account (404 for an id in the
path or query, 422 for a reference in a body). Afterwards the victim's data is unchanged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.api.test_http import assert_no_leak, snapshot
from tests.client import Api, error, error_fields, ok_data, unique_email, unique_phone


@dataclass
class Victim:
    api: Api
    contact: dict[str, Any]
    opportunity: dict[str, Any]
    tag: dict[str, Any]
    agent: dict[str, Any]
    segmentation: dict[str, Any]
    contact_stage: str
    opportunity_stage: str


@pytest.fixture
def victim(api: Api) -> Victim:
    """A workspace with one record of every kind, all linked to each other."""
    tag = api.add_tag()
    agent = api.add_agent()
    segmentation = api.add_segmentation()
    contact_stage = api.add_stage("contact")["id"]
    opportunity_stage = api.add_stage("opportunity")["id"]
    contact = api.create_contact(
        name="Victim",
        internalWhatsappNumber=unique_phone(),
        tags=[tag["id"]],
        assignedAgentId=agent["id"],
        segmentationId=segmentation["id"],
        stageId=contact_stage,
        variables=[{"name": "secret", "value": "42"}],
    )
    opportunity = api.create_opportunity(
        name="Victim deal",
        contactId=contact["id"],
        assignedAgentId=agent["id"],
        segmentationId=segmentation["id"],
        stageId=opportunity_stage,
    )
    return Victim(
        api, contact, opportunity, tag, agent, segmentation, contact_stage, opportunity_stage
    )


def second_workspace(api: Api) -> Api:
    """Another workspace of the same account, used with the same key."""
    data = ok_data(api.post("/api/workspace", json={"name": "Sibling"}, workspace=None))
    sibling = Api(api.http, api.account)
    sibling.ws = data["id"]
    return sibling


def activity_body(workspace_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "content": "Called",
        "date": "2025-04-07T21:56:19.325443Z",
        "categoryType": "Calls",
    }
    if workspace_id:
        body["workspaceId"] = workspace_id
    return body


# (label, method, path, params, body, send the workspace header)
Route = tuple[str, str, str, dict[str, str] | None, Any, bool]


def routes_into(v: Victim) -> list[Route]:
    """Every route, aimed at the victim's workspace and records."""
    ws = v.api.ws
    cid = v.contact["id"]
    oid = v.opportunity["id"]
    rename = {"paramToUpdate": "name", "name": "Hacked"}
    return [
        ("get contact (header)", "GET", f"/api/contact/{cid}", None, None, True),
        ("get contact (query)", "GET", f"/api/contact/{cid}", {"workspaceId": ws}, None, False),
        (
            "update contact",
            "PUT",
            "/api/contact",
            {"id": cid, "workspaceId": ws},
            rename,
            True,
        ),
        (
            "create contact (header)",
            "POST",
            "/api/contact",
            None,
            {"name": "Intruder", "email": unique_email()},
            True,
        ),
        (
            "create contact (body)",
            "POST",
            "/api/contact",
            None,
            {"workspaceId": ws, "name": "Intruder", "email": unique_email()},
            False,
        ),
        ("update opportunity", "PUT", "/api/opportunity", {"id": oid}, rename, True),
        (
            "update opportunity (query too)",
            "PUT",
            "/api/opportunity",
            {"id": oid, "workspaceId": ws},
            rename,
            True,
        ),
        (
            "create opportunity (header)",
            "POST",
            "/api/opportunity",
            None,
            {"name": "Intruder", "amount": 1},
            True,
        ),
        (
            "create opportunity (body)",
            "POST",
            "/api/opportunity",
            None,
            {"workspaceId": ws, "name": "Intruder", "amount": 1},
            False,
        ),
        ("get workspace", "GET", f"/api/workspace/{ws}", None, None, False),
        ("get workspace (header)", "GET", f"/api/workspace/{ws}", None, None, True),
        (
            "add stage",
            "POST",
            f"/api/workspace/{ws}/stages",
            None,
            {"kind": "contact", "name": "X"},
            False,
        ),
        ("add tag", "POST", f"/api/workspace/{ws}/tags", None, {"name": "X", "color": None}, False),
        (
            "add segmentation",
            "POST",
            f"/api/workspace/{ws}/segmentations",
            None,
            {"name": "X"},
            False,
        ),
        (
            "add agent",
            "POST",
            f"/api/workspace/{ws}/agents",
            None,
            {"name": "X", "email": unique_email()},
            False,
        ),
        # The rest of the product (contract B.3).
        ("list contacts", "GET", "/api/contact", {"workspaceId": ws}, None, False),
        ("list contacts (header)", "GET", "/api/contact", None, None, True),
        (
            "search by email",
            "GET",
            "/api/contact/searchByEmail",
            {"email": v.contact["email"], "workspaceId": ws},
            None,
            False,
        ),
        (
            "search by phone",
            "GET",
            "/api/contact/searchByCellphone",
            {"cellphone": v.contact["internalWhatsappNumber"], "workspaceId": ws},
            None,
            False,
        ),
        (
            "delete contacts",
            "POST",
            "/api/contact/delete-batch",
            None,
            {"workspaceId": ws, "contactIds": [{"ids": cid}]},
            False,
        ),
        (
            "delete contacts (header)",
            "POST",
            "/api/contact/delete-batch",
            None,
            {"contactIds": [{"ids": cid}]},
            True,
        ),
        (
            "contact activity",
            "POST",
            f"/api/contact/{cid}/activities",
            None,
            {"workspaceId": ws, "content": "x"},
            False,
        ),
        ("list opportunities", "GET", "/api/opportunity", {"workspaceId": ws}, None, False),
        ("get opportunity", "GET", f"/api/opportunity/{oid}", {"workspaceId": ws}, None, False),
        ("get opportunity (header)", "GET", f"/api/opportunity/{oid}", None, None, True),
        ("delete opportunity", "DELETE", f"/api/opportunity/{oid}", None, None, True),
        (
            "opportunity activity",
            "POST",
            f"/api/opportunity/{oid}/agent/activities",
            None,
            activity_body(ws),
            False,
        ),
    ]


def send(client: Api, route: Route, workspace_header: str) -> httpx.Response:
    _, method, path, params, body, with_header = route
    return client.request(
        method,
        path,
        params=params,
        json=body,
        workspace=workspace_header if with_header else None,
    )


# --- another account ---------------------------------------------------------------------


def test_key_of_another_account_is_403_on_every_route(
    victim: Victim, other_api: Api, database_url: str
) -> None:
    before = snapshot(database_url, victim.api.account.account_id)
    for route in routes_into(victim):
        response = send(other_api, route, victim.api.ws)
        body = error(response, 403, "FORBIDDEN")
        assert body["data"] is None, route[0]
        assert_no_leak(response)
        for secret in (victim.contact["name"], victim.contact["email"], "Victim deal"):
            assert secret not in response.text, route[0]
    assert snapshot(database_url, victim.api.account.account_id) == before


def test_the_attackers_own_workspace_header_does_not_help(
    victim: Victim, other_api: Api, database_url: str
) -> None:
    """Naming their own workspace in the header and the victim's elsewhere: still 403."""
    before = snapshot(database_url, victim.api.account.account_id)
    ws = victim.api.ws
    cid = victim.contact["id"]
    attempts = [
        other_api.get(f"/api/contact/{cid}", params={"workspaceId": ws}),
        other_api.put(
            "/api/contact",
            params={"id": cid, "workspaceId": ws},
            json={"paramToUpdate": "name", "name": "Hacked"},
        ),
        other_api.post("/api/contact", json={"workspaceId": ws, "name": "X", "email": "x@y.co"}),
        other_api.post("/api/opportunity", json={"workspaceId": ws, "name": "X", "amount": 1}),
        other_api.put(
            "/api/opportunity",
            params={"id": victim.opportunity["id"], "workspaceId": ws},
            json={"paramToUpdate": "name", "name": "Hacked"},
        ),
        other_api.get(f"/api/workspace/{ws}"),
        other_api.post(f"/api/workspace/{ws}/tags", json={"name": "X"}),
    ]
    for response in attempts:
        error(response, 403, "FORBIDDEN")
    assert snapshot(database_url, victim.api.account.account_id) == before


def test_records_of_another_account_are_404_in_the_callers_own_workspace(
    victim: Victim, other_api: Api, database_url: str
) -> None:
    before = snapshot(database_url, victim.api.account.account_id)
    cid = victim.contact["id"]
    oid = victim.opportunity["id"]
    error(other_api.get_contact(cid), 404, "CONTACT_NOT_FOUND")
    error(
        other_api.update_contact(cid, {"paramToUpdate": "name", "name": "Hacked"}),
        404,
        "CONTACT_NOT_FOUND",
    )
    error(
        other_api.update_opportunity(oid, {"paramToUpdate": "name", "name": "Hacked"}),
        404,
        "OPPORTUNITY_NOT_FOUND",
    )
    assert snapshot(database_url, victim.api.account.account_id) == before


def test_references_to_another_accounts_records_are_422(victim: Victim, other_api: Api) -> None:
    body = error(
        other_api.post(
            "/api/contact",
            json={
                "name": "X",
                "email": unique_email(),
                "stageId": victim.contact_stage,
                "tags": [victim.tag["id"]],
                "assignedAgentId": victim.agent["id"],
                "segmentationId": victim.segmentation["id"],
            },
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert set(error_fields(body)) == {"stageId", "tags[0]", "assignedAgentId", "segmentationId"}
    body = error(
        other_api.post(
            "/api/opportunity",
            json={"name": "X", "amount": 1, "contactId": victim.contact["id"]},
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["contactId"]


# --- another workspace of the same account ----------------------------------------------


def test_ids_of_a_sibling_workspace_are_404(victim: Victim, database_url: str) -> None:
    sibling = second_workspace(victim.api)
    before = snapshot(database_url, victim.api.account.account_id, workspace_id=victim.api.ws)
    cid = victim.contact["id"]
    oid = victim.opportunity["id"]
    error(sibling.get_contact(cid), 404, "CONTACT_NOT_FOUND")
    error(
        sibling.get_contact(cid, params={"workspaceId": sibling.ws}, workspace=None),
        404,
        "CONTACT_NOT_FOUND",
    )
    body = error(
        sibling.update_contact(cid, {"paramToUpdate": "name", "name": "Hacked"}),
        404,
        "CONTACT_NOT_FOUND",
    )
    assert cid in body["message"]
    error(
        sibling.update_opportunity(oid, {"paramToUpdate": "amount", "amount": 1}),
        404,
        "OPPORTUNITY_NOT_FOUND",
    )
    error(
        sibling.update_opportunity(
            oid,
            {"paramToUpdate": "name", "name": "x"},
            params={"id": oid, "workspaceId": sibling.ws},
        ),
        404,
        "OPPORTUNITY_NOT_FOUND",
    )
    assert (
        snapshot(database_url, victim.api.account.account_id, workspace_id=victim.api.ws) == before
    )


def test_sibling_ids_on_the_rest_of_the_routes(victim: Victim, database_url: str) -> None:
    sibling = second_workspace(victim.api)
    before = snapshot(database_url, victim.api.account.account_id, workspace_id=victim.api.ws)
    cid = victim.contact["id"]
    oid = victim.opportunity["id"]
    error(sibling.get(f"/api/opportunity/{oid}"), 404, "OPPORTUNITY_NOT_FOUND")
    error(sibling.delete(f"/api/opportunity/{oid}"), 404, "OPPORTUNITY_NOT_FOUND")
    error(
        sibling.post(f"/api/contact/{cid}/activities", json={"content": "x"}),
        404,
        "CONTACT_NOT_FOUND",
    )
    error(sibling.get(f"/api/contact/{cid}/activities"), 404, "CONTACT_NOT_FOUND")
    error(
        sibling.post(f"/api/opportunity/{oid}/agent/activities", json=activity_body()),
        404,
        "OPPORTUNITY_NOT_FOUND",
    )
    deleted = ok_data(
        sibling.post("/api/contact/delete-batch", json={"contactIds": [{"ids": cid}]}),
        "Contacts deleted successfully.",
    )
    assert deleted == {"deletedIds": [], "notFoundIds": [cid]}
    listed = ok_data(sibling.get("/api/contact"))
    assert listed["data"] == [] and listed["workspaceId"] == sibling.ws
    assert ok_data(sibling.get("/api/opportunity"))["data"] == []
    by_email = ok_data(
        sibling.get("/api/contact/searchByEmail", params={"email": victim.contact["email"]})
    )
    assert by_email == {"contactId": "", "data": []}
    by_phone = ok_data(
        sibling.get(
            "/api/contact/searchByCellphone",
            params={"cellphone": victim.contact["internalWhatsappNumber"]},
        )
    )
    assert by_phone == {"contactId": "", "data": []}
    assert (
        snapshot(database_url, victim.api.account.account_id, workspace_id=victim.api.ws) == before
    )
    # The victim still sees its records.
    assert ok_data(victim.api.get_contact(cid))["data"][0]["name"] == "Victim"
    assert [c["id"] for c in ok_data(victim.api.get("/api/contact"))["data"]] == [cid]


def test_sibling_references_on_create_are_422(victim: Victim, database_url: str) -> None:
    sibling = second_workspace(victim.api)
    before = snapshot(database_url, victim.api.account.account_id)
    body = error(
        sibling.post(
            "/api/contact",
            json={
                "name": "X",
                "email": unique_email(),
                "stageId": victim.contact_stage,
                "segmentationId": victim.segmentation["id"],
                "assignedAgentId": victim.agent["id"],
                "tags": [victim.tag["id"]],
            },
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert set(error_fields(body)) == {"stageId", "segmentationId", "assignedAgentId", "tags[0]"}
    body = error(
        sibling.post(
            "/api/opportunity",
            json={
                "name": "X",
                "amount": 1,
                "contactId": victim.contact["id"],
                "stageId": victim.opportunity_stage,
                "assignedAgentId": victim.agent["id"],
                "segmentationId": victim.segmentation["id"],
            },
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert set(error_fields(body)) == {"contactId", "stageId", "assignedAgentId", "segmentationId"}
    body = error(
        sibling.post(
            "/api/opportunity",
            json={"name": "X", "amount": 1, "assignedComercialId": victim.agent["id"]},
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["assignedComercialId"]
    # A tag given as {id} is checked the same way.
    body = error(
        sibling.post(
            "/api/contact",
            json={"name": "X", "email": unique_email(), "tags": [{"id": victim.tag["id"]}]},
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["tags[0]"]
    assert snapshot(database_url, victim.api.account.account_id) == before


@pytest.mark.parametrize(
    ("field", "value_of"),
    [
        ("stageId", lambda v: v.contact_stage),
        ("segmentationId", lambda v: v.segmentation["id"]),
        ("assignedAgentId", lambda v: v.agent["id"]),
        ("tags", lambda v: [v.tag["id"]]),
    ],
)
def test_sibling_references_on_contact_update_are_422(
    victim: Victim, database_url: str, field: str, value_of: Any
) -> None:
    sibling = second_workspace(victim.api)
    own = sibling.create_contact()
    before = snapshot(database_url, victim.api.account.account_id)
    body = error(
        sibling.update_contact(own["id"], {"paramToUpdate": field, field: value_of(victim)}),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["tags[0]" if field == "tags" else field]
    assert snapshot(database_url, victim.api.account.account_id) == before


def test_sibling_agent_as_solver_is_422(victim: Victim, database_url: str) -> None:
    sibling = second_workspace(victim.api)
    own = sibling.create_contact()
    before = snapshot(database_url, victim.api.account.account_id)
    body = error(
        sibling.update_contact(
            own["id"],
            {
                "paramToUpdate": "isSolved,solvedByAgentId",
                "isSolved": True,
                "solvedByAgentId": victim.agent["id"],
            },
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["solvedByAgentId"]
    assert snapshot(database_url, victim.api.account.account_id) == before


@pytest.mark.parametrize(
    ("field", "value_of"),
    [
        ("contactId", lambda v: v.contact["id"]),
        ("stageId", lambda v: v.opportunity_stage),
        ("assignedAgentId", lambda v: v.agent["id"]),
        ("segmentationId", lambda v: v.segmentation["id"]),
    ],
)
def test_sibling_references_on_opportunity_update_are_422(
    victim: Victim, database_url: str, field: str, value_of: Any
) -> None:
    sibling = second_workspace(victim.api)
    own = sibling.create_opportunity()
    before = snapshot(database_url, victim.api.account.account_id)
    body = error(
        sibling.update_opportunity(own["id"], {"paramToUpdate": field, field: value_of(victim)}),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == [field]
    assert snapshot(database_url, victim.api.account.account_id) == before


def test_a_contact_stage_is_not_an_opportunity_stage(victim: Victim) -> None:
    """Same workspace, wrong kind: also a bad reference."""
    api = victim.api
    body = error(
        api.post(
            "/api/opportunity", json={"name": "X", "amount": 1, "stageId": victim.contact_stage}
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["stageId"]
    body = error(
        api.update_contact(
            victim.contact["id"], {"paramToUpdate": "stageId", "stageId": victim.opportunity_stage}
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["stageId"]


def test_sibling_workspace_view_shows_only_its_own_items(victim: Victim) -> None:
    sibling = second_workspace(victim.api)
    view = sibling.workspace()
    assert view["tags"] == [] and view["agents"] == [] and view["segmentations"] == []
    victim_stages = {s["id"] for s in victim.api.workspace()["contactStages"]}
    assert victim_stages.isdisjoint(s["id"] for s in view["contactStages"])


def test_uniqueness_is_per_workspace(victim: Victim, other_api: Api) -> None:
    """The same email and phone may live in another workspace, of any account."""
    sibling = second_workspace(victim.api)
    for client in (sibling, other_api):
        contact = client.create_contact(
            email=victim.contact["email"].upper(),
            internalWhatsappNumber=victim.contact["internalWhatsappNumber"],
        )
        assert contact["workspaceId"] == client.ws
    # ...but not twice in the victim's own workspace.
    body = error(
        victim.api.post("/api/contact", json={"name": "Twin", "email": victim.contact["email"]}),
        409,
        "DUPLICATE_CONTACT",
    )
    assert body["data"]["existingId"] == victim.contact["id"]


def test_opportunity_codes_are_per_workspace(victim: Victim) -> None:
    sibling = second_workspace(victim.api)
    first = sibling.create_opportunity()
    year = first["opportCode"].split("-")[1]
    assert first["opportCode"] == f"OPP-{year}-0001"
    assert victim.opportunity["opportCode"] == f"OPP-{year}-0001"
    assert victim.api.create_opportunity()["opportCode"] == f"OPP-{year}-0002"


def test_a_query_workspace_naming_another_one_is_403_on_creates_too(api: Api) -> None:
    """Creates take their workspace from the header or the body, but a query `workspaceId`
    naming another workspace is refused as anywhere else, never silently ignored."""
    contact = api.create_contact()
    sibling = ok_data(api.post("/api/workspace", json={"name": "Sibling"}, workspace=None))["id"]
    elsewhere = {"workspaceId": sibling}
    before = ok_data(api.get("/api/contact"))["data"]
    for path, body in [
        ("/api/contact", {"name": "Nope", "email": unique_email()}),
        ("/api/opportunity", {"name": "Nope", "amount": 1}),
        (f"/api/contact/{contact['id']}/activities", {"content": "nope"}),
        ("/api/contact/delete-batch", {"contactIds": [{"ids": contact["id"]}]}),
    ]:
        refused = api.post(path, json=body, params=elsewhere)
        assert error(refused, 403, "FORBIDDEN")["message"] == (
            "The header 'x-workspace-id' and 'workspaceId' name different workspaces."
        ), path
    assert ok_data(api.get("/api/contact"))["data"] == before
    assert ok_data(api.get("/api/opportunity"))["data"] == []
    # The same workspace in the query is no conflict.
    body = {"name": "Yes", "email": unique_email()}
    same = api.post("/api/contact", json=body, params={"workspaceId": api.ws})
    assert ok_data(same)["contact"]["name"] == "Yes"
