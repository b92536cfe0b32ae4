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
    # Body for one workspace, header for another: the route's 403, as without the key.
    other = api.post("/api/contact", json=body, headers=headers, workspace=second)
    error(other, 403, "FORBIDDEN")


def test_a_replay_covers_the_workspace_wherever_it_is_named(api: Api) -> None:
    """The workspace of a restore is named in its query: the same key and (empty) body
    for another workspace replayed the first workspace's restored contact instead of 409."""
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    contact = api.create_contact(email="res.idem@example.com")
    ok_data(api.delete(f"/api/contact/{contact['id']}"))
    headers = {"Idempotency-Key": "restore-key"}
    path = f"/api/contact/{contact['id']}/restore"
    restored = api.post(path, params={"workspaceId": api.ws}, headers=headers, workspace=None)
    ok_data(restored)
    other = api.post(path, params={"workspaceId": second}, headers=headers, workspace=None)
    error(other, 409, "IDEMPOTENCY_KEY_REUSED")
    again = api.post(path, params={"workspaceId": api.ws}, headers=headers, workspace=None)
    assert again.headers.get("idempotent-replayed") == "true"


def test_a_key_limited_to_other_workspaces_never_gets_a_stored_answer(api: Api) -> None:
    """Its workspace named in the body (or none: creating a workspace), a key limited to
    another workspace was given the stored answer its own request is refused (a webhook's
    secret, another workspace's contact)."""
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    key = {"name": "only second", "scopes": ["*"], "workspaceIds": [second]}
    made = ok_data(api.post("/api/key", json=key, workspace=None))
    limited = Api(api.http, dataclasses.replace(api.account, api_key=made["apiKey"]))
    cases = [
        ("/api/webhook", {"workspaceId": api.ws, "url": "http://93.184.216.34/in"}),
        ("/api/contact", {"workspaceId": api.ws, "name": "Lim", "email": "lim.idem@example.com"}),
        ("/api/workspace", {"name": "Finance"}),
    ]
    for n, (path, body) in enumerate(cases):
        headers = {"Idempotency-Key": f"limited-{n}"}
        ok_data(api.post(path, json=body, headers=headers, workspace=None))
        answer = limited.post(path, json=body, headers=headers, workspace=None)
        error(answer, 403, "FORBIDDEN")
        assert answer.headers.get("idempotent-replayed") is None


def test_a_query_workspace_that_selects_nothing_is_not_the_request_s_workspace(
    api: Api,
) -> None:
    """On a POST that takes its workspace from the header or the body, a query
    `workspaceId` does not select it (docs/api.md 1.8): keyed, that request is for no
    workspace (401) and its retry naming the workspace is another request (409), never
    the stored 401 again."""
    body = {"name": "Quinn", "amount": 1}
    headers = {"Idempotency-Key": "query-only"}
    query = {"workspaceId": api.ws}
    first = api.post("/api/opportunity", json=body, headers=headers, params=query, workspace=None)
    error(first, 401, "WORKSPACE_REQUIRED")
    retried = api.post("/api/opportunity", json=body, headers=headers)
    assert retried.headers.get("idempotent-replayed") is None
    error(retried, 409, "IDEMPOTENCY_KEY_REUSED")
    # The same query-only request again is a replay of its own 401.
    again = api.post("/api/opportunity", json=body, headers=headers, params=query, workspace=None)
    assert again.headers.get("idempotent-replayed") == "true"
    # A restore takes its workspace from the query: there it is the request's workspace.
    contact = api.create_contact()
    ok_data(api.delete(f"/api/contact/{contact['id']}"))
    restore = {"Idempotency-Key": "restore-by-query"}
    path = f"/api/contact/{contact['id']}/restore"
    done = ok_data(api.post(path, headers=restore, params=query, workspace=None))
    replay = api.post(path, headers=restore, params=query, workspace=None)
    assert replay.headers.get("idempotent-replayed") == "true"
    assert ok_data(replay) == done
    # Header and query naming other workspaces: the route's 403, as without the key.
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    both = api.post("/api/opportunity", json=body, headers=headers, params={"workspaceId": second})
    error(both, 403, "FORBIDDEN")
