"""An Idempotency-Key covers the workspace too: the same key and body sent to another
workspace of the account is a different request (409), never a replay of the first."""

from __future__ import annotations

import dataclasses

from tests.client import Api, error, ok_data


def test_same_key_and_body_in_another_workspace_is_refused(api: Api) -> None:
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    other = Api(api.http, dataclasses.replace(api.account, workspace_id=second))
    body = {"name": "Ana", "email": "ana.idem@example.com"}
    headers = {"Idempotency-Key": "one-key"}
    first = ok_data(api.post("/api/contact", json=body, headers=headers))
    assert first["contact"]["workspaceId"] == api.ws
    error(other.post("/api/contact", json=body, headers=headers), 409, "IDEMPOTENCY_KEY_REUSED")
    assert ok_data(other.get("/api/contact"))["data"] == []
    # The first workspace still gets its replay.
    replay = api.post("/api/contact", json=body, headers=headers)
    assert replay.headers.get("idempotent-replayed") == "true"
    assert ok_data(replay) == first


def test_the_same_workspace_named_in_the_body_then_also_in_the_header_replays(api: Api) -> None:
    """Contract C: the same key with the same body replays; the workspace the request is
    for is the same whether the body names it alone or the header names it too."""
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    body = {"name": "Bea", "email": "bea.idem@example.com", "workspaceId": api.ws}
    headers = {"Idempotency-Key": "body-then-header"}
    first = ok_data(api.post("/api/contact", json=body, headers=headers, workspace=None))
    again = api.post("/api/contact", json=body, headers=headers)  # the header names it too
    assert again.headers.get("idempotent-replayed") == "true"
    assert ok_data(again) == first
    # Body for one workspace, header for another: another request (and a 403 if sent new).
    other = api.post("/api/contact", json=body, headers=headers, workspace=second)
    error(other, 409, "IDEMPOTENCY_KEY_REUSED")
