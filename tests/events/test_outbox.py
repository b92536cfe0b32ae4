"""Contract D.1: every acknowledged change has its event, with the record as answered,
its version, and what it set; no event for a change that was refused."""

from __future__ import annotations

from typing import Any

from tests.client import Api, error, ok_data

EVENT_KEYS = [
    "id",
    "type",
    "workspaceId",
    "createdAt",
    "recordId",
    "recordVersion",
    "changed",
    "data",
    "actor",  # contract J.4
]


def all_events(api: Api, **params: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    after = None
    while True:
        query = {**params, "pageSize": "100", **({"after": after} if after else {})}
        data = ok_data(api.get("/api/events", params=query), "Successfully obtained list.")
        out.extend(data["events"])
        if not data["events"]:
            return out
        after = data["next"]


def history(api: Api, kind: str, record_id: str) -> list[dict[str, Any]]:
    data = ok_data(api.get(f"/api/{kind}/{record_id}/history", params={"pageSize": "100"}))
    assert list(data) == ["id", "events", "next"]
    return list(data["events"])


def test_create_update_events_carry_the_answer(api: Api) -> None:
    response = api.post("/api/contact", json={"name": "Ana", "email": "ana.d1@example.com"})
    created = ok_data(response)["contact"]
    etag = response.headers["ETag"]
    updated = api.update_contact(
        created["id"], {"paramToUpdate": "lastMessage", "lastMessage": "hola"}
    )
    after = ok_data(updated)["contact"]
    events = history(api, "contact", created["id"])
    assert [e["type"] for e in events] == ["contact.created", "contact.updated"]
    first, second = events
    for event in events:
        assert list(event) == EVENT_KEYS
        assert event["id"].startswith("evt_")
        assert event["workspaceId"] == api.ws
        assert event["recordId"] == created["id"]
        assert event["createdAt"].endswith("Z") and len(event["createdAt"]) == 27
    assert first["data"] == created and first["changed"] == []
    # The account's key acted (J.4): first-edition keys have no name.
    assert first["actor"] == {"type": "key", "id": api.account.key_id, "name": ""}
    assert first["recordVersion"] == 1 and etag == '"1"'
    assert second["data"] == after
    assert second["recordVersion"] == 2 and updated.headers["ETag"] == '"2"'
    assert second["changed"] == ["lastMessage", "lastMessageDate"]
    # The event's time is the time of the change.
    assert second["createdAt"] == after["lastMessageDate"]


def test_changed_names_the_consequences_in_key_order(api: Api) -> None:
    contact = api.create_contact()
    agent = api.add_agent()
    stage = api.stage_ids("contact")[1]
    api.set_contact(contact["id"], stageId=stage)
    api.set_contact(contact["id"], isSolved=True)
    api.set_contact(contact["id"], assignedAgentId=agent["id"])
    api.set_contact(contact["id"], name="Bea", isRead=True)
    changed = [e["changed"] for e in history(api, "contact", contact["id"])[1:]]
    assert changed == [
        ["orderInCards", "orderInCardsLastUpdated", "stageId"],
        ["isSolved", "solvedByAgentId", "solvedDate"],
        ["assignedAgentId", "assignedAgentName"],
        ["isRead", "name"],
    ]

    deal = api.create_opportunity(amount=10)
    api.set_opportunity(deal["id"], amount=12)
    api.set_opportunity(deal["id"], winLossStatus=1)
    api.set_opportunity(deal["id"], finalAmount=11)
    api.set_opportunity(deal["id"], amount=13)  # finalAmount no longer follows
    changed = [e["changed"] for e in history(api, "opportunity", deal["id"])[1:]]
    assert changed == [
        ["finalAmount", "updatedDate", "amount"],
        ["opportStatus", "winLossStatus", "winLossDate", "updatedDate"],
        ["finalAmount", "updatedDate"],
        ["updatedDate", "amount"],
    ]


def test_stage_named_again_sets_nothing_else(api: Api) -> None:
    contact = api.create_contact()
    api.set_contact(contact["id"], stageId=contact["stageId"])
    assert history(api, "contact", contact["id"])[1]["changed"] == ["stageId"]


def test_deletes_and_activities(api: Api) -> None:
    a, b = api.create_contact(), api.create_contact()
    ok_data(
        api.post(
            "/api/contact/delete-batch",
            json={"contactIds": [{"ids": b["id"]}, {"ids": a["id"]}, {"ids": "nope"}]},
        )
    )
    for contact in (a, b):
        deleted = history(api, "contact", contact["id"])[-1]
        assert deleted["type"] == "contact.deleted"
        assert deleted["recordVersion"] == 2 and deleted["changed"] == []
        assert deleted["data"]["id"] == contact["id"]
        assert list(deleted["data"]) == list(contact)
    feed = [e for e in all_events(api) if e["type"] == "contact.deleted"]
    assert [e["recordId"] for e in feed] == [b["id"], a["id"]]  # the body's order

    c = api.create_contact()
    ok_data(api.post(f"/api/contact/{c['id']}/activities", json={"content": "called"}))
    event = history(api, "contact", c["id"])[-1]
    assert event["type"] == "contact.activity.created"
    assert list(event["data"]) == ["contactId", "activity"]
    assert event["data"]["contactId"] == c["id"]
    activity = event["data"]["activity"]
    assert list(activity) == ["id", "categoryType", "content", "date", "createdBy"]
    assert activity["categoryType"] is None and activity["content"] == "called"
    assert event["recordVersion"] == 1

    deal = api.create_opportunity()
    ok_data(
        api.post(
            f"/api/opportunity/{deal['id']}/agent/activities",
            json={"categoryType": "Calls", "content": "demo", "date": "2026-01-02T03:04:05Z"},
        )
    )
    event = history(api, "opportunity", deal["id"])[-1]
    assert event["type"] == "opportunity.activity.created"
    assert list(event["data"]) == ["opportunityId", "activity"]
    activity = event["data"]["activity"]
    assert activity["categoryType"] == "Calls"
    assert activity["date"] == "2026-01-02T03:04:05.000000Z"
    assert event["recordVersion"] == 2  # an activity is a change of the opportunity
    ok_data(api.delete(f"/api/opportunity/{deal['id']}"))
    events = history(api, "opportunity", deal["id"])
    assert events[-1]["type"] == "opportunity.deleted"
    assert events[-1]["recordVersion"] == 3
    assert events[-1]["data"]["deletionDate"] is not None


def test_refused_changes_have_no_event(api: Api) -> None:
    contact = api.create_contact(email="taken.d1@example.com")
    other = api.create_contact()
    before = len(all_events(api))
    error(
        api.update_contact(other["id"], {"paramToUpdate": "email", "email": "bad"}),
        422,
        "VALIDATION_ERROR",
    )
    error(
        api.update_contact(
            other["id"], {"paramToUpdate": "email", "email": "taken.d1@example.com"}
        ),
        409,
        "DUPLICATE_CONTACT",
    )
    error(
        api.update_contact(
            other["id"], {"paramToUpdate": "name", "name": "X"}, headers={"If-Match": '"9"'}
        ),
        412,
        "PRECONDITION_FAILED",
    )
    error(
        api.post("/api/contact", json={"name": "B", "email": "taken.d1@example.com"}),
        409,
        "DUPLICATE_CONTACT",
    )
    # Workspace set-up is not recorded.
    api.add_tag()
    api.add_agent()
    api.add_stage()
    assert len(all_events(api)) == before
    assert contact["id"]


def test_events_stay_in_their_workspace(api: Api, other_api: Api) -> None:
    mine = api.create_contact()
    theirs = other_api.create_contact()
    assert theirs["id"] not in {e["recordId"] for e in all_events(api)}
    assert mine["id"] not in {e["recordId"] for e in all_events(other_api)}
    error(api.get(f"/api/contact/{theirs['id']}/history"), 404, "CONTACT_NOT_FOUND")
    last = all_events(other_api)[-1]["id"]
    error(api.get("/api/events", params={"after": last}), 400, "INVALID_CURSOR")
