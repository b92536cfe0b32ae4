"""Contract E.2: `DELETE /api/contact/{id}`, and restoring a soft-deleted contact or
opportunity (`POST /api/<kind>/{id}/restore`) — written once, tested for both kinds."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from tests.client import Api, error, error_fields, ok_data, unique_email, unique_phone
from tests.events.test_outbox import all_events, history

UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"


@dataclass(frozen=True)
class Kind:
    name: str
    deleted: str
    restored: str
    not_found: str

    def create(self, api: Api, **fields: Any) -> dict[str, Any]:
        if self.name == "contact":
            return api.create_contact(**fields)
        return api.create_opportunity(**fields)

    def get(self, api: Api, record_id: str) -> Any:
        return api.get(f"/api/{self.name}/{record_id}")

    def delete(self, api: Api, record_id: str, **kw: Any) -> Any:
        return api.delete(f"/api/{self.name}/{record_id}", **kw)

    def restore(self, api: Api, record_id: str, **kw: Any) -> Any:
        return api.post(f"/api/{self.name}/{record_id}/restore", **kw)

    def written(self, api: Api, record_id: str) -> dict[str, Any]:
        """The record as an update answers it (a contact's update shape)."""
        return history(api, self.name, record_id)[-1]["data"]


CONTACT = Kind(
    "contact",
    "Contact deleted successfully.",
    "Contact restored successfully.",
    "CONTACT_NOT_FOUND",
)
OPPORTUNITY = Kind(
    "opportunity",
    "Opportunity successfully deleted.",
    "Opportunity restored successfully.",
    "OPPORTUNITY_NOT_FOUND",
)
KINDS = pytest.mark.parametrize("kind", [CONTACT, OPPORTUNITY], ids=lambda k: k.name)


def test_delete_one_contact(api: Api, other_api: Api) -> None:
    a, b = api.create_contact(), api.create_contact()
    response = api.delete(f"/api/contact/{a['id']}")
    assert ok_data(response, "Contact deleted successfully.") == {"id": a["id"]}
    error(api.get_contact(a["id"]), 404, "CONTACT_NOT_FOUND")
    listed = ok_data(api.get("/api/contact"))["data"]
    assert [c["id"] for c in listed] == [b["id"]]
    error(api.delete(f"/api/contact/{a['id']}"), 404, "CONTACT_NOT_FOUND")
    for missing in (UNKNOWN_ID, "nope"):
        error(api.delete(f"/api/contact/{missing}"), 404, "CONTACT_NOT_FOUND")
    error(other_api.delete(f"/api/contact/{b['id']}"), 404, "CONTACT_NOT_FOUND")
    # If-Match as the opportunity delete: stale is 412 and nothing changes
    error(
        api.delete(f"/api/contact/{b['id']}", headers={"If-Match": '"7"'}),
        412,
        "PRECONDITION_FAILED",
    )
    ok_data(api.get_contact(b["id"]))
    ok_data(api.delete(f"/api/contact/{b['id']}", headers={"If-Match": '"1"'}))
    # its event: the contact as deleted (update shape), version 2
    event = history(api, "contact", a["id"])[-1]
    assert event["type"] == "contact.deleted" and event["recordVersion"] == 2
    assert event["changed"] == [] and list(event["data"]) == list(a)
    # the phone and email are free again
    api.create_contact(email=a["email"])


@KINDS
def test_restore_brings_the_record_back_as_it_was(api: Api, kind: Kind) -> None:
    record = kind.create(api)
    before = ok_data(kind.get(api, record["id"]))["data"][0]
    ok_data(kind.delete(api, record["id"]), kind.deleted)
    response = kind.restore(api, record["id"])
    data = ok_data(response, kind.restored)
    assert list(data) == ["id", kind.name] and data["id"] == record["id"]
    restored = data[kind.name]
    assert list(restored) == list(record)
    assert response.headers["ETag"] == '"3"'
    got = kind.get(api, record["id"])
    assert got.headers["ETag"] == '"3"'
    after = ok_data(got)["data"][0]
    if kind is OPPORTUNITY:
        assert restored["statusId"] == 1
        assert restored["deletionDate"] is None and restored["userDeletion"] is None
        assert restored["updatedDate"] is not None  # a change like any other
        changed = {"updatedDate"}
    else:
        changed = {"orderInCardsLastUpdated"}
    assert {k: v for k, v in after.items() if k not in changed} == {
        k: v for k, v in before.items() if k not in changed
    }
    listed = ok_data(api.get(f"/api/{kind.name}"))["data"]
    assert [r["id"] for r in listed] == [record["id"]]
    events = history(api, kind.name, record["id"])
    assert [e["type"] for e in events] == [
        f"{kind.name}.created",
        f"{kind.name}.deleted",
        f"{kind.name}.restored",
    ]
    assert events[-1]["data"] == restored and events[-1]["recordVersion"] == 3
    assert events[-1]["changed"] == []
    assert events[-1]["createdAt"] == (
        restored["updatedDate"] if kind is OPPORTUNITY else restored["orderInCardsLastUpdated"]
    )


@KINDS
def test_live_unknown_foreign_and_stale_restores(api: Api, other_api: Api, kind: Kind) -> None:
    record = kind.create(api)
    error(kind.restore(api, record["id"]), 404, kind.not_found)  # live
    for missing in (UNKNOWN_ID, "nope"):
        error(kind.restore(api, missing), 404, kind.not_found)
    ok_data(kind.delete(api, record["id"]))
    error(other_api.post(f"/api/{kind.name}/{record['id']}/restore"), 404, kind.not_found)
    error(kind.restore(api, record["id"], headers={"If-Match": '"1"'}), 412, "PRECONDITION_FAILED")
    body = error(kind.restore(api, record["id"], json={"name": "x"}), 400, "BAD_REQUEST")
    assert error_fields(body) == ["name"]
    error(kind.restore(api, record["id"], json={"workspaceId": other_api.ws}), 403, "FORBIDDEN")
    # nothing above restored it
    error(kind.get(api, record["id"]), 404, kind.not_found)
    ok_data(
        kind.restore(api, record["id"], json={"workspaceId": api.ws}, headers={"If-Match": '"2"'}),
        kind.restored,
    )
    error(kind.restore(api, record["id"]), 404, kind.not_found)  # live again
    types = [e["type"] for e in all_events(api, recordId=record["id"])]
    assert types.count(f"{kind.name}.restored") == 1


def test_a_restored_contact_goes_to_the_end_of_its_column(api: Api) -> None:
    stage = api.stage_ids("contact")[1]
    first = api.create_contact(stageId=stage)
    assert first["orderInCards"] == 0
    ok_data(api.delete(f"/api/contact/{first['id']}"))
    second = api.create_contact(stageId=stage)
    assert second["orderInCards"] == 0  # the deleted card does not count
    third = api.create_contact(stageId=stage)
    restored = ok_data(api.post(f"/api/contact/{first['id']}/restore"))["contact"]
    assert restored["orderInCards"] == third["orderInCards"] + 1 == 2
    assert restored["stageId"] == stage
    assert restored["orderInCardsLastUpdated"] > first["orderInCardsLastUpdated"]


def test_a_restored_contact_keeps_its_tags_variables_and_opportunities(api: Api) -> None:
    tag = api.add_tag()
    contact = api.create_contact(tags=[tag["id"]], variables=[{"name": "plan", "value": "gold"}])
    deal = api.create_opportunity(contactId=contact["id"])
    ok_data(api.post(f"/api/contact/{contact['id']}/activities", json={"content": "hi"}))
    ok_data(api.delete(f"/api/contact/{contact['id']}"))
    restored = ok_data(api.post(f"/api/contact/{contact['id']}/restore"))["contact"]
    assert restored["tags"] == contact["tags"]
    assert restored["variables"] == contact["variables"]
    assert (
        ok_data(api.get(f"/api/opportunity/{deal['id']}"))["data"][0]["contactId"] == contact["id"]
    )
    activities = ok_data(api.get(f"/api/contact/{contact['id']}/activities"))["data"]
    assert [a["content"] for a in activities] == ["hi"]


@pytest.mark.parametrize("point", ["email", "internalWhatsappNumber"])
def test_a_contact_whose_phone_or_email_is_taken_is_409(api: Api, point: str) -> None:
    value = unique_email() if point == "email" else unique_phone()
    contact = api.create_contact(**{point: value})
    ok_data(api.delete(f"/api/contact/{contact['id']}"))
    holder = api.create_contact(**{point: value.upper() if point == "email" else value})
    body = error(api.post(f"/api/contact/{contact['id']}/restore"), 409, "CONTACT_DELETED_CONFLICT")
    assert body["data"]["existingId"] == holder["id"]
    assert error_fields(body) == [point]
    assert holder["id"] in body["message"]
    error(api.get_contact(contact["id"]), 404, "CONTACT_NOT_FOUND")
    assert history(api, "contact", contact["id"])[-1]["type"] == "contact.deleted"
    # once the holder is gone, it comes back
    ok_data(api.delete(f"/api/contact/{holder['id']}"))
    ok_data(api.post(f"/api/contact/{contact['id']}/restore"), "Contact restored successfully.")
