"""One route table: the direct dispatch (api/middleware.py) answers exactly as the
framework's router, and a route removed from the app is gone from both."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.provisioning import NewAccount
from tests.client import Api, unique_email


@pytest.fixture
def plain(settings: Settings) -> Iterator[TestClient]:
    with TestClient(
        create_app(settings, direct_dispatch=False), raise_server_exceptions=False
    ) as c:
        yield c


def _answer(response: Any) -> tuple[int, Any, str | None]:
    return response.status_code, response.json(), response.headers.get("etag")


def test_reads_and_errors_are_answered_the_same(
    api: Api, other_api: Api, plain: TestClient
) -> None:
    contact = api.create_contact(phone="+51 987 000 111", email=unique_email())
    opportunity = api.create_opportunity(contactId=contact["id"])
    theirs = other_api.create_contact()
    cases: list[tuple[str, str, dict[str, Any], dict[str, Any] | None]] = [
        ("GET", f"/api/contact/{contact['id']}", {}, None),
        ("GET", f"/api/contact/{theirs['id']}", {}, None),
        ("GET", "/api/contact/not-an-id", {}, None),
        ("GET", "/api/contact/searchByX", {}, None),
        ("GET", f"/api/opportunity/{opportunity['id']}", {}, None),
        ("GET", "/api/opportunity/nope", {}, None),
        ("GET", "/api/contact", {}, None),
        ("GET", "/api/contact", {"pageSize": "0"}, None),
        ("GET", "/api/contact", {"continuationToken": "forged.token"}, None),
        ("GET", "/api/contact", {"bogus": "1"}, None),
        ("GET", "/api/contact", {"q": "a\x00b"}, None),
        ("GET", "/api/opportunity", {"winLossStatus": "7"}, None),
        ("GET", "/api/contact/searchByCellphone", {"cellphone": "+51 987 000 111"}, None),
        ("GET", "/api/contact/searchByCellphone", {}, None),
        ("GET", "/api/contact/searchByEmail", {"email": contact["email"].upper()}, None),
        ("GET", "/api/contact/searchByEmail", {"email": "not-an-email"}, None),
        ("PUT", "/api/contact", {"id": contact["id"], "workspaceId": api.ws}, {}),
        ("PUT", "/api/contact", {"id": contact["id"]}, {"paramToUpdate": "name", "name": "x"}),
        ("PUT", "/api/contact", {"id": theirs["id"], "workspaceId": api.ws},
         {"paramToUpdate": "name", "name": "x"}),
        ("PUT", "/api/contact", {"id": contact["id"], "workspaceId": api.ws},
         {"paramToUpdate": "isRead", "isRead": "yes"}),
        ("PUT", "/api/opportunity", {"id": opportunity["id"]},
         {"paramToUpdate": "amount", "amount": -1}),
        ("PUT", "/api/opportunity", {}, {"paramToUpdate": "amount", "amount": 1}),
        ("PUT", "/api/opportunity", {"id": "nope"}, {"paramToUpdate": "amount", "amount": 1}),
    ]  # fmt: skip
    for method, path, params, body in cases:
        hot = api.request(method, path, params=params, json=body)
        slow = plain.request(method, path, params=params, json=body, headers=api.headers())
        assert _answer(hot) == _answer(slow), (method, path, params, body)
    for headers in ({}, {"Authorization": "Bearer nope"}):
        hot = api.http.get(f"/api/contact/{contact['id']}", headers=headers)
        slow = plain.get(f"/api/contact/{contact['id']}", headers=headers)
        assert _answer(hot) == _answer(slow)


def test_updates_are_answered_the_same(api: Api, plain: TestClient) -> None:
    first, second = api.create_contact(), api.create_contact()
    body = {"paramToUpdate": "name,isRead", "name": "Same", "isRead": True}
    hot = api.update_contact(first["id"], body).json()
    slow = plain.put(
        "/api/contact",
        params={"id": second["id"], "workspaceId": api.ws},
        json=body,
        headers=api.headers(),
    ).json()
    for answer in (hot, slow):  # records differ by id and times; everything else is equal
        for key in (
            "id",
            "creationDate",
            "lastMessageDate",
            "orderInCardsLastUpdated",
            "email",
            "orderInCards",
        ):
            answer["data"]["contact"].pop(key)
        answer["data"].pop("id")
    assert hot == slow


@pytest.mark.parametrize("direct", [True, False])
def test_a_route_removed_from_the_app_is_gone_everywhere(
    settings: Settings, account: NewAccount, direct: bool
) -> None:
    app = create_app(settings, direct_dispatch=direct)
    app.router.routes[:] = [
        r for r in app.router.routes if getattr(r, "name", None) != "updateContact"
    ]
    api_headers = {
        "Authorization": f"Bearer {account.api_key}",
        "x-workspace-id": account.workspace_id,
    }
    with TestClient(app, raise_server_exceptions=False) as client:
        api = Api(client, account)
        contact = api.create_contact()
        response = client.put(
            "/api/contact",
            params={"id": contact["id"], "workspaceId": account.workspace_id},
            json={"paramToUpdate": "name", "name": "x"},
            headers=api_headers,
        )
        assert response.status_code == 405, response.text
        assert "PUT" not in response.headers["allow"]
        assert "updateContact" not in str(client.get("/openapi.json").json())
        # The rest of the table still answers.
        assert client.get(f"/api/contact/{contact['id']}", headers=api_headers).status_code == 200
