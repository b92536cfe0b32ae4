"""Assigned-only agents (contract J.2): with `agentsSeeOnlyAssigned`, a user with the role
agent sees and changes only the contacts assigned to its agents or to none, and the
opportunities assigned to it or whose contact it sees. Any other record is answered
exactly as an unknown one, everywhere it could show."""

from __future__ import annotations

from typing import Any

import pytest

from tests.client import Api, ok_data, unique_email
from tests.people.conftest import Browser, person

UNKNOWN = "01a21a92-0000-7000-8000-000000000000"


def _set(owner_api: Api, on: bool) -> dict[str, Any]:
    return ok_data(
        owner_api.put(
            f"/api/workspace/{owner_api.ws}",
            json={"paramToUpdate": "agentsSeeOnlyAssigned", "agentsSeeOnlyAssigned": on},
        ),
        "Workspace updated successfully.",
    )


@pytest.fixture
def world(owner_api: Api) -> dict[str, Any]:
    # Its agent's e-mail differs in case, beyond ASCII too (SQLite's own lower() is ASCII's).
    agent = person(owner_api, "agent", email="ñandú." + unique_email())
    mine = owner_api.add_agent(name="Me", email=agent.user["email"].upper())
    other = owner_api.add_agent(name="Other")
    c = {
        "mine": owner_api.create_contact(
            name="Mine", email=unique_email(), assignedAgentId=mine["id"]
        ),
        "free": owner_api.create_contact(name="Free", email=unique_email()),
        "other": owner_api.create_contact(
            name="Other", email=unique_email(), assignedAgentId=other["id"]
        ),
    }
    o = {
        "mine": owner_api.create_opportunity(
            name="Deal mine", amount=1, assignedAgentId=mine["id"], contactId=c["other"]["id"]
        ),
        "via free": owner_api.create_opportunity(
            name="Deal free", amount=2, contactId=c["free"]["id"]
        ),
        "other": owner_api.create_opportunity(
            name="Deal other", amount=4, contactId=c["other"]["id"]
        ),
        "loose": owner_api.create_opportunity(name="Deal loose", amount=8),
    }
    view = _set(owner_api, True)
    assert list(view)[-3:] == ["updatedAt", "agentsSeeOnlyAssigned", "defaultCountry"]
    assert view["agentsSeeOnlyAssigned"] is True
    return {"agent": agent, "contacts": c, "opportunities": o}


def _get(b: Browser, api: Api, path: str, **params: str):
    return b.request("GET", path, params=params, headers={"x-workspace-id": api.ws})


def test_the_setting_is_shown_and_off_by_default(owner_api: Api) -> None:
    view = ok_data(owner_api.get(f"/api/workspace/{owner_api.ws}"))
    assert view["agentsSeeOnlyAssigned"] is False
    renamed = ok_data(owner_api.put(f"/api/workspace/{owner_api.ws}", json={"name": "Renamed"}))
    assert renamed["name"] == "Renamed"
    viewer = person(owner_api, "viewer")
    refused = viewer.request(
        "PUT",
        f"/api/workspace/{owner_api.ws}",
        json={"name": "X"},
        headers={"x-workspace-id": owner_api.ws},
    )
    assert refused.json()["data"] == {"required": "workspace:manage"}


def test_lists_searches_boards_and_the_pipeline_show_only_what_the_agent_sees(
    owner_api: Api, world: dict[str, Any]
) -> None:
    agent, c, o = world["agent"], world["contacts"], world["opportunities"]
    listed = ok_data(_get(agent, owner_api, "/api/contact"))["data"]
    assert {x["id"] for x in listed} == {c["mine"]["id"], c["free"]["id"]}
    deals = ok_data(_get(agent, owner_api, "/api/opportunity"))["data"]
    assert {x["id"] for x in deals} == {o["mine"]["id"], o["via free"]["id"]}
    found = ok_data(_get(agent, owner_api, "/api/contact/searchByEmail", email=c["other"]["email"]))
    assert found == {"contactId": "", "data": []}
    board = ok_data(_get(agent, owner_api, "/api/contact/board"))
    on_board = {
        card["id"] if "id" in card else card["record"]["id"]
        for column in board["columns"]
        for card in column["cards"]
    }
    assert c["other"]["id"] not in on_board and c["mine"]["id"] in on_board
    assert sum(column["count"] for column in board["columns"]) == 2
    pipeline = ok_data(_get(agent, owner_api, "/api/opportunity/pipeline"))
    assert sum(s["count"] for s in pipeline["stages"]) == 2
    # A viewer (not an agent) sees everything.
    viewer = person(owner_api, "viewer")
    assert len(ok_data(_get(viewer, owner_api, "/api/contact"))["data"]) == 3


def test_a_record_it_cannot_see_is_answered_as_an_unknown_one(
    owner_api: Api, world: dict[str, Any]
) -> None:
    agent, c, o = world["agent"], world["contacts"], world["opportunities"]
    ws = {"x-workspace-id": owner_api.ws}
    hidden, unknown = c["other"]["id"], UNKNOWN

    def same(path: str, method: str = "GET", **kw: Any) -> None:
        a = agent.request(method, path.format(hidden), headers=ws, **kw)
        b = agent.request(method, path.format(unknown), headers=ws, **kw)
        assert (a.status_code, a.json()["errorCode"]) == (b.status_code, b.json()["errorCode"])
        assert a.status_code == 404, a.text
        assert a.json()["message"].replace(hidden, unknown) == b.json()["message"]

    same("/api/contact/{}")
    same("/api/contact/{}/history")
    same("/api/contact/{}/activities")
    same("/api/contact/{}/activities", "POST", json={"content": "hi"})
    for which in ("other", "loose"):
        hidden = o[which]["id"]
        same("/api/opportunity/{}")
        same("/api/opportunity/{}/history")
    update = agent.request(
        "PUT",
        "/api/contact",
        params={"id": c["other"]["id"], "workspaceId": owner_api.ws},
        json={"name": "Hacked"},
        headers=ws,
    )
    assert update.status_code == 404
    assert owner_api.get_contact(c["other"]["id"]).json()["data"]["data"][0]["name"] == "Other"
    assert agent.request("GET", f"/api/contact/{c['mine']['id']}", headers=ws).status_code == 200


def test_naming_a_contact_it_cannot_see_is_naming_an_unknown_one(
    owner_api: Api, world: dict[str, Any]
) -> None:
    """An opportunity's `contactId` of a hidden contact: the same 422 as an unknown id,
    or creating and re-linking opportunities would tell which ids exist."""
    agent: Browser = world["agent"]
    ws = {"x-workspace-id": owner_api.ws}
    answers = []
    for contact_id in (world["contacts"]["other"]["id"], UNKNOWN):
        body = {"name": "Probe", "amount": 1, "contactId": contact_id}
        created = agent.request("POST", "/api/opportunity", json=body, headers=ws)
        relinked = agent.request(
            "PUT",
            "/api/opportunity",
            params={"id": world["opportunities"]["via free"]["id"]},
            json={"paramToUpdate": "contactId", "contactId": contact_id},
            headers=ws,
        )
        answers.append([(r.status_code, r.json()["data"]) for r in (created, relinked)])
    assert answers[0] == answers[1]
    assert answers[0][0][0] == 422 and answers[0][1][0] == 422
    # The owner, who sees it, may name it.
    owner_api.create_opportunity(contactId=world["contacts"]["other"]["id"])


def test_the_feed_leaves_out_the_events_of_records_it_cannot_see(
    owner_api: Api, world: dict[str, Any]
) -> None:
    agent, c = world["agent"], world["contacts"]
    events = ok_data(_get(agent, owner_api, "/api/events", pageSize="100"))["events"]
    seen = {e["recordId"] for e in events}
    assert c["mine"]["id"] in seen and c["free"]["id"] in seen
    assert c["other"]["id"] not in seen
    everything = ok_data(owner_api.get("/api/events", params={"pageSize": "100"}))["events"]
    assert c["other"]["id"] in {e["recordId"] for e in everything}
    # Nor does `after=end` name one: its `next` is the last event the agent may see.
    owner_api.set_contact(c["other"]["id"], name="Changed where the agent cannot see")
    end = ok_data(_get(agent, owner_api, "/api/events", after="end"))
    hidden = ok_data(owner_api.get("/api/events", params={"after": "end"}))["next"]
    assert end["events"] == [] and end["next"] == events[-1]["id"] != hidden


def test_turned_off_the_agent_sees_everything_again(owner_api: Api, world: dict[str, Any]) -> None:
    _set(owner_api, False)
    listed = ok_data(_get(world["agent"], owner_api, "/api/contact"))["data"]
    assert len(listed) == 3


def test_a_duplicate_it_cannot_see_is_refused_without_naming_it(
    owner_api: Api, world: dict[str, Any]
) -> None:
    agent, c, o = world["agent"], world["contacts"], world["opportunities"]
    ws = {"x-workspace-id": owner_api.ws}
    hidden = c["other"]
    made = agent.request(
        "POST", "/api/contact", json={"name": "Twin", "email": hidden["email"]}, headers=ws
    )
    body = made.json()
    assert (made.status_code, body["errorCode"]) == (409, "DUPLICATE_CONTACT")
    assert hidden["id"] not in made.text and "existingId" not in (body["data"] or {})
    seen = agent.request(
        "POST", "/api/contact", json={"name": "Twin", "email": c["mine"]["email"]}, headers=ws
    )
    assert seen.json()["data"]["existingId"] == c["mine"]["id"]
    upsert = agent.request(
        "POST",
        "/api/contact/upsert-batch",
        json={
            "workspaceId": owner_api.ws,
            "matchBy": "email",
            "contacts": [
                {"email": hidden["email"], "name": "Overwritten"},
                {"email": c["mine"]["email"], "name": "Mine again"},
            ],
        },
        headers=ws,
    )
    assert upsert.status_code == 200, upsert.text
    assert hidden["id"] not in upsert.text
    items = ok_data(upsert)["results"]
    assert items[0]["status"] == "failed" and items[1]["status"] == "updated"
    still = ok_data(owner_api.get_contact(hidden["id"]))["data"][0]
    assert still["name"] == "Other"
    board = ok_data(_get(agent, owner_api, "/api/opportunity/board"))
    cards = {card["record"]["id"]: card for column in board["columns"] for card in column["cards"]}
    assert cards[o["mine"]["id"]]["contactName"] is None


def test_conversations_follow_their_contact(owner_api: Api, world: dict[str, Any]) -> None:
    """K.1 under J.2: the messages of a contact the agent cannot see are unknown to it, in
    the conversation, the message routes and the feed."""
    agent, c = world["agent"], world["contacts"]
    ws = {"x-workspace-id": owner_api.ws}
    recorded = {}
    for which in ("mine", "other"):
        recorded[which] = ok_data(
            owner_api.post(
                f"/api/contact/{c[which]['id']}/messages/record",
                json={"direction": "in", "text": f"to {which}"},
            )
        )["message"]
    mine = agent.request("GET", f"/api/contact/{c['mine']['id']}/messages", headers=ws)
    assert [m["text"] for m in ok_data(mine)["messages"]] == ["to mine"]
    hidden = agent.request("GET", f"/api/contact/{c['other']['id']}/messages", headers=ws)
    assert (hidden.status_code, hidden.json()["errorCode"]) == (404, "CONTACT_NOT_FOUND")
    body = {"direction": "out", "text": "sneak"}
    path = f"/api/contact/{c['other']['id']}/messages/record"
    assert agent.request("POST", path, json=body, headers=ws).status_code == 404
    retry = agent.request("POST", f"/api/message/{recorded['other']['id']}/retry", headers=ws)
    unknown = agent.request("POST", f"/api/message/{UNKNOWN}/retry", headers=ws)
    assert retry.status_code == unknown.status_code == 404
    assert retry.json()["errorCode"] == unknown.json()["errorCode"] == "MESSAGE_NOT_FOUND"
    events = ok_data(_get(agent, owner_api, "/api/events", pageSize="100"))["events"]
    seen = {e["recordId"] for e in events}
    assert recorded["mine"]["id"] in seen and recorded["other"]["id"] not in seen
