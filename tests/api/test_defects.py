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
from tests.client import ENVELOPE_KEYS, Api, error, error_fields, ok_data
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


# --- a query parameter given twice, unknown ones where nothing filters --------------------


def test_a_parameter_given_twice_with_different_values_is_refused(api: Api, other_api: Api) -> None:
    """Never one of the two picked in silence: an update of `?id=A&id=B` must not change B,
    and `workspaceId` naming another account's workspace beside one's own is 403."""
    a = api.create_contact(name="A", email="a@example.com")
    b = api.create_contact(name="B", email="b@example.com")
    rename = {"paramToUpdate": "name", "name": "Changed"}
    two_ids = [("id", a["id"]), ("id", b["id"]), ("workspaceId", api.ws)]
    body = error(api.put("/api/contact", params=two_ids, json=rename), 400, "BAD_REQUEST")
    assert error_fields(body) == ["id"]
    foreign = [("id", a["id"]), ("workspaceId", other_api.ws), ("workspaceId", api.ws)]
    error(api.put("/api/contact", params=foreign, json=rename), 403, "FORBIDDEN")
    error(api.get(f"/api/contact/{a['id']}", params=foreign[1:], workspace=None), 403, "FORBIDDEN")
    body = error(
        api.get("/api/contact", params=[("pageSize", "2"), ("pageSize", "3")]), 400, "BAD_REQUEST"
    )
    assert error_fields(body) == ["pageSize"]
    for contact in (a, b):
        assert ok_data(api.get_contact(contact["id"]))["data"][0]["name"] == contact["name"]
    # The same value twice is that value.
    same = [("id", a["id"]), ("id", a["id"]), ("workspaceId", api.ws), ("workspaceId", api.ws)]
    ok_data(api.put("/api/contact", params=same, json=rename))
    assert ok_data(api.get_contact(a["id"]))["data"][0]["name"] == "Changed"


def test_a_cache_buster_and_unknown_parameters_of_a_get_by_id_are_ignored(api: Api) -> None:
    """jQuery's `cache: false` adds `_=<time>` to every GET; a get by id, like an update,
    ignores what it does not use (docs/api.md 5.19)."""
    contact = api.create_contact(name="A", email="a@example.com")
    opportunity = api.create_opportunity(name="D", amount=1)
    for path in (f"/api/contact/{contact['id']}", f"/api/opportunity/{opportunity['id']}"):
        ok_data(api.get(path, params={"_": "1700000000000", "foo": "1"}))
    ok_data(api.get("/api/contact", params={"_": "1700000000000"}))
    ok_data(api.get("/api/contact/searchByEmail", params={"email": "a@example.com", "_": "1"}))
    # Lists still refuse what they do not know (a misspelt filter).
    error(api.get("/api/contact", params={"foo": "1"}), 400, "BAD_REQUEST")


# --- HEAD answers every GET ---------------------------------------------------------------


def test_head_answers_every_get_with_its_status_and_headers(api: Api) -> None:
    """RFC 9110: a general-purpose server supports GET and HEAD. Same checks, same status
    and headers (the ETag of a record), no body."""
    contact = api.create_contact(name="A", email="head@example.com")
    for path in (f"/api/contact/{contact['id']}", "/api/contact", f"/api/workspace/{api.ws}"):
        got = api.get(path)
        head = api.request("HEAD", path)
        assert head.status_code == 200 and head.content == b""
        assert head.headers.get("etag") == got.headers.get("etag")
        assert head.headers["content-type"] == got.headers["content-type"]
    assert api.request("HEAD", "/api/contact/nope").status_code == 404
    assert api.request("HEAD", f"/api/contact/{contact['id']}", auth=None).status_code == 401
    # A path without GET still refuses HEAD.
    refused = api.request("HEAD", f"/api/contact/{contact['id']}/restore")
    assert refused.status_code == 405 and "HEAD" not in refused.headers["allow"]
