"""Contract E.1: the newer form of the original API — updates without `paramToUpdate`,
aliases in updates (`phone`, `assignedComercialId`, `customFields`), and `search` for `q`."""

from __future__ import annotations

from typing import Any

from tests.client import Api, error, error_fields, ok_data, unique_email, unique_phone
from tests.events.test_outbox import history

UPDATED = "Contact updated successfully."


def put(api: Api, contact_id: str, body: Any) -> Any:
    return api.put("/api/contact", json=body, params={"id": contact_id, "workspaceId": api.ws})


def test_acceptance_stage_tags_and_search(api: Api) -> None:
    phone = unique_phone()
    contact = api.create_contact(internalWhatsappNumber=phone)
    stage = api.stage_ids("contact")[1]
    data = ok_data(put(api, contact["id"], {"stageId": stage}), UPDATED)
    assert list(data) == ["id", "contact"] and data["id"] == contact["id"]
    assert data["contact"]["stageId"] == stage
    tags = [api.add_tag()["id"], api.add_tag()["id"]]
    after = ok_data(put(api, contact["id"], {"tags": tags}), UPDATED)["contact"]
    assert [t["id"] for t in after["tags"]] == tags
    assert list(after) == list(contact)
    found = ok_data(
        api.get("/api/contact", params={"search": phone}), "List obtained successfully."
    )
    assert [c["id"] for c in found["data"]] == [contact["id"]]
    assert found["data"][0]["tags"] == after["tags"]


def test_same_answer_and_events_as_the_original_form(api: Api) -> None:
    a, b = api.create_contact(), api.create_contact()
    new = ok_data(put(api, a["id"], {"name": "Bea", "isRead": True, "id": a["id"]}), UPDATED)
    old = api.set_contact(b["id"], name="Bea", isRead=True)
    for key in ("name", "isRead", "lastname", "stageId", "isSolved"):
        assert new["contact"][key] == old[key]
    events = [history(api, "contact", c["id"])[-1] for c in (a, b)]
    assert [e["type"] for e in events] == ["contact.updated", "contact.updated"]
    assert events[0]["changed"] == events[1]["changed"] == ["isRead", "name"]
    assert events[0]["data"] == new["contact"] and events[0]["recordVersion"] == 2

    deal = api.create_opportunity(amount=10)
    response = api.put(
        "/api/opportunity", params={"id": deal["id"]}, json={"amount": 12, "winLossStatus": 1}
    )
    updated = ok_data(response, "Opportunity successfully updated.")["oportunity"]
    assert updated["amount"] == 12 and updated["finalAmount"] == 12
    assert updated["opportStatus"] == 2 and updated["winLossDate"] is not None
    assert response.headers["ETag"] == '"2"'
    event = history(api, "opportunity", deal["id"])[-1]
    assert event["type"] == "opportunity.updated" and event["data"] == updated
    assert event["changed"] == [
        "opportStatus",
        "winLossStatus",
        "winLossDate",
        "finalAmount",
        "updatedDate",
        "amount",
    ]


def test_same_rules_without_param_to_update(api: Api) -> None:
    contact = api.create_contact()
    before = ok_data(api.get_contact(contact["id"]))
    # unknown and read-only keys: 400 naming them, as when named in paramToUpdate
    body = error(put(api, contact["id"], {"name": "B", "nickname": "x"}), 400, "BAD_REQUEST")
    assert error_fields(body) == ["nickname"] and "Updatable fields: " in body["message"]
    body = error(put(api, contact["id"], {"creationDate": "x"}), 400, "BAD_REQUEST")
    assert error_fields(body) == ["creationDate"] and "read-only" in body["message"]
    body = error(put(api, contact["id"], {"solvedByAgentId": None}), 400, "BAD_REQUEST")
    assert error_fields(body) == ["solvedByAgentId"]
    # every invalid value in one 422
    body = error(put(api, contact["id"], {"isRead": "yes", "email": "no"}), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["isRead", "email"]
    # the body id must match
    body = error(put(api, contact["id"], {"name": "B", "id": "other"}), 400, "BAD_REQUEST")
    assert error_fields(body) == ["id"]
    # a duplicate email is the same 409
    other = api.create_contact()
    body = error(put(api, contact["id"], {"email": other["email"]}), 409, "DUPLICATE_CONTACT")
    assert body["data"]["existingId"] == other["id"]
    assert ok_data(api.get_contact(contact["id"])) == before


def test_aliases_in_updates(api: Api) -> None:
    contact = api.create_contact()
    phone, phone2 = unique_phone(), unique_phone()
    # the newer form and the original form both take an alias
    got = ok_data(put(api, contact["id"], {"phone": f"+{phone}"}), UPDATED)["contact"]
    assert got["internalWhatsappNumber"] == phone
    body = {"paramToUpdate": "phone", "phone": phone2}
    got = ok_data(put(api, contact["id"], body), UPDATED)["contact"]
    assert got["internalWhatsappNumber"] == phone2
    # named under one of its names, carried under the other (either way round)
    for body in (
        {"paramToUpdate": "internalWhatsappNumber", "phone": phone},
        {"paramToUpdate": "phone", "internalWhatsappNumber": phone2},
        {"paramToUpdate": "variables", "customFields": [{"name": "city", "value": "Lima"}]},
    ):
        got = ok_data(put(api, contact["id"], body), UPDATED)["contact"]
    assert got["internalWhatsappNumber"] == phone2
    assert got["variables"] == [{"name": "city", "value": "Lima"}]
    # errors name the key the client used
    body = error(put(api, contact["id"], {"phone": "12"}), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["phone"]
    body = {"paramToUpdate": "phone", "phone": "12"}
    assert error_fields(error(put(api, contact["id"], body), 422, "VALIDATION_ERROR")) == ["phone"]
    # an alias and its wire name: equal values are one value; different ones a 422
    same = {"phone": phone, "internalWhatsappNumber": phone}
    assert ok_data(put(api, contact["id"], same))["contact"]["internalWhatsappNumber"] == phone
    differ = {"phone": phone, "internalWhatsappNumber": phone2}
    body = error(put(api, contact["id"], differ), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["phone"]
    named = {"paramToUpdate": "internalWhatsappNumber", **differ}
    assert error_fields(error(put(api, contact["id"], named), 422, "VALIDATION_ERROR"))
    # a duplicate names the alias used
    holder = api.create_contact(internalWhatsappNumber=unique_phone())
    body = error(
        put(api, contact["id"], {"phone": holder["internalWhatsappNumber"]}),
        409,
        "DUPLICATE_CONTACT",
    )
    assert error_fields(body) == ["phone"] and body["data"]["existingId"] == holder["id"]

    agent = api.add_agent()
    deal = api.create_opportunity()
    for body in (
        {"assignedComercialId": agent["id"]},
        {"paramToUpdate": "assignedComercialId", "assignedComercialId": agent["id"]},
        {"paramToUpdate": "assignedAgentId", "assignedComercialId": agent["id"]},
    ):
        response = api.put("/api/opportunity", params={"id": deal["id"]}, json=body)
        assert ok_data(response)["oportunity"]["assignedAgentId"] == agent["id"]
    response = api.put(
        "/api/opportunity", params={"id": deal["id"]}, json={"assignedComercialId": "nope"}
    )
    assert error_fields(error(response, 422, "VALIDATION_ERROR")) == ["assignedComercialId"]


def test_custom_fields_is_variables(api: Api) -> None:
    created = ok_data(
        api.post(
            "/api/contact",
            json={
                "name": "Ana",
                "email": unique_email(),
                "customFields": [{"name": "plan", "value": "gold"}],
            },
        ),
        "Contact created successfully.",
    )["contact"]
    assert created["variables"] == [{"name": "plan", "value": "gold"}]
    assert "customFields" not in created
    got = ok_data(put(api, created["id"], {"customFields": [{"name": "score", "value": 3}]}))
    assert got["contact"]["variables"] == [
        {"name": "plan", "value": "gold"},
        {"name": "score", "value": 3},
    ]
    body = {"paramToUpdate": "customFields", "customFields": [{"name": "plan", "value": None}]}
    got = ok_data(put(api, created["id"], body))
    assert got["contact"]["variables"][0] == {"name": "plan", "value": None}
    body = error(put(api, created["id"], {"customFields": [{"value": 1}]}), 422, "VALIDATION_ERROR")
    assert error_fields(body)[0].startswith("customFields")
    both = {
        "name": "Ana",
        "email": unique_email(),
        "customFields": [{"name": "a", "value": 1}],
        "variables": [{"name": "b", "value": 1}],
    }
    body = error(api.post("/api/contact", json=both), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["customFields"]


def test_search_is_q(api: Api) -> None:
    a = api.create_contact(name="Zebulon")
    api.create_contact(name="Other")
    for params in ({"search": "zebul"}, {"q": "zebul"}, {"q": "zebul", "search": "zebul"}):
        data = ok_data(api.get("/api/contact", params=params), "List obtained successfully.")
        assert [c["id"] for c in data["data"]] == [a["id"]], params
    body = error(
        api.get("/api/contact", params={"q": "zebul", "search": "other"}), 400, "BAD_REQUEST"
    )
    assert error_fields(body) == ["search"]
    # a token of a `search` list continues a `q` list of the same words
    api.create_contact(name="Zebulon two")
    first = ok_data(api.get("/api/contact", params={"search": "zebul", "pageSize": "1"}))
    rest = ok_data(
        api.get(
            "/api/contact",
            params={"q": "zebul", "continuationToken": first["continuationToken"]},
        )
    )
    assert [c["id"] for c in rest["data"]] == [a["id"]]
