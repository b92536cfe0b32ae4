"""Get contact by email and by phone (contract B.3): the shape of A.2, exact matches,
normalised phones, deleted contacts and other workspaces never found."""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx
import pytest

from tests.client import Api, error, error_fields, ok_data

FOUND = "Successfully obtained list."
READ_SHAPE = [
    "id", "creationDate", "assignedAgentId", "assignedAgentName", "segmentationId",
    "lastMessage", "lastMessageDate", "platformSenderId", "platformSenderName",
    "platformSenderPhone", "isRead", "isBotEnabled", "isManuallyAdded", "avatarColor",
    "orderInCards", "orderInCardsLastUpdated", "tags", "files", "isSolved", "workspaceId",
    "name", "lastname", "email", "platformId", "stageId",
]  # fmt: skip


def by_email(api: Api, email: str | None, **kw: Any) -> httpx.Response:
    params = kw.pop("params", {})
    if email is not None:
        params["email"] = email
    return api.get("/api/contact/searchByEmail", params=params, **kw)


def by_phone(api: Api, cellphone: str | None, **kw: Any) -> httpx.Response:
    params = kw.pop("params", {})
    if cellphone is not None:
        params["cellphone"] = cellphone
    return api.get("/api/contact/searchByCellphone", params=params, **kw)


def found(response: httpx.Response) -> list[str]:
    """The ids found, after checking the A.2 shape: contactId is the first match or ""."""
    data = ok_data(response, FOUND)
    assert list(data) == ["contactId", "data"]
    for record in data["data"]:
        assert list(record) == READ_SHAPE
    ids = [r["id"] for r in data["data"]]
    assert data["contactId"] == (ids[0] if ids else "")
    return ids


def nothing_found(response: httpx.Response) -> None:
    data = ok_data(response, FOUND)
    assert data == {"contactId": "", "data": []}


def delete(api: Api, *contact_ids: str) -> None:
    body = {"contactIds": [{"ids": i} for i in contact_ids]}
    data = ok_data(api.post("/api/contact/delete-batch", json=body))
    assert data["deletedIds"] == list(contact_ids)


def second_workspace(api: Api) -> Api:
    data = ok_data(api.post("/api/workspace", json={"name": "Second"}))
    return Api(api.http, dataclasses.replace(api.account, workspace_id=data["id"]))


# --- by email -----------------------------------------------------------------------------


def test_by_email_answers_the_contact_in_read_shape(api: Api) -> None:
    tag = api.add_tag()
    contact = api.create_contact(name="Ana", email="ana.diaz@example.com", tags=[tag["id"]])
    data = ok_data(by_email(api, "ana.diaz@example.com"), FOUND)
    assert list(data) == ["contactId", "data"]
    assert data["contactId"] == contact["id"]
    single = ok_data(api.get_contact(contact["id"]))["data"]
    assert data["data"] == single
    assert list(data["data"][0]) == READ_SHAPE


@pytest.mark.parametrize(
    "query", ["ana.diaz@example.com", "ANA.DIAZ@EXAMPLE.COM", "Ana.Diaz@Example.Com"]
)
def test_by_email_is_case_insensitive(api: Api, query: str) -> None:
    contact = api.create_contact(email="Ana.Diaz@Example.COM")
    assert found(by_email(api, query)) == [contact["id"]]


def test_by_email_matches_the_whole_address_only(api: Api) -> None:
    api.create_contact(email="ana@example.com")
    for near in ("na@example.com", "ana@example.co", "ana@example.com.pe", "ana1@example.com"):
        nothing_found(by_email(api, near))


def test_by_email_with_a_plus_sign(api: Api) -> None:
    contact = api.create_contact(email="ana+crm@example.com")
    assert found(by_email(api, "ana+crm@example.com")) == [contact["id"]]
    nothing_found(by_email(api, "ana@example.com"))


def test_by_email_without_a_match_is_200_and_empty(api: Api) -> None:
    api.create_contact(email="someone@example.com")
    nothing_found(by_email(api, "nobody@example.com"))


def test_by_email_in_an_empty_workspace(api: Api) -> None:
    nothing_found(by_email(api, "nobody@example.com"))


def test_by_email_finds_the_new_address_after_an_update(api: Api) -> None:
    contact = api.create_contact(email="old@example.com")
    api.set_contact(contact["id"], email="new@example.com")
    nothing_found(by_email(api, "old@example.com"))
    assert found(by_email(api, "NEW@example.com")) == [contact["id"]]


@pytest.mark.parametrize("params", [{}, {"email": ""}])
def test_by_email_without_email_is_400(api: Api, params: dict[str, str]) -> None:
    body = error(by_email(api, None, params=params), 400, "BAD_REQUEST")
    assert error_fields(body) == ["email"]


@pytest.mark.parametrize(
    "email", ["not-an-email", "ana@", "@example.com", "ana@example", "ana@@example.com", "a b@c.io"]
)
def test_by_email_malformed_is_422(api: Api, email: str) -> None:
    body = error(by_email(api, email), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["email"]


def test_by_email_never_finds_a_deleted_contact(api: Api) -> None:
    contact = api.create_contact(email="gone@example.com")
    delete(api, contact["id"])
    nothing_found(by_email(api, "gone@example.com"))


def test_by_email_finds_the_new_contact_reusing_a_deleted_ones_address(api: Api) -> None:
    old = api.create_contact(email="reuse@example.com")
    delete(api, old["id"])
    new = api.create_contact(email="REUSE@example.com")
    assert found(by_email(api, "reuse@example.com")) == [new["id"]]


def test_by_email_never_finds_other_workspaces_contacts(api: Api, other_api: Api) -> None:
    other_api.create_contact(email="shared@example.com")
    sibling = second_workspace(api)
    sibling.create_contact(email="shared@example.com")
    nothing_found(by_email(api, "shared@example.com"))
    mine = api.create_contact(email="shared@example.com")
    assert found(by_email(api, "shared@example.com")) == [mine["id"]]


def test_by_email_workspace_from_the_query(api: Api) -> None:
    contact = api.create_contact(email="q@example.com")
    response = by_email(api, "q@example.com", params={"workspaceId": api.ws}, workspace=None)
    assert found(response) == [contact["id"]]
    both = by_email(api, "q@example.com", params={"workspaceId": api.ws})
    assert found(both) == [contact["id"]]


def test_by_email_workspace_rules(api: Api, other_api: Api) -> None:
    sibling = second_workspace(api)
    error(by_email(api, "a@example.com", params={"workspaceId": sibling.ws}), 403, "FORBIDDEN")
    error(by_email(api, "a@example.com", workspace=other_api.ws), 403, "FORBIDDEN")
    error(by_email(api, "a@example.com", workspace=None), 401, "WORKSPACE_REQUIRED")
    error(by_email(api, "a@example.com", auth=None), 401, "UNAUTHORIZED")


# --- by phone -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ["51987654321", "+51987654321", "+51 987-654-321", "51 987 654 321", "(51) 987.654.321"],
)
def test_by_cellphone_normalises_the_number(api: Api, query: str) -> None:
    contact = api.create_contact(internalWhatsappNumber="+51 987-654-321")
    data = ok_data(by_phone(api, query), FOUND)
    assert data["contactId"] == contact["id"]
    assert data["data"] == ok_data(api.get_contact(contact["id"]))["data"]


def test_by_cellphone_with_an_unencoded_plus(api: Api) -> None:
    contact = api.create_contact(internalWhatsappNumber="51987654321")
    # '+' not percent-encoded arrives as a space.
    assert found(api.get("/api/contact/searchByCellphone?cellphone=+51987654321")) == [
        contact["id"]
    ]
    assert found(api.get("/api/contact/searchByCellphone?cellphone=+51+987+654+321")) == [
        contact["id"]
    ]
    # Before a '+' or an international prefix a leading space is only a space (contract
    # N: no number searched for before '+' was read is refused or missed now).
    for query in ("%20%2B51987654321", "%20%2B51%20(0)%20987%20654%20321", "%200051987654321"):
        assert found(api.get(f"/api/contact/searchByCellphone?cellphone={query}")) == [
            contact["id"]
        ]


def test_by_cellphone_matches_the_platform_sender_phone(api: Api) -> None:
    contact = api.create_contact(platformSenderPhone="+51 912 345 678")
    assert contact["platformSenderPhone"] == "51912345678"
    assert found(by_phone(api, "+51 912-345-678")) == [contact["id"]]


def test_by_cellphone_lists_every_contact_with_that_number(api: Api) -> None:
    whatsapp = api.create_contact(name="A", internalWhatsappNumber="51911111111")
    sender = api.create_contact(name="B", platformSenderPhone="51911111111")
    api.create_contact(name="C", internalWhatsappNumber="51922222222")
    ids = found(by_phone(api, "51911111111"))
    assert sorted(ids) == sorted([whatsapp["id"], sender["id"]])


def test_by_cellphone_matches_the_whole_number_only(api: Api) -> None:
    api.create_contact(internalWhatsappNumber="51987654321")
    for near in ("987654321", "5198765432", "519876543210", "61987654321"):
        nothing_found(by_phone(api, near))


def test_by_cellphone_without_a_match_is_200_and_empty(api: Api) -> None:
    nothing_found(by_phone(api, "51900000000"))


def test_by_cellphone_finds_the_new_number_after_an_update(api: Api) -> None:
    contact = api.create_contact(internalWhatsappNumber="51900000001")
    api.set_contact(contact["id"], internalWhatsappNumber="+51 900 000 002")
    nothing_found(by_phone(api, "51900000001"))
    assert found(by_phone(api, "51900000002")) == [contact["id"]]


@pytest.mark.parametrize("params", [{}, {"cellphone": ""}])
def test_by_cellphone_without_cellphone_is_400(api: Api, params: dict[str, str]) -> None:
    body = error(by_phone(api, None, params=params), 400, "BAD_REQUEST")
    assert error_fields(body) == ["cellphone"]


@pytest.mark.parametrize(
    "cellphone", ["abc", "12345", "1234567890123456", "51-98x-654", "++51987654321", " "]
)
def test_by_cellphone_malformed_is_422(api: Api, cellphone: str) -> None:
    body = error(by_phone(api, cellphone), 422, "VALIDATION_ERROR")
    assert error_fields(body) == ["cellphone"]


def test_by_cellphone_never_finds_a_deleted_contact(api: Api) -> None:
    by_number = api.create_contact(internalWhatsappNumber="51933333333")
    by_sender = api.create_contact(platformSenderPhone="51944444444")
    delete(api, by_number["id"], by_sender["id"])
    nothing_found(by_phone(api, "51933333333"))
    nothing_found(by_phone(api, "51944444444"))


def test_by_cellphone_never_finds_other_workspaces_contacts(api: Api, other_api: Api) -> None:
    other_api.create_contact(internalWhatsappNumber="51955555555")
    second_workspace(api).create_contact(platformSenderPhone="51955555555")
    nothing_found(by_phone(api, "51955555555"))


def test_by_cellphone_workspace_from_the_query(api: Api) -> None:
    contact = api.create_contact(internalWhatsappNumber="51966666666")
    response = by_phone(api, "51966666666", params={"workspaceId": api.ws}, workspace=None)
    assert found(response) == [contact["id"]]


def test_by_cellphone_workspace_rules(api: Api, other_api: Api) -> None:
    sibling = second_workspace(api)
    error(by_phone(api, "51966666666", params={"workspaceId": sibling.ws}), 403, "FORBIDDEN")
    error(by_phone(api, "51966666666", workspace=other_api.ws), 403, "FORBIDDEN")
    error(by_phone(api, "51966666666", workspace=None), 401, "WORKSPACE_REQUIRED")
    error(by_phone(api, "51966666666", auth=None), 401, "UNAUTHORIZED")
