"""What a new user of the first edition ran into, each pinned by a test."""

from __future__ import annotations

import json
import socket
import uuid

import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.provisioning import NewAccount
from tests.api.test_ops import REQUESTS, scrape, value
from tests.client import ENVELOPE_KEYS, Api, error, error_fields
from tests.conftest import new_account
from tests.servers import serve

# --- every bad query value of a list is named --------------------------------------------


def test_a_list_names_every_bad_query_value(api: Api) -> None:
    body = error(
        api.get(
            "/api/contact",
            params={"isSolved": "maybe", "updatedSince": "yesterday", "pageSize": "abc"},
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["isSolved", "updatedSince", "pageSize"]
    assert "(and 2 more)" in body["message"]
    body = error(
        api.get(
            "/api/opportunity",
            params={"winLossStatus": "9", "updatedSince": "soon", "pageSize": "0"},
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["winLossStatus", "updatedSince", "pageSize"]


# --- "Accepted keys" names workspaceId, which is accepted ------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/api/contact", {"name": "A", "email": "a@example.com", "nickname": "x"}),
        ("/api/opportunity", {"name": "D", "amount": 1, "nickname": "x"}),
        ("/api/contact/delete-batch", {"contactIds": [], "nickname": "x"}),
        ("/api/workspace", {"name": "W", "nickname": "x"}),
    ],
)
def test_accepted_keys_include_workspace_id(api: Api, path: str, body: dict[str, object]) -> None:
    answer = error(api.post(path, json=body), 400, "BAD_REQUEST")
    assert answer["message"].startswith("Unexpected body key 'nickname'. Accepted keys: ")
    assert "workspaceId" in answer["message"]
    # And it is accepted indeed.
    accepted = api.post(path, json={**{k: v for k, v in body.items() if k != "nickname"},
                                     "workspaceId": api.ws})  # fmt: skip
    assert accepted.status_code in (200, 422), accepted.text


# --- answers given before routing are counted under their route ----------------------------


def test_answers_given_before_routing_are_labelled_by_route(
    settings: Settings, database_url: str
) -> None:
    app = create_app(settings.model_copy(update={"rate_limit": 1.0, "rate_burst": 3}))
    with TestClient(app, raise_server_exceptions=False) as client:
        api = Api(client, new_account(database_url))
        _, before = scrape(client)
        key = {"Idempotency-Key": uuid.uuid4().hex}
        body = {"name": "Ana", "email": f"{uuid.uuid4().hex}@example.com"}
        assert api.post("/api/contact", json=body, headers=key).status_code == 200
        replay = api.post("/api/contact", json=body, headers=key)
        assert replay.headers.get("idempotent-replayed") == "true"
        reused = api.post("/api/contact", json={**body, "name": "Other"}, headers=key)
        assert reused.status_code == 409 or reused.status_code == 429
        while api.post("/api/contact", json=body).status_code != 429:
            pass
        _, after = scrape(client)

    def delta(status: str) -> float:
        labels = {"method": "POST", "route": "/api/contact", "status": status}
        return value(after, REQUESTS, **labels) - value(before, REQUESTS, **labels)

    assert delta("200") >= 2  # the first answer and its replay
    assert delta("429") >= 1
    unmatched = {"method": "POST", "route": "unmatched"}
    for status in ("200", "409", "429"):
        labels = {**unmatched, "status": status}
        assert value(after, REQUESTS, **labels) == value(before, REQUESTS, **labels)


def test_a_bad_idempotency_key_is_labelled_by_route(http: TestClient, api: Api) -> None:
    _, before = scrape(http)
    error(api.post("/api/contact", json={}, headers={"Idempotency-Key": "bad key"}), 400,
          "BAD_REQUEST")  # fmt: skip
    _, after = scrape(http)
    labels = {"method": "POST", "route": "/api/contact", "status": "400"}
    assert value(after, REQUESTS, **labels) - value(before, REQUESTS, **labels) == 1


# --- a request the HTTP server cannot read is answered in the envelope -------------------


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2])
def test_an_unencoded_non_ascii_query_is_answered_in_the_envelope(
    database_url: str, account: NewAccount, workers: int
) -> None:
    with serve(database_url, workers=workers) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        request = (
            f"GET /api/contact?q=MARÍA HTTP/1.1\r\nHost: {host}\r\n"
            f"Authorization: Bearer {account.api_key}\r\n"
            f"x-workspace-id: {account.workspace_id}\r\nConnection: close\r\n\r\n"
        ).encode()
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(request)
            raw = b""
            while chunk := sock.recv(65536):
                raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0] == "HTTP/1.1 400 Bad Request", raw
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers["content-type"].startswith("application/json")
    assert headers["x-request-id"]
    envelope = json.loads(body)
    assert list(envelope) == ENVELOPE_KEYS
    assert envelope["code"] == 400 and envelope["errorCode"] == "BAD_REQUEST"
    assert "percent-encode" in envelope["message"]
