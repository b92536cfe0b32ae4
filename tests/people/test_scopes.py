"""Permissions as scopes (contract J.2, J.5): every route walked with every role and with
keys of single scopes. A route outside the caller's scopes is 403 PERMISSION_DENIED naming
the scope and changes nothing; a route within them is never refused for a permission.
A route added without a scope in auth/scopes.py fails here (and the app refuses it)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from chatcrm.api.routing import ApiRoute, Operation
from chatcrm.app import ROUTES
from chatcrm.auth import scopes
from chatcrm.core.timestamps import utcnow
from tests.client import Api, error, ok_data, unique_email, unique_phone
from tests.people.conftest import Browser, person

UNKNOWN = "01a21a92-0000-7000-8000-000000000000"
OPERATIONS = [route.operation for routes in ROUTES for route in routes.routes]


def _path(op: Operation, ws: str) -> str:
    path = op.path.replace("{workspaceId}", ws)
    while "{" in path:
        start = path.index("{")
        path = path[:start] + UNKNOWN + path[path.index("}") + 1 :]
    return path


def _denied(response: httpx.Response, scope: str) -> bool:
    if response.status_code != 403:
        return False
    body = response.json()
    if body["errorCode"] != "PERMISSION_DENIED":
        return False
    assert body["data"] == {"required": scope}, body
    return True


def _walk(send: Any, granted: frozenset[str], ws: str) -> list[str]:
    problems = []
    for op in OPERATIONS:
        required = scopes.ROUTE_SCOPES[op.operation_id]
        if required is None or op.operation_id in ("signOut", "endSession"):
            continue  # open routes; signing out would end the walking session
        response = send(op.method, _path(op, ws))
        should = not scopes.allows(granted, required)
        if _denied(response, required[0]) != should:
            problems.append(f"{op.method} {op.path}: {response.status_code} {response.text[:120]}")
    return problems


def test_every_route_has_a_scope_and_every_scope_a_route() -> None:
    ids = {op.operation_id for op in OPERATIONS}
    assert ids == set(scopes.ROUTE_SCOPES)
    with pytest.raises(LookupError):
        ApiRoute(Operation("GET", "/api/new", "brandNew", "s", "t", "m", None), lambda c: c)


@pytest.mark.parametrize("role", ["viewer", "agent", "admin", "owner"])
def test_each_role_reaches_exactly_its_routes(owner_api: Api, role: str) -> None:
    browser = person(owner_api, role)

    def send(method: str, path: str) -> httpx.Response:
        body = None if method in ("GET", "DELETE") else {}
        return browser.request(method, path, json=body, headers={"x-workspace-id": owner_api.ws})

    assert not _walk(send, scopes.ROLES[role], owner_api.ws)


@pytest.mark.parametrize("scope", scopes.ALL)
def test_a_key_of_one_scope_reaches_exactly_its_routes(owner_api: Api, scope: str) -> None:
    key = ok_data(
        owner_api.post("/api/key", json={"name": scope, "scopes": [scope]}, workspace=None)
    )["apiKey"]

    def send(method: str, path: str) -> httpx.Response:
        body = None if method in ("GET", "DELETE") else {}
        return owner_api.request(method, path, json=body, auth=key)

    assert not _walk(send, frozenset({scope}), owner_api.ws)


def test_a_viewer_cannot_write_and_an_agent_cannot_delete(owner_api: Api) -> None:
    viewer = person(owner_api, "viewer")
    agent = person(owner_api, "agent")
    ws = {"x-workspace-id": owner_api.ws}
    phone = unique_phone()
    write = viewer.request("POST", "/api/contact", json={"name": "V", "phone": phone}, headers=ws)
    error_body = write.json()
    assert (write.status_code, error_body["errorCode"]) == (403, "PERMISSION_DENIED")
    assert error_body["data"] == {"required": "contacts:write"}
    found = ok_data(owner_api.get("/api/contact/searchByCellphone", params={"cellphone": phone}))
    assert found["data"] == []
    contact = owner_api.create_contact(name="Keep me")
    delete = agent.request("DELETE", f"/api/contact/{contact['id']}", headers=ws)
    assert delete.json()["data"] == {"required": "contacts:delete"}
    assert owner_api.get_contact(contact["id"]).status_code == 200
    created = agent.request(
        "POST", "/api/contact", json={"name": "A", "email": unique_email()}, headers=ws
    )
    assert created.status_code == 200, created.text
    assert viewer.request("GET", f"/api/contact/{contact['id']}", headers=ws).status_code == 200


# --- scoped keys ------------------------------------------------------------------------------


def test_a_key_never_grants_more_than_its_creator(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    # An agent has no keys:manage at all.
    refused = agent.request("POST", "/api/key", json={"name": "k", "scopes": ["contacts:read"]})
    assert refused.json()["data"] == {"required": "keys:manage"}
    limited = ok_data(
        owner_api.post(
            "/api/key",
            json={"name": "manager", "scopes": ["keys:manage", "contacts:read"]},
            workspace=None,
        )
    )["apiKey"]
    more = owner_api.post(
        "/api/key", json={"name": "k", "scopes": ["contacts:delete"]}, workspace=None, auth=limited
    )
    assert more.status_code == 403 and more.json()["data"] == {"required": "contacts:delete"}
    # ["*"] is every scope: one the creator lacks is refused (J.5), not narrowed unasked.
    every = owner_api.post(
        "/api/key", json={"name": "k", "scopes": ["*"]}, workspace=None, auth=limited
    )
    assert every.status_code == 403 and every.json()["errorCode"] == "PERMISSION_DENIED"
    assert every.json()["data"] == {"required": "opportunities:read"}
    assert "'*' (every scope)" in every.json()["message"]
    key = ok_data(
        owner_api.post(
            "/api/key",
            json={"name": "k", "scopes": ["contacts:read", "keys:manage"]},
            workspace=None,
            auth=limited,
        )
    )["key"]
    assert key["scopes"] == ["contacts:read", "keys:manage"]
    assert key["createdBy"] is not None


def test_a_key_record_and_its_workspaces(owner_api: Api) -> None:
    second = ok_data(owner_api.post("/api/workspace", json={"name": "Two"}, workspace=None))["id"]
    made = ok_data(
        owner_api.post(
            "/api/key",
            json={"name": "only one", "scopes": ["contacts:read"], "workspaceIds": [owner_api.ws]},
            workspace=None,
        ),
        "Key created successfully.",
    )
    assert list(made) == ["id", "key", "apiKey"]
    assert list(made["key"]) == [
        "id",
        "name",
        "scopes",
        "workspaceIds",
        "expiresAt",
        "createdAt",
        "lastUsedAt",
        "revokedAt",
        "createdBy",
    ]
    assert made["key"]["workspaceIds"] == [owner_api.ws]
    key = made["apiKey"]
    assert owner_api.get("/api/contact", auth=key).status_code == 200
    other = owner_api.get("/api/contact", auth=key, workspace=second)
    error(other, 403, "FORBIDDEN")
    listed = ok_data(owner_api.get("/api/key", workspace=None))["data"]
    assert made["id"] in [k["id"] for k in listed]
    assert key not in str(listed)
    me = ok_data(owner_api.get("/api/me", auth=key))
    assert me == {"key": ok_data(owner_api.get("/api/me", auth=key))["key"]}
    assert me["key"]["id"] == made["id"]


def test_a_key_limited_to_no_workspace_uses_none(owner_api: Api) -> None:
    """docs/api.md 10.7: `workspaceIds: []` is a key of no workspace, not of every one."""
    made = ok_data(
        owner_api.post(
            "/api/key",
            json={"name": "none", "scopes": ["contacts:read", "keys:manage"], "workspaceIds": []},
            workspace=None,
        )
    )
    assert made["key"]["workspaceIds"] == []
    key = made["apiKey"]
    error(owner_api.get("/api/contact", auth=key), 403, "FORBIDDEN")
    error(owner_api.get(f"/api/workspace/{owner_api.ws}", auth=key), 403, "FORBIDDEN")
    assert made["id"] in [
        k["id"] for k in ok_data(owner_api.get("/api/key", auth=key, workspace=None))["data"]
    ]


def test_an_expired_and_a_revoked_key_are_refused(owner_api: Api) -> None:
    soon = (datetime.now(UTC) + timedelta(seconds=1.5)).isoformat().replace("+00:00", "Z")
    made = ok_data(
        owner_api.post(
            "/api/key",
            json={"name": "brief", "scopes": ["contacts:read"], "expiresAt": soon},
            workspace=None,
        )
    )
    assert owner_api.get("/api/contact", auth=made["apiKey"]).status_code == 200
    import time

    time.sleep(2.0)
    error(owner_api.get("/api/contact", auth=made["apiKey"]), 401, "UNAUTHORIZED")
    past = owner_api.post(
        "/api/key",
        json={"name": "past", "scopes": ["*"], "expiresAt": "2020-01-01T00:00:00Z"},
        workspace=None,
    )
    error(past, 422, "VALIDATION_ERROR")
    live = ok_data(owner_api.post("/api/key", json={"name": "r", "scopes": ["*"]}, workspace=None))
    assert owner_api.get("/api/contact", auth=live["apiKey"]).status_code == 200
    revoked = ok_data(owner_api.delete(f"/api/key/{live['id']}", workspace=None))
    assert revoked["key"]["revokedAt"] is not None
    error(owner_api.get("/api/contact", auth=live["apiKey"]), 401, "UNAUTHORIZED")


def test_a_key_limited_to_some_workspaces_manages_only_keys_inside_them(owner_api: Api) -> None:
    """J.5: a workspace outside a key's `workspaceIds` is 403. Through the key list and
    revoke, a key limited to one workspace saw every key of the account and revoked the
    owner's unlimited one (and, with it, every key made with that one)."""
    second = ok_data(owner_api.post("/api/workspace", json={"name": "Two"}, workspace=None))["id"]

    def make(name: str, workspaces: list[str] | None, auth: str = "") -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, "scopes": ["*"]}
        if workspaces is not None:
            body["workspaceIds"] = workspaces
        made: dict[str, Any] = ok_data(
            owner_api.post("/api/key", json=body, workspace=None, auth=auth)
        )
        return made

    limited = make("limited", [owner_api.ws])
    inside = make("inside", [owner_api.ws])
    elsewhere = make("elsewhere", [second])
    unlimited = make("unlimited", None)
    key = limited["apiKey"]
    listed = [k["id"] for k in ok_data(owner_api.get("/api/key", auth=key, workspace=None))["data"]]
    assert limited["id"] in listed and inside["id"] in listed
    assert elsewhere["id"] not in listed and unlimited["id"] not in listed
    assert owner_api.key not in str(listed)
    for other in (elsewhere, unlimited):
        refused = owner_api.delete(f"/api/key/{other['id']}", auth=key, workspace=None)
        error(refused, 403, "FORBIDDEN")
        assert owner_api.get("/api/me", auth=other["apiKey"], workspace=None).status_code == 200
    own_key = ok_data(owner_api.get("/api/me", workspace=None))["key"]["id"]
    error(owner_api.delete(f"/api/key/{own_key}", auth=key, workspace=None), 403, "FORBIDDEN")
    assert owner_api.get("/api/contact").status_code == 200
    made_by_it = make("child", None, auth=key)  # its creator's workspaces, inside its reach
    assert made_by_it["key"]["workspaceIds"] == [owner_api.ws]
    ok_data(owner_api.delete(f"/api/key/{inside['id']}", auth=key, workspace=None))
    ok_data(owner_api.delete(f"/api/key/{made_by_it['id']}", auth=key, workspace=None))
    # An unlimited caller reaches every key.
    all_keys = [k["id"] for k in ok_data(owner_api.get("/api/key", workspace=None))["data"]]
    assert {elsewhere["id"], unlimited["id"], limited["id"]} <= set(all_keys)


def test_keys_made_with_a_key_end_with_it(owner_api: Api) -> None:
    """J.5: never more than the creator holds now. A revoked or expired key holds nothing,
    so the keys made with it are refused too: revoking a leaked key ends its copies."""
    soon = datetime.now(UTC) + timedelta(seconds=2)
    brief = ok_data(
        owner_api.post(
            "/api/key",
            json={"name": "brief", "scopes": ["*"], "expiresAt": soon.isoformat()},
            workspace=None,
        )
    )["apiKey"]
    made = ok_data(
        owner_api.post(
            "/api/key", json={"name": "copy", "scopes": ["*"]}, workspace=None, auth=brief
        )
    )
    # Asked for no expiry, it ends with its creator, and says so.
    assert made["key"]["expiresAt"] is not None
    assert datetime.fromisoformat(made["key"]["expiresAt"]) <= soon
    assert owner_api.get("/api/contact", auth=made["apiKey"]).status_code == 200
    time.sleep(max(0.0, (soon - datetime.now(UTC)).total_seconds()) + 0.3)
    error(owner_api.get("/api/contact", auth=made["apiKey"]), 401, "UNAUTHORIZED")

    parent = ok_data(
        owner_api.post("/api/key", json={"name": "p", "scopes": ["*"]}, workspace=None)
    )
    child = ok_data(
        owner_api.post(
            "/api/key", json={"name": "c", "scopes": ["*"]}, workspace=None, auth=parent["apiKey"]
        )
    )
    grandchild = ok_data(
        owner_api.post(
            "/api/key", json={"name": "g", "scopes": ["*"]}, workspace=None, auth=child["apiKey"]
        )
    )
    for key in (child, grandchild):
        assert owner_api.get("/api/contact", auth=key["apiKey"]).status_code == 200
        assert key["key"]["expiresAt"] is None
    ok_data(owner_api.delete(f"/api/key/{parent['id']}", workspace=None))
    for key in (child, grandchild):
        body = error(owner_api.get("/api/contact", auth=key["apiKey"]), 401, "UNAUTHORIZED")
        assert "revoked" in body["message"]
        # Nor can it make keys of its own any more.
        refused = owner_api.post(
            "/api/key", json={"name": "x", "scopes": ["*"]}, workspace=None, auth=key["apiKey"]
        )
        error(refused, 401, "UNAUTHORIZED")


@pytest.mark.parametrize(
    "body",
    [
        {"name": "x", "scopes": ["contacts:fly"]},
        {"name": "x", "scopes": []},
        {"name": "x", "scopes": "contacts:read"},
        {"name": "", "scopes": ["*"]},
    ],
)
def test_a_key_body_is_validated(owner_api: Api, body: dict[str, Any]) -> None:
    error(owner_api.post("/api/key", json=body, workspace=None), 422, "VALIDATION_ERROR")


def test_first_edition_account_keys_keep_every_permission(owner_api: Api) -> None:
    me = ok_data(owner_api.get("/api/me", workspace=None))["key"]
    assert me["scopes"] == ["*"] and me["workspaceIds"] is None
    owner_api.create_contact(name="still works", email=unique_email())


def test_the_cookie_is_secure_when_the_public_url_is_https(database_url: str, account: Any) -> None:
    from fastapi.testclient import TestClient

    from chatcrm.app import create_app
    from chatcrm.config import Settings

    settings = Settings(
        database_url=database_url,
        rate_limit=0,
        access_log=False,
        dispatch=False,
        public_url="https://crm.example",
    )
    with TestClient(
        create_app(settings), raise_server_exceptions=False, base_url="https://crm.example"
    ) as http:
        browser: Browser = person(Api(http, account), "viewer")
        assert browser.request("GET", "/api/me").status_code == 200
        again = Browser(http).request(
            "POST",
            "/api/session",
            json={"email": browser.user["email"], "password": "correct horse battery"},
        )
        assert "; Secure" in again.headers["set-cookie"]


def test_a_key_s_last_use_is_written(owner_api: Api, people_http: Any, database_url: str) -> None:
    from chatcrm.config import Settings
    from chatcrm.db.database import Database
    from chatcrm.people.upkeep import write_key_use
    from tests.conftest import run_sync

    made = ok_data(owner_api.post("/api/key", json={"name": "u", "scopes": ["*"]}, workspace=None))
    assert made["key"]["lastUsedAt"] is None
    before = utcnow().replace(microsecond=0)
    assert owner_api.get("/api/contact", auth=made["apiKey"]).status_code == 200
    after = utcnow()
    cache = people_http.app.app.state.auth_cache
    assert made["id"] in cache.recently_used
    time.sleep(1.1)  # written later: the value is still the time of the use

    async def write() -> None:
        db = Database(Settings(database_url=database_url))
        try:
            await write_key_use(db, cache)
        finally:
            await db.dispose()

    run_sync(write)
    listed = ok_data(owner_api.get("/api/key", workspace=None))["data"]
    last_used = next(k for k in listed if k["id"] == made["id"])["lastUsedAt"]
    assert before <= datetime.fromisoformat(last_used) <= after, (before, last_used, after)
    # An older use written later (another process's) does not move it back.
    cache.recently_used = {made["id"]: before.timestamp() - 60}
    run_sync(write)
    listed = ok_data(owner_api.get("/api/key", workspace=None))["data"]
    assert next(k for k in listed if k["id"] == made["id"])["lastUsedAt"] == last_used


def test_events_and_records_name_the_user_who_acted(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    ws = {"x-workspace-id": owner_api.ws}
    made = agent.request(
        "POST", "/api/contact", json={"name": "By Ana", "email": unique_email()}, headers=ws
    )
    contact = ok_data(made)["contact"]
    history = ok_data(owner_api.get(f"/api/contact/{contact['id']}/history"))["events"]
    assert history[0]["actor"] == {
        "type": "user",
        "id": agent.user["id"],
        "name": agent.user["name"],
    }
    assert list(history[0])[-1] == "actor"
    updated = agent.request(
        "PUT",
        "/api/contact",
        params={"id": contact["id"], "workspaceId": owner_api.ws},
        json={"lastMessage": "hola"},
        headers=ws,
    )
    ok_data(updated)
    history = ok_data(owner_api.get(f"/api/contact/{contact['id']}/history"))["events"]
    assert [e["actor"]["id"] for e in history] == [agent.user["id"]] * 2
    assert list(history[1])[-1] == "actor"
    deal = ok_data(
        agent.request("POST", "/api/opportunity", json={"name": "Deal", "amount": 5}, headers=ws)
    )
    assert deal["opportunity"]["userCreation"] == agent.user["id"]
