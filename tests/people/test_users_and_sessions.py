"""Users, invitations, console sessions, two-factor (contract J.1, J.3): each refusal the
contract names, tested the way a careless implementation would fail it."""

from __future__ import annotations

import base64
import logging
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pyotp
import pytest
from fastapi.testclient import TestClient

from chatcrm.api.gate import WRONG_CSRF
from chatcrm.app import create_app
from chatcrm.auth import scopes
from chatcrm.config import Settings
from tests.client import Api, error, ok_data, unique_email
from tests.conftest import new_account
from tests.people.conftest import PASSWORD, Browser, invite, person, token_of


def _refusal(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["errorCode"] == code, body
    assert body["success"] is False
    return body


# --- invitations and users ---------------------------------------------------------------


def test_an_invitation_makes_an_invited_user_with_a_link_from_the_public_url(
    owner_api: Api,
) -> None:
    email = "Mixed.Case." + unique_email()
    data = invite(owner_api, "viewer", email=email)
    user = data["user"]
    assert list(user) == [
        "id",
        "email",
        "name",
        "role",
        "status",
        "workspaceIds",
        "agentIds",
        "twoFactorEnabled",
        "createdAt",
        "lastSignInAt",
    ]
    assert user["email"] == email  # stored as given
    assert (user["status"], user["role"], user["workspaceIds"]) == (
        "invited",
        "viewer",
        [owner_api.ws],
    )
    assert user["lastSignInAt"] is None and user["twoFactorEnabled"] is False
    assert data["id"] == user["id"]
    assert data["inviteUrl"].startswith("http://console.test/console/#invite/")
    assert len(token_of(data["inviteUrl"])) >= 43  # 32 random bytes
    # The e-mail is unique whatever its case.
    again = owner_api.post(
        "/api/user",
        json={"email": email.upper(), "name": "Twin", "role": "admin"},
        workspace=None,
    )
    error(again, 409, "DUPLICATE_USER")


def test_the_link_ignores_the_host_header(owner_api: Api) -> None:
    body = {"email": unique_email(), "name": "Host", "role": "admin"}
    data = ok_data(
        owner_api.post("/api/user", json=body, workspace=None, headers={"host": "evil.example"})
    )
    assert data["inviteUrl"].startswith("http://console.test/")


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"email": "nope", "name": "A", "role": "admin"}, ["email"]),
        ({"email": "a@example.com", "name": "", "role": "admin"}, ["name"]),
        ({"email": "a@example.com", "name": "A", "role": "boss"}, ["role"]),
        ({"email": "a@example.com", "name": "A", "role": "agent"}, ["workspaceIds"]),
        (
            {"email": "a@example.com", "name": "A", "role": "viewer", "workspaceIds": []},
            ["workspaceIds"],
        ),
    ],
)
def test_an_invitation_is_validated(owner_api: Api, body: dict, fields: list[str]) -> None:
    got = error(owner_api.post("/api/user", json=body, workspace=None), 422, "VALIDATION_ERROR")
    assert [e["field"] for e in got["data"]["errors"]] == fields


def test_accepting_activates_signs_in_and_the_link_works_once(owner_api: Api) -> None:
    invited = invite(owner_api, "agent")
    token = token_of(invited["inviteUrl"])
    browser = Browser(owner_api.http)
    response = browser.request(
        "POST", "/api/invitation/accept", json={"token": token, "password": PASSWORD, "name": "Eve"}
    )
    browser.signed_in(response)
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    assert "Secure" not in cookie  # http public URL
    assert browser.user["status"] == "active" and browser.user["name"] == "Eve"
    assert browser.user["lastSignInAt"] is not None
    # A used invitation.
    used = Browser(owner_api.http).request(
        "POST", "/api/invitation/accept", json={"token": token, "password": PASSWORD}
    )
    _refusal(used, 400, "INVALID_TOKEN")
    unknown = Browser(owner_api.http).request(
        "POST", "/api/invitation/accept", json={"token": "x" * 43, "password": PASSWORD}
    )
    _refusal(unknown, 400, "INVALID_TOKEN")


@pytest.mark.parametrize("password", ["short", "x" * 129, "EMAIL"])
def test_a_weak_password_is_refused_and_the_link_stays_usable(
    owner_api: Api, password: str
) -> None:
    invited = invite(owner_api, "viewer")
    if password == "EMAIL":
        password = invited["user"]["email"].upper()
        assert len(password) >= 10
    token = token_of(invited["inviteUrl"])
    weak = Browser(owner_api.http).request(
        "POST", "/api/invitation/accept", json={"token": token, "password": password}
    )
    body = _refusal(weak, 422, "VALIDATION_ERROR")
    assert [e["field"] for e in body["data"]["errors"]] == ["password"]
    assert password not in weak.text
    fine = Browser(owner_api.http).request(
        "POST", "/api/invitation/accept", json={"token": token, "password": PASSWORD}
    )
    assert fine.status_code == 200, fine.text


def test_the_account_keeps_an_active_owner(owner_api: Api) -> None:
    owner = person(owner_api, "owner")
    others = [
        u
        for u in ok_data(owner_api.get("/api/user", workspace=None))["data"]
        if u["role"] == "owner" and u["status"] == "active" and u["id"] != owner.user["id"]
    ]
    for other in others:  # earlier tests of this account's module may have made some
        ok_data(owner_api.delete(f"/api/user/{other['id']}", workspace=None))
    demote = owner_api.put(f"/api/user/{owner.user['id']}", json={"role": "admin"}, workspace=None)
    error(demote, 409, "LAST_OWNER")
    error(owner_api.delete(f"/api/user/{owner.user['id']}", workspace=None), 409, "LAST_OWNER")
    disable = owner_api.put(
        f"/api/user/{owner.user['id']}",
        json={"paramToUpdate": "status", "status": "disabled"},
        workspace=None,
    )
    error(disable, 409, "LAST_OWNER")
    # An owner invited, disabled and enabled again has still not accepted: invited, not
    # an active owner that would let the last one who can sign in step down.
    ghost = invite(owner_api, "owner")["user"]["id"]
    for status in ("disabled", "active"):
        body = {"paramToUpdate": "status", "status": status}
        ok_data(owner_api.put(f"/api/user/{ghost}", json=body, workspace=None))
    got = ok_data(owner_api.get(f"/api/user/{ghost}", workspace=None))["user"]
    assert got["status"] == "invited"
    demote = owner_api.put(f"/api/user/{owner.user['id']}", json={"role": "admin"}, workspace=None)
    error(demote, 409, "LAST_OWNER")
    second = person(owner_api, "owner")
    ok_data(owner_api.put(f"/api/user/{owner.user['id']}", json={"role": "admin"}, workspace=None))
    assert second.request("GET", "/api/me").status_code == 200


def test_an_admin_cannot_make_change_or_remove_an_owner(owner_api: Api) -> None:
    admin = person(owner_api, "admin")
    owner = person(owner_api, "owner")
    body = {"email": unique_email(), "name": "Boss", "role": "owner"}
    refused = admin.request("POST", "/api/user", json=body)
    assert _refusal(refused, 403, "PERMISSION_DENIED")["data"] == {"required": "users:manage"}
    for method, path, json in [
        ("PUT", f"/api/user/{owner.user['id']}", {"name": "Renamed"}),
        ("DELETE", f"/api/user/{owner.user['id']}", None),
    ]:
        _refusal(admin.request(method, path, json=json), 403, "PERMISSION_DENIED")
    promote = person(owner_api, "agent")
    _refusal(
        admin.request("PUT", f"/api/user/{promote.user['id']}", json={"role": "owner"}),
        403,
        "PERMISSION_DENIED",
    )
    # Nor give an owner a reset link: accepting it would set the owner's password.
    link = admin.request("POST", f"/api/user/{owner.user['id']}/reset-link")
    assert _refusal(link, 403, "PERMISSION_DENIED")["data"] == {"required": "users:manage"}
    assert "resetUrl" not in link.text
    # A key the admin makes, even with every scope, keeps the admin's limit; and so does a
    # key that key makes.
    key = ok_data(admin.request("POST", "/api/key", json={"name": "k", "scopes": ["*"]}))
    made_by_key = ok_data(
        owner_api.post(
            "/api/key", json={"name": "k2", "scopes": ["*"]}, workspace=None, auth=key["apiKey"]
        )
    )
    for api_key in (key["apiKey"], made_by_key["apiKey"]):
        for method, path, json in [
            ("POST", "/api/user", {**body, "email": unique_email()}),
            ("PUT", f"/api/user/{owner.user['id']}", {"name": "Renamed"}),
            ("DELETE", f"/api/user/{owner.user['id']}", None),
            ("POST", f"/api/user/{owner.user['id']}/reset-link", None),
            ("PUT", f"/api/user/{promote.user['id']}", {"role": "owner"}),
        ]:
            refused = owner_api.request(method, path, json=json, workspace=None, auth=api_key)
            _refusal(refused, 403, "PERMISSION_DENIED")
        # Everything else an admin may do, its key does.
        ok_data(owner_api.put(
            f"/api/user/{promote.user['id']}", json={"name": "Renamed"}, workspace=None,
            auth=api_key,
        ))  # fmt: skip
    me = ok_data(owner.request("GET", "/api/me"))["user"]
    assert me["name"] == owner.user["name"] and me["status"] == "active"
    # An owner's key, and the account's own, reach owners.
    owner_key = ok_data(owner.request("POST", "/api/key", json={"name": "o", "scopes": ["*"]}))
    ok_data(
        owner_api.post(
            f"/api/user/{owner.user['id']}/reset-link", workspace=None, auth=owner_key["apiKey"]
        )
    )
    ok_data(owner_api.post(f"/api/user/{owner.user['id']}/reset-link", workspace=None))


def test_an_operation_with_no_body_fields_says_it_takes_none(owner_api: Api) -> None:
    """J.1: a reset link takes no body fields; the refusal must not list an empty set."""
    user = invite(owner_api)["user"]
    refused = owner_api.post(f"/api/user/{user['id']}/reset-link", json={"x": 1}, workspace=None)
    body = _refusal(refused, 400, "BAD_REQUEST")
    assert body["message"] == "Unexpected body key 'x'. It takes none."
    assert body["data"]["errors"] == [{"field": "x", "message": body["message"]}]


def test_an_unexpected_key_of_a_user_update_is_not_told_to_send_a_workspace(
    owner_api: Api,
) -> None:
    """The message of an extra key listed `workspaceId` among what an update may send; a
    user's update refuses it (a user belongs to the account)."""
    user = invite(owner_api)["user"]
    path = f"/api/user/{user['id']}"
    extra = {"paramToUpdate": "name", "name": "N", "foo": 1}
    body = _refusal(owner_api.put(path, json=extra, workspace=None), 400, "BAD_REQUEST")
    assert body["message"] == (
        "Unexpected body key 'foo': send only 'paramToUpdate', id and the fields named in "
        "'paramToUpdate'."
    )
    told = {"paramToUpdate": "name", "name": "N", "workspaceId": owner_api.ws}
    body = _refusal(owner_api.put(path, json=told, workspace=None), 400, "BAD_REQUEST")
    assert body["message"].startswith("Unexpected body key 'workspaceId': a user belongs")


def test_a_key_limited_to_workspaces_manages_only_users_inside_them(owner_api: Api) -> None:
    second = ok_data(owner_api.post("/api/workspace", json={"name": "Two"}, workspace=None))["id"]
    limited = ok_data(
        owner_api.post(
            "/api/key",
            json={
                "name": "ws1",
                # What an agent holds (J.5: it makes no user who holds more), and users.
                "scopes": ["users:manage", *sorted(scopes.ROLES["agent"])],
                "workspaceIds": [owner_api.ws],
            },
            workspace=None,
        )
    )["apiKey"]
    inside = invite(owner_api, "agent")
    outside = invite(owner_api, "agent", workspaceIds=[second])
    admin = invite(owner_api, "admin")

    def post_user(role: str, workspace_ids: list[str]) -> Any:
        body = {"email": unique_email(), "name": "N", "role": role, "workspaceIds": workspace_ids}
        return owner_api.post("/api/user", json=body, workspace=None, auth=limited)

    assert ok_data(post_user("viewer", [owner_api.ws]))["user"]["workspaceIds"] == [owner_api.ws]
    for role, ids in [
        ("agent", [second]),
        ("agent", [owner_api.ws, second]),
        ("admin", [owner_api.ws]),
        ("owner", []),
    ]:
        _refusal(post_user(role, ids), 403, "FORBIDDEN")
    for method, path, json in [
        ("PUT", f"/api/user/{inside['id']}", {"workspaceIds": [owner_api.ws, second]}),
        ("PUT", f"/api/user/{inside['id']}", {"role": "admin"}),
        ("PUT", f"/api/user/{outside['id']}", {"name": "Renamed"}),
        ("DELETE", f"/api/user/{outside['id']}", None),
        ("POST", f"/api/user/{outside['id']}/reset-link", None),
        ("DELETE", f"/api/user/{outside['id']}/sessions", None),
        ("POST", f"/api/user/{admin['id']}/reset-link", None),
        ("PUT", f"/api/user/{admin['id']}", {"name": "Renamed"}),
    ]:
        refused = owner_api.request(method, path, json=json, workspace=None, auth=limited)
        _refusal(refused, 403, "FORBIDDEN")
    users = {u["id"]: u for u in ok_data(owner_api.get("/api/user", workspace=None))["data"]}
    assert users[inside["id"]]["workspaceIds"] == [owner_api.ws]
    assert users[inside["id"]]["role"] == "agent"
    assert users[outside["id"]]["name"] == outside["user"]["name"]
    assert users[admin["id"]]["name"] == admin["user"]["name"]
    renamed = owner_api.put(
        f"/api/user/{inside['id']}", json={"name": "Renamed"}, workspace=None, auth=limited
    )
    assert ok_data(renamed)["user"]["name"] == "Renamed"
    ok_data(owner_api.post(f"/api/user/{inside['id']}/reset-link", workspace=None, auth=limited))


def test_owners_and_admins_belong_to_every_workspace(owner_api: Api) -> None:
    second = ok_data(owner_api.post("/api/workspace", json={"name": "Two"}, workspace=None))["id"]
    admin = invite(owner_api, "admin", workspaceIds=[second])
    assert set(admin["user"]["workspaceIds"]) >= {owner_api.ws, second}
    agent = person(owner_api, "agent")
    assert agent.user["workspaceIds"] == [owner_api.ws]
    other = agent.request("GET", f"/api/workspace/{second}")
    _refusal(other, 403, "FORBIDDEN")
    assert agent.request("GET", f"/api/workspace/{owner_api.ws}").status_code == 200


def test_an_agent_is_linked_by_email_to_its_agents(owner_api: Api) -> None:
    email = "ñandú." + unique_email()  # the case of every letter, not ASCII's only
    agent = owner_api.add_agent(name="Linked", email=email.upper())
    data = invite(owner_api, "agent", email=email)
    assert data["user"]["agentIds"] == [agent["id"]]


# --- sign-in -------------------------------------------------------------------------------


def _sign_in(http: TestClient, email: str, password: str, **extra: str):
    return Browser(http).request(
        "POST", "/api/session", json={"email": email, "password": password, **extra}
    )


def test_each_sign_in_is_a_new_session_with_a_new_token(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    email = agent.user["email"]
    tokens = set()
    # Any case, and spaces around it as an invitation takes them (a pasted address).
    for given in (email, email.upper(), f"  {email} "):
        again = Browser(owner_api.http).signed_in(_sign_in(owner_api.http, given, PASSWORD))
        assert again.token not in tokens | {agent.token}
        tokens.add(again.token)
    # A token planted before sign-in is not adopted (fixation).
    planted = Browser(owner_api.http, token="attacker-chosen-token")
    response = planted.request("POST", "/api/session", json={"email": email, "password": PASSWORD})
    planted.signed_in(response)
    assert planted.token != "attacker-chosen-token"
    assert (
        Browser(owner_api.http, token="attacker-chosen-token").request("GET", "/api/me").status_code
        == 401
    )
    listed = ok_data(agent.request("GET", "/api/session/list"))["data"]
    assert len(listed) == 5 and sum(s["current"] for s in listed) == 1
    assert [s["createdAt"] for s in listed] == sorted(
        (s["createdAt"] for s in listed), reverse=True
    )


def test_one_refusal_for_unknown_email_wrong_password_and_inactive_users(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    invited = invite(owner_api, "viewer")
    answers = []
    timings = []
    for email, password in [
        (unique_email(), PASSWORD),
        (agent.user["email"], PASSWORD + "x"),
        (invited["user"]["email"], PASSWORD),
    ]:
        started = time.perf_counter()
        response = _sign_in(owner_api.http, email, password)
        timings.append(time.perf_counter() - started)
        body = _refusal(response, 401, "INVALID_CREDENTIALS")
        answers.append((body["message"], body["data"]))
    assert len(set(answers)) == 1
    # The same Argon2 work for an unknown e-mail (not a timed assertion: a floor).
    assert min(timings) > 0.005, timings


def test_throttling_refuses_even_the_right_password_while_it_lasts(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    email = agent.user["email"]
    for _ in range(5):
        _refusal(_sign_in(owner_api.http, email, "wrong password!"), 401, "INVALID_CREDENTIALS")
    right = _sign_in(owner_api.http, email, PASSWORD)
    _refusal(right, 429, "TOO_MANY_ATTEMPTS")
    assert 1 <= int(right.headers["retry-after"]) <= 60
    assert agent.request("GET", "/api/me").status_code == 200  # open sessions go on


def test_a_session_cannot_guess_its_user_s_password(owner_api: Api) -> None:
    """The password asked again (to change it, to turn two-factor off) is throttled as
    sign-in is: whoever holds a session cannot try passwords without end."""
    agent = person(owner_api, "agent")
    change = {"currentPassword": "wrong password!", "newPassword": "another password!"}
    for n in range(5):
        if n % 2:
            wrong = agent.request("DELETE", "/api/me/2fa", json={"password": "wrong password!"})
            field = "password"
        else:
            wrong = agent.request("PUT", "/api/me/password", json=change)
            field = "currentPassword"
        body = _refusal(wrong, 422, "VALIDATION_ERROR")
        assert [e["field"] for e in body["data"]["errors"]] == [field]
    right = agent.request("PUT", "/api/me/password", json={**change, "currentPassword": PASSWORD})
    _refusal(right, 429, "TOO_MANY_ATTEMPTS")
    assert 1 <= int(right.headers["retry-after"]) <= 60
    _refusal(_sign_in(owner_api.http, agent.user["email"], PASSWORD), 429, "TOO_MANY_ATTEMPTS")
    assert agent.request("GET", "/api/me").status_code == 200  # the session goes on


def test_a_disabled_user_s_open_session_ends_at_once(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    assert agent.request("GET", "/api/me").status_code == 200
    ok_data(
        owner_api.put(
            f"/api/user/{agent.user['id']}",
            json={"paramToUpdate": "status", "status": "disabled"},
            workspace=None,
        )
    )
    _refusal(agent.request("GET", "/api/me"), 401, "SESSION_EXPIRED")
    _refusal(_sign_in(owner_api.http, agent.user["email"], PASSWORD), 401, "INVALID_CREDENTIALS")
    ok_data(
        owner_api.put(f"/api/user/{agent.user['id']}", json={"status": "active"}, workspace=None)
    )
    # Its old session stays ended; a new sign-in works.
    _refusal(agent.request("GET", "/api/me"), 401, "SESSION_EXPIRED")
    assert _sign_in(owner_api.http, agent.user["email"], PASSWORD).status_code == 200


def test_removing_a_user_keeps_its_record_and_ends_its_sessions(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    gone = ok_data(owner_api.delete(f"/api/user/{agent.user['id']}", workspace=None))
    assert gone == {"id": agent.user["id"]}
    _refusal(agent.request("GET", "/api/session"), 401, "SESSION_EXPIRED")
    user = ok_data(owner_api.get(f"/api/user/{agent.user['id']}", workspace=None))["user"]
    assert user["status"] == "disabled"
    # Again: the same answer, and nothing more in the audit log (nothing changed).
    again = ok_data(owner_api.delete(f"/api/user/{agent.user['id']}", workspace=None))
    assert again == {"id": agent.user["id"]}
    assert _audited(owner_api, "user.removed", agent.user["id"]) == 1
    error(
        owner_api.get(f"/api/user/{'0' * 8}-0000-7000-8000-{'0' * 12}", workspace=None),
        404,
        "USER_NOT_FOUND",
    )
    # A malformed id is unknown too, on every backend: never sent to the database, which
    # on PostgreSQL refuses a NUL (a 422 "out of range" before).
    for malformed in ("%00", "a%00", "not-an-id"):
        for method, path in (
            ("GET", f"/api/user/{malformed}"),
            ("PUT", f"/api/user/{malformed}"),
            ("DELETE", f"/api/user/{malformed}"),
            ("POST", f"/api/user/{malformed}/reset-link"),
            ("DELETE", f"/api/user/{malformed}/sessions"),
        ):
            body = {"name": "X"} if method == "PUT" else None
            answer = owner_api.request(method, path, json=body, workspace=None)
            error(answer, 404, "USER_NOT_FOUND")


def _audited(api: Api, action: str, target: str) -> int:
    """How many entries of the account's audit log record `action` on `target`."""
    entries: list[dict] = []
    params = {"pageSize": "100"}
    while True:
        page = ok_data(api.get("/api/audit", params=params, workspace=None))
        entries += page["data"]
        if not page["continuationToken"]:
            return sum(e["action"] == action and e["target"] == target for e in entries)
        params["continuationToken"] = page["continuationToken"]


def test_a_key_revoked_twice_is_audited_once(owner_api: Api) -> None:
    body = {"name": "twice", "scopes": ["contacts:read"]}
    key = ok_data(owner_api.post("/api/key", json=body, workspace=None))["id"]
    first = ok_data(owner_api.delete(f"/api/key/{key}", workspace=None))
    second = ok_data(owner_api.delete(f"/api/key/{key}", workspace=None))
    assert first["key"]["revokedAt"] == second["key"]["revokedAt"] is not None
    assert _audited(owner_api, "key.revoked", key) == 1


def test_csrf_token_and_origin_guard_cookie_changes(owner_api: Api) -> None:
    admin = person(owner_api, "admin")
    body = {"email": unique_email(), "name": "C", "role": "admin"}
    no_token = admin.request("POST", "/api/user", json=body, csrf=False)
    missing = _refusal(no_token, 403, "CSRF_FAILED")["message"]
    assert missing == "A change made with the session cookie needs the header X-CSRF-Token."
    wrong = admin.request(
        "POST", "/api/user", json=body, csrf=False, headers={"x-csrf-token": "nope"}
    )
    # The header was sent: the message says what is wrong with it instead.
    assert _refusal(wrong, 403, "CSRF_FAILED")["message"] == WRONG_CSRF
    foreign = admin.request("POST", "/api/user", json=body, headers={"origin": "https://evil.test"})
    assert _refusal(foreign, 403, "CSRF_FAILED")["message"].endswith("must come from this server.")
    listed = ok_data(owner_api.get("/api/user", workspace=None))["data"]
    assert body["email"] not in [u["email"] for u in listed]  # nothing changed
    same = admin.request("POST", "/api/user", json=body, headers={"origin": "http://console.test"})
    assert same.status_code == 200, same.text
    # A key's request needs no CSRF token: no cookie is involved.
    assert admin.request("GET", "/api/user").status_code == 200


def test_a_read_with_another_session_s_token_is_refused(owner_api: Api) -> None:
    """A read needs no token, but one carrying another session's (the cookie changed hands:
    a sign-in in another tab) is refused rather than answered as the cookie's session."""
    admin = person(owner_api, "admin")
    mine = admin.csrf
    assert admin.request("GET", "/api/user", csrf=False).status_code == 200
    assert admin.request("GET", "/api/user", headers={"x-csrf-token": mine}).status_code == 200
    admin.signed_in(
        admin.request(
            "POST", "/api/session", json={"email": admin.user["email"], "password": PASSWORD}
        )
    )
    stale = admin.request("GET", "/api/user", headers={"x-csrf-token": mine})
    assert _refusal(stale, 403, "CSRF_FAILED")["message"] == WRONG_CSRF
    head = admin.request("HEAD", "/api/user", headers={"x-csrf-token": mine})
    assert head.status_code == 403
    # The session the cookie holds answers whoever asks: that is how its token is learnt.
    held = admin.request("GET", "/api/session", headers={"x-csrf-token": mine})
    assert ok_data(held)["csrfToken"] == admin.csrf != mine
    # A key's read is not a session's: the header means nothing there.
    assert (
        owner_api.get("/api/user", workspace=None, headers={"x-csrf-token": mine}).status_code
        == 200
    )


def test_sign_out_clears_the_cookie_and_ends_the_session(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    out = agent.request("DELETE", "/api/session")
    assert ok_data(out) is None
    assert "Max-Age=0" in out.headers["set-cookie"]
    _refusal(agent.request("GET", "/api/session"), 401, "SESSION_EXPIRED")


def test_ending_one_session_and_every_session(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    second = Browser(owner_api.http).signed_in(
        _sign_in(owner_api.http, agent.user["email"], PASSWORD)
    )
    listed = ok_data(agent.request("GET", "/api/session/list"))["data"]
    other = next(s for s in listed if not s["current"])
    ok_data(agent.request("DELETE", f"/api/session/{other['id']}"))
    _refusal(second.request("GET", "/api/me"), 401, "SESSION_EXPIRED")
    ok_data(owner_api.delete(f"/api/user/{agent.user['id']}/sessions", workspace=None))
    _refusal(agent.request("GET", "/api/me"), 401, "SESSION_EXPIRED")


def test_changing_the_password_ends_every_other_session(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    other = Browser(owner_api.http).signed_in(
        _sign_in(owner_api.http, agent.user["email"], PASSWORD)
    )
    wrong = agent.request(
        "PUT",
        "/api/me/password",
        json={"currentPassword": "not it at all", "newPassword": "x" * 12},
    )
    _refusal(wrong, 422, "VALIDATION_ERROR")
    ok_data(
        agent.request(
            "PUT",
            "/api/me/password",
            json={"currentPassword": PASSWORD, "newPassword": "a brand new password"},
        )
    )
    assert agent.request("GET", "/api/me").status_code == 200
    _refusal(other.request("GET", "/api/me"), 401, "SESSION_EXPIRED")
    _refusal(_sign_in(owner_api.http, agent.user["email"], PASSWORD), 401, "INVALID_CREDENTIALS")
    assert _sign_in(owner_api.http, agent.user["email"], "a brand new password").status_code == 200


def test_a_reset_link_ends_a_pending_invitation(owner_api: Api) -> None:
    """J.1: earlier links of the user stop working, the invitation one too."""
    invited = invite(owner_api, "agent")
    reset = ok_data(owner_api.post(f"/api/user/{invited['id']}/reset-link", workspace=None))
    Browser(owner_api.http).signed_in(
        Browser(owner_api.http).request(
            "POST",
            "/api/invitation/accept",
            json={"token": token_of(reset["resetUrl"]), "password": PASSWORD},
        )
    )
    stale = Browser(owner_api.http).request(
        "POST",
        "/api/invitation/accept",
        json={"token": token_of(invited["inviteUrl"]), "password": "an intruder's password"},
    )
    _refusal(stale, 400, "INVALID_TOKEN")
    assert _sign_in(owner_api.http, invited["user"]["email"], PASSWORD).status_code == 200


def test_a_reset_link_replaces_earlier_ones_and_ends_sessions(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    first = ok_data(owner_api.post(f"/api/user/{agent.user['id']}/reset-link", workspace=None))
    second = ok_data(owner_api.post(f"/api/user/{agent.user['id']}/reset-link", workspace=None))
    assert second["resetUrl"].startswith("http://console.test/console/#reset/")
    stale = Browser(owner_api.http).request(
        "POST",
        "/api/invitation/accept",
        json={"token": token_of(first["resetUrl"]), "password": "another good password"},
    )
    _refusal(stale, 400, "INVALID_TOKEN")
    Browser(owner_api.http).signed_in(
        Browser(owner_api.http).request(
            "POST",
            "/api/invitation/accept",
            json={"token": token_of(second["resetUrl"]), "password": "another good password"},
        )
    )
    _refusal(agent.request("GET", "/api/me"), 401, "SESSION_EXPIRED")


def test_a_disabled_user_comes_back_only_through_a_link_made_after(owner_api: Api) -> None:
    """Disabling a user retires its links: one made before stops working. A reset link made
    while it is disabled is made on purpose (J.1's Accept: the user becomes active)."""
    agent = person(owner_api, "agent")
    user_id = agent.user["id"]
    before = ok_data(owner_api.post(f"/api/user/{user_id}/reset-link", workspace=None))
    ok_data(owner_api.delete(f"/api/user/{user_id}", workspace=None))
    stale = Browser(owner_api.http).request(
        "POST",
        "/api/invitation/accept",
        json={"token": token_of(before["resetUrl"]), "password": "another good password"},
    )
    _refusal(stale, 400, "INVALID_TOKEN")
    after = ok_data(owner_api.post(f"/api/user/{user_id}/reset-link", workspace=None))
    back = Browser(owner_api.http)
    back.signed_in(
        back.request(
            "POST",
            "/api/invitation/accept",
            json={"token": token_of(after["resetUrl"]), "password": "another good password"},
        )
    )
    assert back.user["status"] == "active"
    got = ok_data(owner_api.get(f"/api/user/{user_id}", workspace=None))["user"]
    assert got["status"] == "active"
    audit = ok_data(owner_api.get("/api/audit", params={"pageSize": "20"}, workspace=None))
    assert ("user.updated", user_id) in [(e["action"], e["target"]) for e in audit["data"]]
    # Disabled by an update too: the links go the same way.
    again = ok_data(owner_api.post(f"/api/user/{user_id}/reset-link", workspace=None))
    disable = {"paramToUpdate": "status", "status": "disabled"}
    ok_data(owner_api.put(f"/api/user/{user_id}", json=disable, workspace=None))
    late = Browser(owner_api.http).request(
        "POST",
        "/api/invitation/accept",
        json={"token": token_of(again["resetUrl"]), "password": "a third good password"},
    )
    _refusal(late, 400, "INVALID_TOKEN")
    # A link made for the disabled user outlives later edits of it, a rename or its status
    # given again: only a new link or the user's disabling again retires it.
    kept = ok_data(owner_api.post(f"/api/user/{user_id}/reset-link", workspace=None))
    ok_data(owner_api.put(f"/api/user/{user_id}", json=disable, workspace=None))
    rename = {"paramToUpdate": "name", "name": "Renamed while disabled"}
    ok_data(owner_api.put(f"/api/user/{user_id}", json=rename, workspace=None))
    returning = Browser(owner_api.http)
    returning.signed_in(
        returning.request(
            "POST",
            "/api/invitation/accept",
            json={"token": token_of(kept["resetUrl"]), "password": "a fourth good password"},
        )
    )
    assert returning.user["status"] == "active"


def test_sessions_expire_when_idle_and_after_their_lifetime(database_url: str, account) -> None:
    settings = Settings(
        database_url=database_url,
        rate_limit=0,
        access_log=False,
        dispatch=False,
        session_idle_hours=1.5 / 3600,
        session_max_days=1,
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as http:
        api = Api(http, account)
        agent = person(api, "agent")
        assert agent.request("GET", "/api/me").status_code == 200
        for _ in range(2):  # each request starts the idle time again: 2 s, never 1.5 idle
            time.sleep(1.0)
            asked = datetime.now(UTC)
            # ... and the answer's `expiresAt` counts from this request, not the one before
            ends = ok_data(agent.request("GET", "/api/session"))["expiresAt"]
            assert datetime.fromisoformat(ends) >= asked + timedelta(seconds=1.5)
        time.sleep(2.0)
        _refusal(agent.request("GET", "/api/me"), 401, "SESSION_EXPIRED")
    settings = settings.model_copy(update={"session_idle_hours": 12, "session_max_days": 2 / 86400})
    with TestClient(create_app(settings), raise_server_exceptions=False) as http:
        api = Api(http, account)
        agent = person(api, "agent")
        for _ in range(3):  # requests keep it from idling, not from its absolute end
            time.sleep(1.0)
            agent.request("GET", "/api/me")
        _refusal(agent.request("GET", "/api/me"), 401, "SESSION_EXPIRED")


# --- two-factor ------------------------------------------------------------------------------


WRONG_CODE = (
    "The code is not right: enter the current code of your authenticator app (or an unused "
    "recovery code)."
)


def test_two_factor_codes_are_single_use(owner_api: Api) -> None:
    agent = person(owner_api, "agent")
    started = ok_data(agent.request("POST", "/api/me/2fa"))
    assert started["otpauthUrl"].startswith("otpauth://totp/")
    totp = pyotp.TOTP(started["secret"])
    bad = agent.request("POST", "/api/me/2fa/enable", json={"code": "000000"})
    if totp.now() != "000000":
        _refusal(bad, 422, "VALIDATION_ERROR")
    code = totp.now()
    codes = ok_data(agent.request("POST", "/api/me/2fa/enable", json={"code": code}))
    assert len(codes["recoveryCodes"]) == 10
    assert ok_data(agent.request("GET", "/api/me"))["user"]["twoFactorEnabled"] is True
    email = agent.user["email"]
    asked = _refusal(_sign_in(owner_api.http, email, PASSWORD), 401, "TWO_FACTOR_REQUIRED")
    assert asked["message"] == "Enter the code of your authenticator app (or a recovery code)."
    # The code that enabled it was used: it is not accepted again, and that is said (not
    # "not right", which would send the person to type the same code again).
    used = _sign_in(owner_api.http, email, PASSWORD, code=code)
    assert _refusal(used, 401, "TWO_FACTOR_REQUIRED")["message"] == (
        "This code was used already: wait for the next code of your authenticator app (or "
        "enter an unused recovery code)."
    )
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    if wrong not in {totp.at(time.time() + d) for d in (-30, 0, 30)}:
        refused = _sign_in(owner_api.http, email, PASSWORD, code=wrong)
        assert _refusal(refused, 401, "TWO_FACTOR_REQUIRED")["message"] == WRONG_CODE
    recovery = codes["recoveryCodes"][0]
    assert _sign_in(owner_api.http, email, PASSWORD, code=recovery).status_code == 200
    _refusal(_sign_in(owner_api.http, email, PASSWORD, code=recovery), 401, "TWO_FACTOR_REQUIRED")
    # Six digits to str.isdigit that are no code (compare_digest refuses non-ASCII: a 500).
    for odd in ("²" * 6, "５" * 6):
        _refusal(_sign_in(owner_api.http, email, PASSWORD, code=odd), 401, "TWO_FACTOR_REQUIRED")
    # A wrong password with a right code is the plain refusal.
    _refusal(
        _sign_in(owner_api.http, email, "wrong password!", code=codes["recoveryCodes"][1]),
        401,
        "INVALID_CREDENTIALS",
    )
    # On, the secret in use cannot be replaced by a session alone: only after turning
    # two-factor off, which takes the password.
    again = agent.request("POST", "/api/me/2fa")
    _refusal(again, 409, "TWO_FACTOR_ON")
    assert "secret" not in again.text
    # Nor its recovery codes, by enabling it again with a current code.
    enabled_twice = agent.request("POST", "/api/me/2fa/enable", json={"code": totp.now()})
    _refusal(enabled_twice, 409, "TWO_FACTOR_ON")
    assert "recoveryCodes" not in enabled_twice.text
    assert _audited(owner_api, "user.2fa_enabled", agent.user["id"]) == 1
    kept = codes["recoveryCodes"][2]
    assert _sign_in(owner_api.http, email, PASSWORD, code=kept).status_code == 200
    later = totp.at(time.time() + 30)  # the next step's code: not used yet
    assert _sign_in(owner_api.http, email, PASSWORD, code=later).status_code == 200
    off = agent.request("DELETE", "/api/me/2fa", json={"password": PASSWORD})
    ok_data(off)
    assert _sign_in(owner_api.http, email, PASSWORD).status_code == 200
    assert ok_data(agent.request("POST", "/api/me/2fa"))["secret"] != started["secret"]


# --- no secret anywhere ------------------------------------------------------------------------


def test_no_secret_in_logs_or_the_audit_log(
    owner_api: Api, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    invited = invite(owner_api, "admin")
    token = token_of(invited["inviteUrl"])
    browser = Browser(owner_api.http)
    browser.signed_in(
        browser.request(
            "POST", "/api/invitation/accept", json={"token": token, "password": PASSWORD}
        )
    )
    _sign_in(owner_api.http, invited["user"]["email"], "a wrong password 123")
    created = ok_data(browser.request("POST", "/api/key", json={"name": "n", "scopes": ["*"]}))
    reset = ok_data(owner_api.post(f"/api/user/{invited['id']}/reset-link", workspace=None))
    secrets = [
        PASSWORD,
        "a wrong password 123",
        token,
        browser.token,
        browser.csrf,
        created["apiKey"],
        token_of(reset["resetUrl"]),
        owner_api.key,
    ]
    audit = owner_api.get("/api/audit", params={"pageSize": "100"}, workspace=None)
    entries = ok_data(audit)["data"]
    actions = {e["action"] for e in entries}
    assert {
        "user.invited",
        "session.created",
        "session.failed",
        "key.created",
        "user.reset_link_created",
    } <= actions
    failed = next(e for e in entries if e["action"] == "session.failed")
    assert failed["actor"] is None and failed["target"] == invited["user"]["email"]
    logged = "\n".join(
        r.getMessage() + " " + " ".join(str(v) for v in r.__dict__.values()) for r in caplog.records
    )
    for secret in secrets:
        assert secret not in audit.text
        assert secret not in logged
    listed = ok_data(owner_api.get("/api/key", workspace=None))
    assert created["apiKey"] not in str(listed)


def test_a_rotated_webhook_secret_is_audited_without_the_secret(owner_api: Api) -> None:
    hook = ok_data(owner_api.post("/api/webhook", json={"url": "https://hooks.example/a"}))
    rotated = ok_data(owner_api.post(f"/api/webhook/{hook['id']}/rotate-secret"))["webhook"]
    audit = owner_api.get("/api/audit", params={"pageSize": "100"}, workspace=None)
    entry = next(e for e in ok_data(audit)["data"] if e["action"] == "webhook.secret_rotated")
    assert entry["target"] == hook["id"]
    assert entry["actor"]["type"] == "key"
    for secret in (hook["webhook"]["secret"], rotated["secret"]):
        assert secret not in audit.text


def test_twenty_failures_from_one_address_throttle_every_email_from_it(
    database_url: str, account: Any
) -> None:
    settings = Settings(database_url=database_url, rate_limit=0, access_log=False, dispatch=False)
    address = f"10.{time.time_ns() % 250}.{time.time_ns() % 249}.7"
    with TestClient(
        create_app(settings), raise_server_exceptions=False, client=(address, 50000)
    ) as http:
        api = Api(http, account)
        agent = person(api, "agent")
        for _ in range(20):
            _refusal(_sign_in(http, unique_email(), "wrong password!"), 401, "INVALID_CREDENTIALS")
        blocked = _sign_in(http, agent.user["email"], PASSWORD)
        _refusal(blocked, 429, "TOO_MANY_ATTEMPTS")
        assert int(blocked.headers["retry-after"]) >= 1
    # Another address is not held back by it.
    with TestClient(
        create_app(settings), raise_server_exceptions=False, client=(address + "1", 50000)
    ) as http:
        assert _sign_in(http, agent.user["email"], PASSWORD).status_code == 200


def test_each_lockout_doubles_the_wait(owner_api: Api, database_url: str) -> None:
    from sqlalchemy import update

    from chatcrm.core.timestamps import utcnow
    from chatcrm.db.database import Database
    from chatcrm.people.tables import sign_in_failures
    from tests.conftest import run_sync

    agent = person(owner_api, "agent")
    email = agent.user["email"]

    def lock_out() -> int:
        for _ in range(5):
            _sign_in(owner_api.http, email, "wrong password!")
        blocked = _sign_in(owner_api.http, email, PASSWORD)
        _refusal(blocked, 429, "TOO_MANY_ATTEMPTS")
        return int(blocked.headers["retry-after"])

    def let_it_pass() -> None:
        async def run() -> None:
            db = Database(Settings(database_url=database_url))
            try:
                async with db.transaction() as conn:
                    await conn.execute(
                        update(sign_in_failures)
                        .where(sign_in_failures.c.subject == f"email:{email.lower()}")
                        .values(blocked_until=utcnow())
                    )
            finally:
                await db.dispose()

        run_sync(run)

    assert 50 <= lock_out() <= 60
    let_it_pass()
    assert 110 <= lock_out() <= 120
    let_it_pass()
    assert 230 <= lock_out() <= 240


def test_the_audit_log_pages_with_tokens_only_it_made(owner_api: Api, database_url: str) -> None:
    """Contract C: a continuation token is opaque, tamper-proof and bound to its list; the
    audit log's too (J.6), so an entry's id dressed as a token, a token of another
    account's log or of another list is 400, and nothing of either log is shown."""
    for n in range(3):
        body = {"name": f"audited {n}", "scopes": ["contacts:read"]}
        ok_data(owner_api.post("/api/key", json=body, workspace=None))
    first = ok_data(owner_api.get("/api/audit", params={"pageSize": "2"}, workspace=None))
    token = first["continuationToken"]
    assert token and len(first["data"]) == 2
    second = ok_data(
        owner_api.get(
            "/api/audit", params={"pageSize": "2", "continuationToken": token}, workspace=None
        )
    )
    every = ok_data(owner_api.get("/api/audit", params={"pageSize": "4"}, workspace=None))
    assert [e["id"] for e in first["data"] + second["data"]] == [e["id"] for e in every["data"]]

    def refused(token: str, api: Api = owner_api) -> None:
        got = api.get("/api/audit", params={"continuationToken": token}, workspace=None)
        body = error(got, 400, "INVALID_CONTINUATION_TOKEN")
        assert body["data"] is None

    entry = first["data"][-1]["id"]
    refused(base64.urlsafe_b64encode(entry.encode()).rstrip(b"=").decode())  # an id as token
    refused(token[:-2] + ("AA" if token[-2:] != "AA" else "BB"))  # its signature changed
    owner_api.create_contact(), owner_api.create_contact()
    contacts = ok_data(owner_api.get("/api/contact", params={"pageSize": "1"}))
    refused(contacts["continuationToken"])  # another list's
    other = Api(owner_api.http, new_account(database_url, "Another account"))
    refused(token, other)  # another account's log


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("PUT", "/api/me/password"),
        ("POST", "/api/me/2fa"),
        ("POST", "/api/me/2fa/enable"),
        ("DELETE", "/api/me/2fa"),
        ("GET", "/api/session/list"),
    ],
)
def test_a_key_is_told_these_need_a_user_whatever_its_body(
    owner_api: Api, method: str, path: str
) -> None:
    """A user's own routes answer a key 401 before they read the body: a body that would
    be refused (none, or an empty object) changes nothing of that."""
    for body in (None, {}):
        answer = owner_api.request(method, path, json=body, workspace=None)
        assert error(answer, 401, "UNAUTHORIZED")["data"] is None, (path, body)


def test_what_changes_nothing_is_not_audited(owner_api: Api) -> None:
    """The audit log is the account's security record: a status set to the one the user
    has, or two-factor turned off where it was never on, changed nothing."""
    agent = person(owner_api, "agent")
    user_id = agent.user["id"]
    # Accepting the invitation changed its status (invited, now active): audited once, by
    # the user itself.
    assert _audited(owner_api, "user.updated", user_id) == 1
    same = {"status": "active", "role": "agent", "workspaceIds": [owner_api.ws]}
    ok_data(owner_api.put(f"/api/user/{user_id}", json=same, workspace=None))
    assert _audited(owner_api, "user.updated", user_id) == 1
    ok_data(owner_api.put(f"/api/user/{user_id}", json={"role": "viewer"}, workspace=None))
    assert _audited(owner_api, "user.updated", user_id) == 2
    ok_data(agent.request("DELETE", "/api/me/2fa", json={"password": PASSWORD}))
    assert _audited(owner_api, "user.2fa_disabled", user_id) == 0


def test_routes_of_the_account_ignore_no_workspace_named(owner_api: Api, database_url: str) -> None:
    """Users, keys and sessions belong to the account: a workspace named in the header must
    still be usable (403), and a query parameter or a body `workspaceId` is refused, never
    passed over in silence; one workspace of the account an agent is not in gets the very
    answer an unknown one gets (J.1)."""
    agent = person(owner_api, "agent")
    user_id = agent.user["id"]
    other = ok_data(owner_api.post("/api/workspace", json={"name": "Other"}, workspace=None))["id"]
    foreign = new_account(database_url).workspace_id
    for path in (f"/api/user/{user_id}", "/api/me", "/api/key", "/api/session"):
        answer = owner_api.get(path, params={"workspaceId": other}, workspace=None)
        error(answer, 400, "BAD_REQUEST")
        error(
            owner_api.get(path, headers={"x-workspace-id": foreign}, workspace=None),
            403,
            "FORBIDDEN",
        )
    body = {"name": "Renamed", "workspaceId": owner_api.ws}
    error(owner_api.put(f"/api/user/{user_id}", json=body, workspace=None), 400, "BAD_REQUEST")
    made = owner_api.post(
        "/api/key", params={"workspaceId": other}, json={"name": "k"}, workspace=None
    )
    error(made, 400, "BAD_REQUEST")
    # An agent of one workspace: the account's other one is answered as an unknown one.
    mine = agent.request("GET", "/api/contact", headers={"x-workspace-id": other})
    unknown = agent.request("GET", "/api/contact", headers={"x-workspace-id": foreign})
    assert mine.status_code == unknown.status_code == 403
    assert mine.json()["message"].replace(other, "X") == unknown.json()["message"].replace(
        foreign, "X"
    )
    assert mine.json()["message"].startswith("This user cannot use workspace")
