"""Get contact by contact ID (contract A.2)."""

from __future__ import annotations

from tests.client import Api, error, ok_data

READ_SHAPE = [
    "id", "creationDate", "assignedAgentId", "assignedAgentName", "segmentationId",
    "lastMessage", "lastMessageDate", "platformSenderId", "platformSenderName",
    "platformSenderPhone", "isRead", "isBotEnabled", "isManuallyAdded", "avatarColor",
    "orderInCards", "orderInCardsLastUpdated", "tags", "files", "isSolved", "workspaceId",
    "name", "lastname", "email", "platformId", "stageId",
]  # fmt: skip


def test_get_returns_read_shape_in_contract_order(api: Api) -> None:
    contact = api.create_contact(name="Ana", lastname="Diaz")
    data = ok_data(api.get_contact(contact["id"]), "Successfully obtained list.")
    assert list(data) == ["contactId", "data"]
    assert data["contactId"] == contact["id"]
    assert len(data["data"]) == 1
    record = data["data"][0]
    assert list(record) == READ_SHAPE
    assert record["name"] == "Ana" and record["lastname"] == "Diaz"
    assert record["workspaceId"] == api.ws


def test_unknown_id_is_404(api: Api) -> None:
    error(api.get_contact("01a214de-0000-7000-8000-000000000000"), 404, "CONTACT_NOT_FOUND")
    error(api.get_contact("not-an-id"), 404, "CONTACT_NOT_FOUND")


def test_contact_of_another_workspace_is_404(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    error(api.get_contact(theirs["id"]), 404, "CONTACT_NOT_FOUND")
