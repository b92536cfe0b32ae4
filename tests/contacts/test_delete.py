"""Delete contacts (contract B.3): the original's batch shape, at most 500 ids, soft delete
(rows kept, every read left), phone and email freed, opportunities kept."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.config import Settings
from chatcrm.contacts.table import contacts
from chatcrm.db.engine import standalone_engine
from tests.client import Api, error, error_fields, ok_data

DELETED = "Contacts deleted successfully."
UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"
T = TypeVar("T")


def delete_batch(api: Api, body: Any, **kw: Any) -> httpx.Response:
    return api.post("/api/contact/delete-batch", json=body, **kw)


def deleted(response: httpx.Response) -> dict[str, list[str]]:
    data: dict[str, list[str]] = ok_data(response, DELETED)
    assert list(data) == ["deletedIds", "notFoundIds"]
    return data


def batch(*contact_ids: str) -> dict[str, Any]:
    return {"contactIds": [{"ids": i} for i in contact_ids]}


def fake_ids(n: int) -> list[str]:
    """Ids of the right shape (UUIDv7) that name no contact."""
    return [f"01a214de-{i // 10**12:04x}-7{i % 4096:03x}-8000-{i:012x}" for i in range(n)]


def second_workspace(api: Api) -> Api:
    data = ok_data(api.post("/api/workspace", json={"name": "Second"}))
    return Api(api.http, dataclasses.replace(api.account, workspace_id=data["id"]))


def invalid(response: httpx.Response) -> list[str]:
    body = error(response, 422, "VALIDATION_ERROR")
    fields = error_fields(body)
    assert fields and all(f.startswith("contactIds") for f in fields), body
    return fields


def run_db(database_url: str, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
    async def run() -> T:
        engine = standalone_engine(database_url, Settings(database_url=database_url))
        try:
            async with engine.begin() as conn:
                return await work(conn)
        finally:
            await engine.dispose()

    return asyncio.run(run())


def stored_row(database_url: str, workspace_id: str, contact_id: str) -> Any:
    async def work(conn: AsyncConnection) -> Any:
        stmt = select(contacts).where(
            contacts.c.workspace_id == workspace_id, contacts.c.id == contact_id
        )
        return (await conn.execute(stmt)).mappings().first()

    return run_db(database_url, work)


# --- the answer -------------------------------------------------------------------------------


def test_delete_one_contact(api: Api) -> None:
    contact = api.create_contact()
    data = deleted(delete_batch(api, batch(contact["id"])))
    assert data == {"deletedIds": [contact["id"]], "notFoundIds": []}
    error(api.get_contact(contact["id"]), 404, "CONTACT_NOT_FOUND")


def test_results_keep_the_request_order(api: Api) -> None:
    a, b, c = (api.create_contact() for _ in range(3))
    missing_1, missing_2 = fake_ids(2)
    data = deleted(delete_batch(api, batch(c["id"], missing_2, a["id"], missing_1, b["id"])))
    assert data == {
        "deletedIds": [c["id"], a["id"], b["id"]],
        "notFoundIds": [missing_2, missing_1],
    }


def test_ids_may_hold_a_list_of_strings(api: Api) -> None:
    a, b, c = (api.create_contact() for _ in range(3))
    body = {"contactIds": [{"ids": [a["id"], UNKNOWN_ID]}, {"ids": b["id"]}]}
    data = deleted(delete_batch(api, body))
    assert data == {"deletedIds": [a["id"], b["id"]], "notFoundIds": [UNKNOWN_ID]}
    assert ok_data(api.get_contact(c["id"]))["contactId"] == c["id"]


def test_duplicate_ids_collapse(api: Api) -> None:
    a, b = api.create_contact(), api.create_contact()
    body = {
        "contactIds": [
            {"ids": a["id"]},
            {"ids": a["id"]},
            {"ids": [b["id"], a["id"], UNKNOWN_ID]},
            {"ids": UNKNOWN_ID},
        ]
    }
    data = deleted(delete_batch(api, body))
    assert data == {"deletedIds": [a["id"], b["id"]], "notFoundIds": [UNKNOWN_ID]}


@pytest.mark.parametrize("missing", [UNKNOWN_ID, "not-an-id", "0", "x" * 300, "ÁÉÍ"])
def test_unknown_ids_are_not_found(api: Api, missing: str) -> None:
    kept = api.create_contact()
    data = deleted(delete_batch(api, batch(missing)))
    assert data == {"deletedIds": [], "notFoundIds": [missing]}
    ok_data(api.get_contact(kept["id"]))


def test_already_deleted_ids_are_not_found(api: Api) -> None:
    contact = api.create_contact()
    deleted(delete_batch(api, batch(contact["id"])))
    data = deleted(delete_batch(api, batch(contact["id"])))
    assert data == {"deletedIds": [], "notFoundIds": [contact["id"]]}


def test_other_workspaces_contacts_are_not_found_and_stay(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    sibling = second_workspace(api)
    siblings = sibling.create_contact()
    data = deleted(delete_batch(api, batch(theirs["id"], siblings["id"])))
    assert data == {"deletedIds": [], "notFoundIds": [theirs["id"], siblings["id"]]}
    ok_data(other_api.get_contact(theirs["id"]))
    ok_data(sibling.get_contact(siblings["id"]))


def test_an_empty_batch_deletes_nothing(api: Api) -> None:
    contact = api.create_contact()
    assert deleted(delete_batch(api, {"contactIds": []})) == {
        "deletedIds": [],
        "notFoundIds": [],
    }
    ok_data(api.get_contact(contact["id"]))


# --- limits -----------------------------------------------------------------------------------


def test_500_ids_are_accepted(api: Api) -> None:
    real = [api.create_contact()["id"] for _ in range(3)]
    others = fake_ids(497)
    data = deleted(delete_batch(api, batch(*others[:200], *real, *others[200:])))
    assert data["deletedIds"] == real
    assert data["notFoundIds"] == others


def test_501_ids_are_422_and_nothing_is_deleted(api: Api) -> None:
    real = api.create_contact()
    response = delete_batch(api, batch(real["id"], *fake_ids(500)))
    assert invalid(response) == ["contactIds"]
    ok_data(api.get_contact(real["id"]))


def test_501_ids_in_list_form_are_422(api: Api) -> None:
    response = delete_batch(api, {"contactIds": [{"ids": fake_ids(501)}]})
    assert invalid(response) == ["contactIds"]


def test_the_limit_counts_distinct_ids(api: Api) -> None:
    ids = fake_ids(500)
    data = deleted(delete_batch(api, batch(*ids, ids[0], ids[499])))
    assert data["notFoundIds"] == ids


# --- invalid bodies -------------------------------------------------------------------------


@pytest.mark.parametrize("body", [{}, {"workspaceId": None}, {"contactIds": None}])
def test_missing_contact_ids_is_422(api: Api, body: dict[str, Any]) -> None:
    assert invalid(delete_batch(api, body)) == ["contactIds"]


@pytest.mark.parametrize("value", ["01a214de-0000-7000-8000-000000000000", 5, True, {"ids": "x"}])
def test_contact_ids_not_an_array_is_422(api: Api, value: Any) -> None:
    assert invalid(delete_batch(api, {"contactIds": value})) == ["contactIds"]


@pytest.mark.parametrize(
    "element",
    [
        {},
        {"ids": None},
        {"ids": 5},
        {"ids": True},
        {"ids": {"id": UNKNOWN_ID}},
        {"ids": []},
        {"ids": [UNKNOWN_ID, 5]},
        {"ids": [None]},
        {"id": UNKNOWN_ID},
        UNKNOWN_ID,
        5,
        None,
        [UNKNOWN_ID],
    ],
)
def test_an_element_without_string_ids_is_422_and_nothing_is_deleted(
    api: Api, element: Any
) -> None:
    contact = api.create_contact()
    body = {"contactIds": [{"ids": contact["id"]}, element]}
    fields = invalid(delete_batch(api, body))
    assert fields == ["contactIds[1].ids"]
    ok_data(api.get_contact(contact["id"]))


def test_every_bad_element_is_reported(api: Api) -> None:
    body = {"contactIds": [{"ids": 1}, {"ids": UNKNOWN_ID}, {}, {"ids": None}]}
    assert invalid(delete_batch(api, body)) == [
        "contactIds[0].ids",
        "contactIds[2].ids",
        "contactIds[3].ids",
    ]


def test_an_unknown_body_key_is_400(api: Api) -> None:
    contact = api.create_contact()
    body = {**batch(contact["id"]), "force": True}
    assert error_fields(error(delete_batch(api, body), 400, "BAD_REQUEST")) == ["force"]
    ok_data(api.get_contact(contact["id"]))


@pytest.mark.parametrize("raw", ["[]", '"x"', "{", "null"])
def test_a_body_that_is_not_an_object_is_400(api: Api, raw: str) -> None:
    response = api.post(
        "/api/contact/delete-batch", content=raw, headers={"Content-Type": "application/json"}
    )
    error(response, 400, "BAD_REQUEST")


# --- workspace rules --------------------------------------------------------------------------


def test_workspace_from_the_body_alone(api: Api) -> None:
    contact = api.create_contact()
    response = delete_batch(api, {"workspaceId": api.ws, **batch(contact["id"])}, workspace=None)
    assert deleted(response)["deletedIds"] == [contact["id"]]


def test_body_and_header_naming_different_workspaces_is_403(api: Api) -> None:
    contact = api.create_contact()
    sibling = second_workspace(api)
    response = delete_batch(api, {"workspaceId": sibling.ws, **batch(contact["id"])})
    error(response, 403, "FORBIDDEN")
    ok_data(api.get_contact(contact["id"]))


def test_another_accounts_workspace_is_403(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    response = delete_batch(
        api, {"workspaceId": other_api.ws, **batch(theirs["id"])}, workspace=None
    )
    error(response, 403, "FORBIDDEN")
    ok_data(other_api.get_contact(theirs["id"]))


def test_no_workspace_is_401(api: Api) -> None:
    error(delete_batch(api, batch(UNKNOWN_ID), workspace=None), 401, "WORKSPACE_REQUIRED")


def test_no_key_is_401(api: Api) -> None:
    error(delete_batch(api, batch(UNKNOWN_ID), auth=None), 401, "UNAUTHORIZED")


# --- after the delete -----------------------------------------------------------------------


def test_a_deleted_contact_leaves_every_read(api: Api) -> None:
    contact = api.create_contact(email="gone@example.com", internalWhatsappNumber="51977777777")
    kept = api.create_contact()
    deleted(delete_batch(api, batch(contact["id"])))
    error(api.get_contact(contact["id"]), 404, "CONTACT_NOT_FOUND")
    listed = ok_data(api.get("/api/contact"))["data"]
    assert [r["id"] for r in listed] == [kept["id"]]
    assert ok_data(api.get("/api/contact", params={"q": "gone"}))["data"] == []
    assert ok_data(api.get("/api/contact/searchByEmail", params={"email": "gone@example.com"})) == {
        "contactId": "",
        "data": [],
    }
    assert ok_data(
        api.get("/api/contact/searchByCellphone", params={"cellphone": "51977777777"})
    ) == {"contactId": "", "data": []}


def test_a_deleted_contact_cannot_be_updated(api: Api) -> None:
    contact = api.create_contact()
    deleted(delete_batch(api, batch(contact["id"])))
    response = api.update_contact(contact["id"], {"paramToUpdate": "name", "name": "Back"})
    error(response, 404, "CONTACT_NOT_FOUND")


def test_a_deleted_contact_is_kept_in_the_database(api: Api, database_url: str) -> None:
    contact = api.create_contact(name="Kept")
    deleted(delete_batch(api, batch(contact["id"])))
    row = stored_row(database_url, api.ws, contact["id"])
    assert row is not None
    assert row["name"] == "Kept"
    assert row["deleted_at"] is not None
    assert row["deleted_by"] == api.account.key_id
    # A delete is a change: the row's last-change time moves to the deletion.
    assert row["modified_at"] >= row["deleted_at"]


def test_a_deleted_contacts_phone_and_email_can_be_reused(api: Api) -> None:
    old = api.create_contact(email="Reuse@Example.com", internalWhatsappNumber="51988888888")
    conflict = api.post(
        "/api/contact", json={"name": "Dup", "email": "reuse@example.com", "platformId": 7}
    )
    error(conflict, 409, "DUPLICATE_CONTACT")
    deleted(delete_batch(api, batch(old["id"])))
    new = api.create_contact(email="reuse@example.com", internalWhatsappNumber="+51 988 888 888")
    assert new["id"] != old["id"]
    other = api.create_contact(email="other@example.com")
    # Updating a live contact to the freed values is not a conflict either.
    deleted(delete_batch(api, batch(new["id"])))
    api.set_contact(other["id"], email="REUSE@example.com", internalWhatsappNumber="51988888888")


def test_a_deleted_contacts_opportunities_stay(api: Api) -> None:
    contact = api.create_contact()
    opportunity = api.create_opportunity(contactId=contact["id"])
    deleted(delete_batch(api, batch(contact["id"])))
    data = ok_data(api.get(f"/api/opportunity/{opportunity['id']}"))
    assert data["data"][0]["contactId"] == contact["id"]
    assert data["data"][0]["statusId"] == 1
    listed = ok_data(api.get("/api/opportunity"))["data"]
    assert [o["id"] for o in listed] == [opportunity["id"]]
    assert listed[0]["contactId"] == contact["id"]
