"""No way around a caller's limits (contract J.2, J.5, J.1): through a user it invites or
resets, through the keys a user made once demoted or removed, through a reset link of a
two-factor user, through another caller's idempotent answer, or by naming a record it
cannot see."""

from __future__ import annotations

import time
from typing import Any

import pyotp
import pytest
from sqlalchemy import select

from chatcrm.config import Settings
from chatcrm.db.database import Database
from chatcrm.db.schema import idempotency_keys
from tests.client import Api, error, ok_data, unique_email
from tests.conftest import run_sync
from tests.people.conftest import PASSWORD, Browser, invite, person, token_of


def _key(api: Api, *scopes: str, auth: str | None = "", **extra: Any) -> str:
    body = {"name": "k", "scopes": list(scopes), **extra}
    made: str = ok_data(api.post("/api/key", json=body, workspace=None, auth=auth))["apiKey"]
    return made


def _viewer(api: Api) -> dict[str, Any]:
    """An invitation body for a viewer of `api`'s workspace."""
    return {"email": unique_email(), "name": "V", "role": "viewer", "workspaceIds": [api.ws]}


def _denied(response: Any, scope: str) -> None:
    assert response.status_code == 403, response.text
    body = response.json()
    assert body["errorCode"] == "PERMISSION_DENIED" and body["data"] == {"required": scope}


def test_a_caller_makes_no_user_who_holds_more_than_itself(owner_api: Api) -> None:
    users_only = _key(owner_api, "users:manage")
    for role, first_missing in (
        ("owner", "contacts:read"),
        ("admin", "contacts:read"),
        ("agent", "contacts:read"),
    ):
        body = {"email": unique_email(), "name": "M", "role": role}
        if role == "agent":
            body["workspaceIds"] = [owner_api.ws]
        refused = owner_api.post("/api/user", json=body, workspace=None, auth=users_only)
        _denied(refused, first_missing)
    # Holding what a viewer holds, it may make a viewer, but not turn one into an agent.
    reader = _key(
        owner_api,
        "users:manage",
        "contacts:read",
        "opportunities:read",
        "messages:read",
        "events:read",
    )
    viewer = ok_data(
        owner_api.post(
            "/api/user",
            json=_viewer(owner_api),
            workspace=None,
            auth=reader,
        )
    )
    promote = {"paramToUpdate": "role", "role": "agent"}
    path = f"/api/user/{viewer['id']}"
    _denied(owner_api.put(path, json=promote, workspace=None, auth=reader), "contacts:write")
    assert ok_data(owner_api.get(path, workspace=None))["user"]["role"] == "viewer"


def test_a_reset_link_is_made_only_by_who_holds_all_its_user_holds(owner_api: Api) -> None:
    agent = invite(owner_api, "agent")
    users_only = _key(owner_api, "users:manage")
    refused = owner_api.post(f"/api/user/{agent['id']}/reset-link", workspace=None, auth=users_only)
    _denied(refused, "contacts:read")
    made = owner_api.post(f"/api/user/{agent['id']}/reset-link", workspace=None)
    assert ok_data(made)["resetUrl"] and made.headers["cache-control"] == "no-store"


def _eventually_refused(api: Api, key: str) -> None:
    deadline = time.monotonic() + 2
    while (
        api.post("/api/contact", json={"name": "x", "email": unique_email()}, auth=key).status_code
        == 200
    ):
        assert time.monotonic() < deadline, "the demoted user's key still writes"
        time.sleep(0.05)


def test_a_user_s_keys_follow_the_user_s_role_and_status(owner_api: Api) -> None:
    admin = person(owner_api, "admin")
    made = ok_data(admin.request("POST", "/api/key", json={"name": "mine", "scopes": ["*"]}))
    key = made["apiKey"]
    assert (
        owner_api.post(
            "/api/contact", json={"name": "By admin key", "email": unique_email()}, auth=key
        ).status_code
        == 200
    )
    demoted = owner_api.put(
        f"/api/user/{admin.user['id']}",
        json={
            "paramToUpdate": "role,workspaceIds",
            "role": "viewer",
            "workspaceIds": [owner_api.ws],
        },
        workspace=None,
    )
    ok_data(demoted)
    # Within 1 s everywhere, as a revocation (every cached key is dropped): a viewer's reach.
    _eventually_refused(owner_api, key)
    _denied(
        owner_api.post("/api/contact", json={"name": "Still?", "email": unique_email()}, auth=key),
        "contacts:write",
    )
    assert owner_api.get("/api/contact", auth=key).status_code == 200
    invited = {"email": unique_email(), "name": "X", "role": "admin"}
    _denied(owner_api.post("/api/user", json=invited, workspace=None, auth=key), "users:manage")
    second = ok_data(owner_api.post("/api/workspace", json={"name": "Two"}, workspace=None))["id"]
    error(owner_api.get("/api/contact", auth=key, workspace=second), 403, "FORBIDDEN")
    ok_data(owner_api.delete(f"/api/user/{admin.user['id']}", workspace=None))
    deadline = time.monotonic() + 2
    while owner_api.get("/api/contact", auth=key).status_code == 200:
        assert time.monotonic() < deadline, "the removed user's key still works"
        time.sleep(0.05)
    error(owner_api.get("/api/contact", auth=key), 401, "UNAUTHORIZED")


def _failed_sign_ins(api: Api) -> list[str]:
    """The e-mails of the account's audited failed sign-ins, newest first."""
    entries = ok_data(api.get("/api/audit", params={"pageSize": "100"}, workspace=None))["data"]
    return [e["target"] for e in entries if e["action"] == "session.failed"]


def test_a_reset_link_of_a_two_factor_user_still_needs_the_code(owner_api: Api) -> None:
    user = person(owner_api, "admin")
    totp = pyotp.TOTP(ok_data(user.request("POST", "/api/me/2fa"))["secret"])
    enabled = user.request("POST", "/api/me/2fa/enable", json={"code": totp.now()})
    recovery = ok_data(enabled)["recoveryCodes"]
    link = ok_data(owner_api.post(f"/api/user/{user.user['id']}/reset-link", workspace=None))
    browser = Browser(owner_api.http)
    accept = {"token": token_of(link["resetUrl"]), "password": "a new long password"}
    missing = browser.request("POST", "/api/invitation/accept", json=accept)
    error(missing, 401, "TWO_FACTOR_REQUIRED")
    # Asked for, not guessed: not counted (J.3); a wrong code is counted and audited.
    assert _failed_sign_ins(owner_api) == []
    wrong = browser.request("POST", "/api/invitation/accept", json={**accept, "code": "12345x"})
    assert error(wrong, 401, "TWO_FACTOR_REQUIRED")["message"].startswith("The code is not right")
    assert _failed_sign_ins(owner_api) == [user.user["email"]]
    # Neither changed the password, nor used the link up.
    old = {"email": user.user["email"], "password": PASSWORD, "code": recovery[0]}
    assert browser.request("POST", "/api/session", json=old).status_code == 200
    done = browser.request("POST", "/api/invitation/accept", json={**accept, "code": recovery[1]})
    assert ok_data(done, "Signed in successfully.")["user"]["id"] == user.user["id"]


@pytest.fixture
def idempotent(owner_api: Api) -> dict[str, Any]:
    second = ok_data(owner_api.post("/api/workspace", json={"name": "Other"}, workspace=None))
    return {"ws2": second["id"]}


def test_an_idempotent_answer_is_never_replayed_past_a_caller_s_limits(
    owner_api: Api, idempotent: dict[str, Any]
) -> None:
    ws2 = idempotent["ws2"]
    body = {"name": "Secret of WS2", "email": unique_email()}
    key = {"Idempotency-Key": "order-42"}
    first = owner_api.post("/api/contact", json=body, workspace=ws2, headers=key)
    created = ok_data(first)
    reader = _key(owner_api, "contacts:read", "contacts:write", workspaceIds=[owner_api.ws])
    # Outside its workspaces, or without the route's scope: refused as without the header.
    refused = owner_api.post("/api/contact", json=body, workspace=ws2, headers=key, auth=reader)
    error(refused, 403, "FORBIDDEN")
    assert created["id"] not in refused.text
    read_only = _key(owner_api, "contacts:read")
    denied = owner_api.post("/api/contact", json=body, workspace=ws2, headers=key, auth=read_only)
    _denied(denied, "contacts:write")
    # A person gets only the answers made for that same user.
    admin = person(owner_api, "admin")
    theirs = admin.request(
        "POST", "/api/contact", json=body, headers={**key, "x-workspace-id": ws2}
    )
    error(theirs, 409, "IDEMPOTENCY_KEY_REUSED")
    assert created["id"] not in theirs.text
    # Another key of the account that may do it: the answer (a rotated key's retry).
    writer = _key(owner_api, "contacts:read", "contacts:write")
    again = owner_api.post("/api/contact", json=body, workspace=ws2, headers=key, auth=writer)
    assert again.headers["idempotent-replayed"] == "true" and again.json() == first.json()


def test_an_answer_holding_a_secret_is_never_stored(owner_api: Api, database_url: str) -> None:
    key = {"Idempotency-Key": "new-key-1"}
    body = {"name": "ci", "scopes": ["contacts:read"]}
    first = ok_data(owner_api.post("/api/key", json=body, workspace=None, headers=key))
    second = owner_api.post("/api/key", json=body, workspace=None, headers=key)
    assert "idempotent-replayed" not in second.headers
    assert ok_data(second)["apiKey"] != first["apiKey"]
    invited = owner_api.post(
        "/api/user",
        json=_viewer(owner_api),
        workspace=None,
        headers={"Idempotency-Key": "invite-1"},
    )
    url = ok_data(invited)["inviteUrl"]

    async def stored_answers() -> str:
        db = Database(Settings(database_url=database_url))
        try:
            async with db.session() as conn:
                rows = await conn.fetch(select(idempotency_keys.c.response_body))
        finally:
            await db.dispose()
        return " ".join(row["response_body"] for row in rows)

    stored = run_sync(stored_answers)
    for secret in (first["apiKey"], ok_data(second)["apiKey"], token_of(url)):
        assert secret not in stored


def test_a_key_limited_to_workspaces_names_no_other(owner_api: Api) -> None:
    second = ok_data(owner_api.post("/api/workspace", json={"name": "Two"}, workspace=None))["id"]
    limited = _key(owner_api, "keys:manage", "contacts:read", workspaceIds=[owner_api.ws])
    refused = owner_api.post(
        "/api/key",
        json={"name": "c", "scopes": ["contacts:read"], "workspaceIds": [second]},
        workspace=None,
        auth=limited,
    )
    error(refused, 403, "FORBIDDEN")


def test_a_key_limited_to_workspaces_creates_none(owner_api: Api) -> None:
    """Every workspace a limited key names must be in its list; a new one could not be:
    403 FORBIDDEN, and no workspace made."""
    limited = _key(owner_api, "*", workspaceIds=[owner_api.ws])
    before = ok_data(owner_api.get("/api/workspace", workspace=None))["data"]
    refused = owner_api.post("/api/workspace", json={"name": "Three"}, workspace=None, auth=limited)
    error(refused, 403, "FORBIDDEN")
    assert ok_data(owner_api.get("/api/workspace", workspace=None))["data"] == before
    everywhere = _key(owner_api, "*")
    made = owner_api.post("/api/workspace", json={"name": "Three"}, workspace=None, auth=everywhere)
    assert ok_data(made)["name"] == "Three"
