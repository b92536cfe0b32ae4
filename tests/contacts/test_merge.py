"""Contract E.2: `POST /api/contact/merge` — duplicates merged into a primary, all or
nothing, with the events of every change."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest

from tests.client import Api, error, error_fields, ok_data, unique_email, unique_phone
from tests.events.test_outbox import all_events, history

MERGED = "Contacts merged successfully."
UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"


def merge(api: Api, primary: str, duplicates: list[str], **kw: Any) -> Any:
    return api.post(
        "/api/contact/merge", json={"primaryId": primary, "duplicateIds": duplicates}, **kw
    )


def get(api: Api, contact_id: str) -> Any:
    return api.get_contact(contact_id)


def test_merge_fills_unites_moves_and_deletes(api: Api) -> None:
    agent, segmentation = api.add_agent(), api.add_segmentation()
    red, blue, green = api.add_tag(), api.add_tag(), api.add_tag()
    phone = unique_phone()
    first = api.create_contact(
        name="Ana B",
        lastname="Bravo",
        internalWhatsappNumber=phone,
        tags=[blue["id"], red["id"]],
        variables=[{"name": "plan", "value": "silver"}, {"name": "score", "value": 5}],
        files=["https://files.example/a.pdf"],
    )
    # created after the first: the first's red tag is the older one, whose date is kept
    primary = api.create_contact(
        name="Ana",
        lastname="",
        tags=[red["id"]],
        variables=[{"name": "plan", "value": "gold"}],
    )
    second = api.create_contact(
        name="Ana C",
        lastname="Charlie",
        assignedAgentId=agent["id"],
        segmentationId=segmentation["id"],
        tags=[green["id"]],
        variables=[{"name": "score", "value": 9}, {"name": "city", "value": "Lima"}],
    )
    api.set_contact(second["id"], tags=[green["id"], red["id"]])
    red_first = api.set_contact(first["id"], tags=[red["id"], blue["id"]])["tags"]
    ok_data(api.post(f"/api/contact/{first['id']}/activities", json={"content": "from first"}))
    ok_data(api.post(f"/api/contact/{primary['id']}/activities", json={"content": "own"}))
    deal = api.create_opportunity(contactId=second["id"])
    other_deal = api.create_opportunity(contactId=first["id"])
    gone_deal = api.create_opportunity(contactId=first["id"])
    ok_data(api.delete(f"/api/opportunity/{gone_deal['id']}"))
    before = ok_data(get(api, primary["id"]))["data"][0]
    assert before["lastname"] == ""

    response = merge(api, primary["id"], [first["id"], second["id"]])
    data = ok_data(response, MERGED)
    assert list(data) == ["id", "contact"] and data["id"] == primary["id"]
    merged = data["contact"]
    assert list(merged) == list(primary)
    assert response.headers["ETag"] == '"2"'
    # kept: its own values; filled: its empty ones, from the first duplicate that has one
    assert merged["name"] == "Ana" and merged["email"] == primary["email"]
    assert merged["lastname"] == "Bravo"
    assert merged["internalWhatsappNumber"] == phone  # the deleted first freed it
    assert merged["files"] == ["https://files.example/a.pdf"]
    assert merged["assignedAgentId"] == agent["id"]
    assert merged["assignedAgentName"] == agent["name"]
    assert merged["segmentationId"] == segmentation["id"]
    # united: the primary wins a variable name; tags once each, the earliest date kept
    assert merged["variables"] == [
        {"name": "plan", "value": "gold"},
        {"name": "score", "value": 5},
        {"name": "city", "value": "Lima"},
    ]
    assert [t["id"] for t in merged["tags"]] == [red["id"], blue["id"], green["id"]]
    dates = {t["id"]: t["assignmentDate"] for t in merged["tags"]}
    assert dates[red["id"]] == red_first[0]["assignmentDate"]
    assert dates[red["id"]] < primary["tags"][0]["assignmentDate"]
    assert dates[blue["id"]] == red_first[1]["assignmentDate"]
    # the duplicates are gone from every read
    for duplicate in (first, second):
        error(get(api, duplicate["id"]), 404, "CONTACT_NOT_FOUND")
    listed = ok_data(api.get("/api/contact", params={"pageSize": "100"}))["data"]
    assert [c["id"] for c in listed] == [primary["id"]]
    found = ok_data(api.get("/api/contact/searchByCellphone", params={"cellphone": phone}))
    assert found["contactId"] == primary["id"]
    # activities and live opportunities moved
    activities = ok_data(api.get(f"/api/contact/{primary['id']}/activities"))["data"]
    assert sorted(a["content"] for a in activities) == ["from first", "own"]
    for moved in (deal, other_deal):
        record = ok_data(api.get(f"/api/opportunity/{moved['id']}"))["data"][0]
        assert record["contactId"] == primary["id"]
        assert record["updatedDate"] is not None
    # the events of the merge, in its order
    events = all_events(api, types="contact.*,opportunity.*")
    tail = events[-5:]
    assert [e["type"] for e in tail] == [
        "contact.deleted",
        "contact.deleted",
        "contact.merged",
        "opportunity.updated",
        "opportunity.updated",
    ]
    assert [e["recordId"] for e in tail[:2]] == [first["id"], second["id"]]
    assert all(e["createdAt"] == tail[0]["createdAt"] for e in tail)
    event = tail[2]
    assert event["recordId"] == primary["id"] and event["recordVersion"] == 2
    assert event["changed"] == []
    assert event["data"] == {**merged, "mergedIds": [first["id"], second["id"]]}
    assert list(event["data"])[-1] == "mergedIds"
    assert sorted(e["recordId"] for e in tail[3:]) == sorted([deal["id"], other_deal["id"]])
    for e in tail[3:]:
        assert e["changed"] == ["updatedDate", "contactId"]
        assert e["data"]["contactId"] == primary["id"]
    # a deleted opportunity stays as it was deleted
    assert history(api, "opportunity", gone_deal["id"])[-1]["type"] == "opportunity.deleted"


def test_all_or_nothing(api: Api, other_api: Api) -> None:
    primary = api.create_contact(lastname="")
    duplicate = api.create_contact(lastname="Bravo")
    deleted = api.create_contact()
    ok_data(api.delete(f"/api/contact/{deleted['id']}"))
    foreign = other_api.create_contact()
    events_before = len(all_events(api))
    snapshot = [ok_data(get(api, c["id"])) for c in (primary, duplicate)]
    for dupes, missing in (
        ([duplicate["id"], UNKNOWN_ID], UNKNOWN_ID),
        ([duplicate["id"], deleted["id"]], deleted["id"]),
        ([foreign["id"], duplicate["id"]], foreign["id"]),
        ([duplicate["id"], "nope"], "nope"),
    ):
        body = error(merge(api, primary["id"], dupes), 404, "CONTACT_NOT_FOUND")
        assert missing in body["message"]
    error(merge(api, deleted["id"], [duplicate["id"]]), 404, "CONTACT_NOT_FOUND")
    error(
        merge(api, primary["id"], [duplicate["id"]], headers={"If-Match": '"9"'}),
        412,
        "PRECONDITION_FAILED",
    )
    assert [ok_data(get(api, c["id"])) for c in (primary, duplicate)] == snapshot
    assert len(all_events(api)) == events_before
    error(other_api.post(
        "/api/contact/merge",
        json={"primaryId": primary["id"], "duplicateIds": [duplicate["id"]]},
    ), 404, "CONTACT_NOT_FOUND")  # fmt: skip
    ok_data(merge(api, primary["id"], [duplicate["id"]], headers={"If-Match": '"1"'}), MERGED)


@pytest.mark.parametrize(
    ("body", "status", "fields"),
    [
        ({"duplicateIds": ["a"]}, 422, ["primaryId"]),
        ({"primaryId": "a"}, 422, ["duplicateIds"]),
        ({"primaryId": "a", "duplicateIds": []}, 422, ["duplicateIds"]),
        ({"primaryId": "a", "duplicateIds": [str(i) for i in range(11)]}, 422, ["duplicateIds"]),
        ({"primaryId": "a", "duplicateIds": ["b", "a"]}, 422, ["duplicateIds"]),
        ({"primaryId": "a", "duplicateIds": ["b", 3]}, 422, ["duplicateIds[1]"]),
        ({"primaryId": 5, "duplicateIds": "b"}, 422, ["primaryId", "duplicateIds"]),
        # Bad elements are reported with the body's other errors, not instead of them.
        ({"duplicateIds": [5]}, 422, ["primaryId", "duplicateIds[0]"]),
        (
            {"primaryId": 7, "duplicateIds": [5, "b", ""]},
            422,
            ["primaryId", "duplicateIds[0]", "duplicateIds[2]"],
        ),
        ({"primaryId": "a", "duplicateIds": ["b"], "mode": "x"}, 400, ["mode"]),
    ],
)
def test_body_errors(api: Api, body: dict[str, Any], status: int, fields: list[str]) -> None:
    code = "VALIDATION_ERROR" if status == 422 else "BAD_REQUEST"
    assert error_fields(error(api.post("/api/contact/merge", json=body), status, code)) == fields


def test_the_ten_duplicates_are_counted_once_repeats_are_one(api: Api) -> None:
    primary = api.create_contact()
    ten = [api.create_contact()["id"] for _ in range(10)]
    body = {"primaryId": primary["id"], "duplicateIds": [*ten, ten[0], ten[1]]}
    merged = ok_data(api.post("/api/contact/merge", json=body))
    assert merged["id"] == primary["id"]


def test_repeated_duplicates_count_once_and_workspace_rules(api: Api, other_api: Api) -> None:
    primary, duplicate = (
        api.create_contact(),
        api.create_contact(email=None, internalWhatsappNumber=unique_phone(), platformId=2),
    )
    body = {
        "workspaceId": api.ws,
        "primaryId": primary["id"],
        "duplicateIds": [duplicate["id"]] * 2,
    }
    error(api.post("/api/contact/merge", json=body, workspace=other_api.ws), 403, "FORBIDDEN")
    data = ok_data(api.post("/api/contact/merge", json=body, workspace=None), MERGED)
    assert data["contact"]["email"] == primary["email"]
    assert data["contact"]["internalWhatsappNumber"] == duplicate["internalWhatsappNumber"]
    merged = [e for e in all_events(api, types="contact.*") if e["type"] == "contact.merged"]
    assert merged[-1]["data"]["mergedIds"] == [duplicate["id"]]
    # a merged duplicate can be restored only once its email/phone is free again
    restore = api.post(f"/api/contact/{duplicate['id']}/restore")
    assert error(restore, 409, "CONTACT_DELETED_CONFLICT")["data"]["existingId"] == primary["id"]


def test_idempotent_replay(api: Api) -> None:
    primary, duplicate = api.create_contact(), api.create_contact(email=unique_email())
    headers = {"Idempotency-Key": f"merge-{primary['id']}"}
    first = merge(api, primary["id"], [duplicate["id"]], headers=headers)
    again = merge(api, primary["id"], [duplicate["id"]], headers=headers)
    assert again.json() == first.json() and ok_data(first, MERGED)


def test_crossed_merges_queue_instead_of_deadlocking(api: Api) -> None:
    """Two merges naming the same contacts in opposite roles, at once: the locks are taken
    in id order, so one wins and the other finds its contact gone (404), never a deadlock
    (500) or a half-applied merge."""
    for _ in range(4):
        a, b = api.create_contact(), api.create_contact()
        with ThreadPoolExecutor(2) as pool:
            answers = list(
                pool.map(
                    lambda pair: merge(api, *pair), [(a["id"], [b["id"]]), (b["id"], [a["id"]])]
                )
            )
        assert sorted(r.status_code for r in answers) == [200, 404], [r.text for r in answers]
        winner = next(r for r in answers if r.status_code == 200).json()["data"]["id"]
        loser = b["id"] if winner == a["id"] else a["id"]
        ok_data(get(api, winner))
        error(get(api, loser), 404, "CONTACT_NOT_FOUND")
        assert [e["type"] for e in history(api, "contact", loser)][-1] == "contact.deleted"


def _merge_while_linking(api: Api) -> None:
    primary = api.create_contact(name="Primary")
    duplicate = api.create_contact(name="Duplicate")
    deal = api.create_opportunity()
    start = threading.Barrier(3)

    def at_start(call: Any) -> Any:
        start.wait()
        return call()

    calls = [
        lambda: merge(api, primary["id"], [duplicate["id"]]),
        lambda: api.put(
            f"/api/opportunity?id={deal['id']}",
            json={"paramToUpdate": "contactId", "contactId": duplicate["id"]},
        ),
        lambda: api.post(f"/api/contact/{duplicate['id']}/activities", json={"content": "called"}),
    ]
    with ThreadPoolExecutor(3) as pool:
        merged, linked_answer, activity_answer = pool.map(at_start, calls)
    assert merged.status_code == 200, merged.text
    linked = ok_data(api.get(f"/api/opportunity/{deal['id']}"))["data"][0]["contactId"]
    # Linked first and moved by the merge, or refused after it: never the deleted one.
    assert linked == (primary["id"] if linked_answer.status_code == 200 else ""), linked
    listed = api.get(f"/api/contact/{primary['id']}/activities").json()["data"]
    contents = [a["content"] for a in (listed["data"] if isinstance(listed, dict) else listed)]
    assert contents == (["called"] if activity_answer.status_code == 200 else []), contents


def test_what_is_linked_to_a_duplicate_while_it_is_merged_ends_on_the_primary(api: Api) -> None:
    """An opportunity given the duplicate as its contact, or an activity added to it, at the
    moment it is merged: either it comes first and moves to the primary, or it waits and is
    refused; never left on the deleted duplicate."""
    for _ in range(4):
        _merge_while_linking(api)


def _merge_while_moving_away(api: Api) -> None:
    primary, duplicate, third = (api.create_contact() for _ in range(3))
    deals = [api.create_opportunity(contactId=duplicate["id"]) for _ in range(4)]
    moved, deleted = deals[:2], deals[2:]
    calls = [
        lambda: merge(api, primary["id"], [duplicate["id"]]),
        *(
            partial(api.put, f"/api/opportunity?id={deal['id']}",
                    json={"paramToUpdate": "contactId", "contactId": third["id"]})
            for deal in moved
        ),
        *(partial(api.delete, f"/api/opportunity/{deal['id']}") for deal in deleted),
    ]  # fmt: skip
    start = threading.Barrier(len(calls))

    def at_start(call: Any) -> Any:
        start.wait()
        return call()

    with ThreadPoolExecutor(len(calls)) as pool:
        merged, *answers = pool.map(at_start, calls)
    assert merged.status_code == 200, merged.text
    assert [a.status_code for a in answers] == [200] * len(answers), [a.text for a in answers]
    for deal in moved:
        stored = ok_data(api.get(f"/api/opportunity/{deal['id']}"))["data"][0]
        assert stored["contactId"] == third["id"]  # moved away: never moved back


def test_an_opportunity_moved_away_while_its_contact_is_merged_stays_moved(api: Api) -> None:
    """The merge listed the duplicate's opportunities, then moved each to the primary by
    id alone: one moved to a third contact meanwhile (its PUT answered 200) was moved back,
    a lost update; one deleted meanwhile made the merge 404. Each is locked and read again
    before it is moved."""
    for _ in range(5):  # a race: each round may or may not cross
        _merge_while_moving_away(api)
