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
