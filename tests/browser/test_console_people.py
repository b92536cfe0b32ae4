"""The console's people parts (contract K.3, J) in Debian's chromium: a person signs in
with e-mail and password, sets a password from an invitation link (also one followed in a
tab already open), sees only what its role allows, manages users (role, workspaces) and
keys (workspaces, expiry), turns two-factor on with a QR code drawn in the page, and ends
its other sessions — every refusal shown with the API's message."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime, timedelta

import httpx
import pyotp
import pytest
from playwright.sync_api import Page, Route, expect

from chatcrm.provisioning import NewAccount
from tests.browser.conftest import (
    Visit,
    answer_unavailable,
    api,
    create,
    refusing_first,
    sign_in,
)
from tests.client import unique_email
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def server(console_server: str) -> str:
    """The console's shared server on this run's backend (the visit fixture's server)."""
    return console_server


def _invite(server: str, account: NewAccount, role: str) -> dict:
    body = {
        "email": unique_email(),
        "name": f"{role.title()} Person",
        "role": role,
        "workspaceIds": [account.workspace_id],
    }
    return api(server, account, "POST", "/api/user", json=body)


def _fragment(invite_url: str) -> str:
    return invite_url.split("/console", 1)[1]


def _set_password(visit: Visit, invited: dict) -> None:
    visit.goto("/console" + _fragment(invited["inviteUrl"]))
    page = visit.page
    expect(page.get_by_role("heading", name="Set password")).to_be_visible()
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Set password").click()
    page.get_by_role("button", name="Test workspace").click()


def _create_reader_key(page: Page) -> None:
    """On the Keys page (being drawn), create the key "reader" of contacts:read."""
    # The Users page stays until the Keys page is drawn: its "Name" is not the key's.
    expect(page.get_by_role("heading", name="Keys")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("reader")
    page.get_by_label("contacts:read").check()
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("status")).to_contain_text("ccrm_")


def test_an_invited_person_sets_a_password_then_signs_in_with_it(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    invited = _invite(server, account, "viewer")
    _set_password(visit, invited)
    page = visit.page
    expect(page.get_by_role("heading", name="Contacts")).to_be_visible()
    # A viewer is offered no way to change anything.
    expect(page.get_by_role("button", name="New contact")).to_have_count(0)
    expect(page.get_by_role("link", name="Users")).to_be_hidden()
    assert visit.settle() == []
    # The session survives a reload (the cookie), then ends with Sign out.
    page.reload()
    expect(page.get_by_role("heading", name="Contacts")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Email")).to_be_visible()
    page.get_by_label("Email").fill(invited["user"]["email"])
    page.get_by_label("Password").fill("not the password!")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("not right")
    visit.failed.clear()  # the 401 was the point
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Test workspace").click()
    expect(page.get_by_role("heading", name="Contacts")).to_be_visible()
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["chatcrm_session"]["httpOnly"] is True
    assert "chatcrm_session" not in page.evaluate("document.cookie")
    assert visit.settle() == []


def test_an_admin_invites_a_user_and_makes_a_key(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    _set_password(visit, _invite(server, account, "admin"))
    page = visit.page
    page.get_by_role("link", name="Users").click()
    expect(page.get_by_role("heading", name="Users")).to_be_visible()
    email = unique_email()
    # The API's message, not the browser's own check of an e-mail field (contract N).
    page.get_by_label("Email", exact=True).fill("not-an-email")
    page.get_by_label("Name", exact=True).fill("Newcomer")
    page.get_by_role("button", name="Invite").click()
    expect(page.locator("#invite-email-error")).to_contain_text("must be a valid email address")
    page.get_by_label("Email", exact=True).fill(email)
    # Refused, the API's message for the field shows next to that field (contract N).
    page.get_by_label("Name", exact=True).fill("N" * 201)
    page.get_by_role("button", name="Invite").click()
    name = page.get_by_label("Name", exact=True)
    expect(name).to_have_attribute("aria-invalid", "true")
    expect(page.locator("#invite-name-error")).to_contain_text("must be at most 200 characters")
    expect(page.get_by_role("alert")).to_be_visible()
    visit.failed.clear()  # the 422 was the point
    page.get_by_label("Name", exact=True).fill("Newcomer")
    page.get_by_label("Role", exact=True).select_option("agent")
    page.get_by_role("button", name="Invite").click()
    expect(page.get_by_role("status")).to_contain_text("/console/#invite/")
    listed = api(server, account, "GET", "/api/user")["data"]
    assert email in [u["email"] for u in listed]
    # An owner's row has no control an admin may not use (K.3): its role as text.
    made = {"email": unique_email(), "name": "Olga Owner", "role": "owner"}
    owner = api(server, account, "POST", "/api/user", json=made)["user"]
    page.get_by_role("link", name="Keys").click()
    page.get_by_role("link", name="Users").click()
    row = page.get_by_role("row", name=re.compile("Olga Owner"))
    expect(row).to_contain_text("owner")
    expect(page.get_by_label(f"Role of {owner['name']}")).to_have_count(0)
    expect(row.get_by_role("button")).to_have_count(0)
    expect(page.get_by_label("Role of Newcomer")).to_be_enabled()
    page.get_by_role("link", name="Keys").click()
    _create_reader_key(page)
    shown = re.search(r"ccrm_\S+", page.get_by_role("status").inner_text())
    assert shown is not None
    me = api(
        server, account, "GET", "/api/me", headers={"Authorization": f"Bearer {shown.group(0)}"}
    )
    assert me["key"]["scopes"] == ["contacts:read"]
    assert visit.settle() == []


def test_two_factor_with_a_qr_code_drawn_in_the_page(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    invited = _invite(server, account, "agent")
    _set_password(visit, invited)
    page = visit.page
    page.get_by_role("link", name="Profile").click()
    page.get_by_role("button", name="Set up two-factor").click()
    qr = page.get_by_role("img", name="QR code for your authenticator app")
    expect(qr).to_be_visible()
    assert qr.get_attribute("src").startswith("data:image/svg+xml;base64,")
    # Drawn, not a broken image: the SVG is a document of its own (with its xmlns).
    assert qr.evaluate("async (img) => { await img.decode(); return img.naturalWidth; }") > 0
    secret = re.search(r"enter this key: (\w+)", page.locator(".two-factor").inner_text())
    assert secret is not None
    page.get_by_label("Code").fill(pyotp.TOTP(secret.group(1)).now())
    page.get_by_role("button", name="Turn on").click()
    expect(page.locator("ul.recovery li")).to_have_count(10)
    assert visit.settle() == []
    user = api(server, account, "GET", f"/api/user/{invited['id']}")["user"]
    assert user["twoFactorEnabled"] is True
    # Turned off, the form is gone: the keyboard goes to what replaced it, not the page's start.
    page.get_by_role("link", name="Contacts").click()
    page.get_by_role("link", name="Profile").click()
    page.get_by_label("Password", exact=True).last.fill(PASSWORD)
    page.get_by_role("button", name="Turn off").click()
    expect(page.get_by_role("button", name="Set up two-factor")).to_be_focused()
    assert visit.settle() == []


def _workspace_named(server: str, account: NewAccount, name: str) -> dict:
    made: dict = api(server, account, "POST", "/api/workspace", json={"name": name})
    return made


def test_an_invitation_link_followed_in_an_open_tab_opens_set_password(
    visit: Visit, server: str, database_url: str
) -> None:
    """The tab is already on the console (signed in with a key, the board shown) when the
    link is followed: a same-document navigation, no page load — the page follows it."""
    account = new_account(database_url)
    visit.goto("/console/")
    sign_in(visit, account)
    page = visit.page
    expect(page.get_by_role("heading", name="Contacts")).to_be_visible()

    # A reset link first; its page leads back to Sign in.
    reset = _invite(server, account, "agent")
    page.evaluate(
        "url => { location.href = url; }", f"{server}/console{_fragment(reset['inviteUrl'])}"
    )
    expect(page.get_by_role("heading", name="Set password")).to_be_visible()
    expect(page.get_by_role("navigation", name="Console")).to_be_hidden()
    page.get_by_role("link", name="Back to sign in").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()

    invited = _invite(server, account, "viewer")
    page.evaluate(
        "url => { location.href = url; }", f"{server}/console{_fragment(invited['inviteUrl'])}"
    )
    expect(page.get_by_role("heading", name="Set password")).to_be_visible()
    # Too short: the API's message, beside the field (nothing blocks the submit).
    page.get_by_label("Password").fill("short")
    page.get_by_role("button", name="Set password").click()
    expect(page.get_by_role("alert")).to_be_visible()
    expect(page.get_by_label("Password")).to_have_accessible_description(
        re.compile("must be 10 to 128 characters long")
    )
    visit.failed.clear()  # the 422 was the point
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Set password").click()
    page.get_by_role("button", name="Test workspace").click()
    expect(page.get_by_role("heading", name="Contacts")).to_be_visible()
    # Signed in as the invited person now: its Profile, not the key's pages.
    expect(page.get_by_role("link", name="Profile")).to_be_visible()
    expect(page.get_by_role("button", name="New contact")).to_have_count(0)
    assert visit.settle() == []


def test_users_page_role_workspaces_and_the_invited_at_once(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    second = _workspace_named(server, account, "Second workspace")
    me = _invite(server, account, "owner")
    _set_password(visit, me)
    page = visit.page
    page.get_by_role("link", name="Users").click()
    expect(page.get_by_role("heading", name="Users")).to_be_visible()

    # The account's only owner cannot stop being one: the select goes back, the API says why.
    mine = page.get_by_label(f"Role of {me['user']['name']}")
    mine.select_option("admin")
    expect(page.get_by_role("alert")).to_have_text(
        "The account must keep at least one active owner."
    )
    expect(mine).to_have_value("owner")
    visit.failed.clear()  # the 409 was the point

    # An invited user is in the table at once.
    email = unique_email()
    page.get_by_label("Email", exact=True).fill(email)
    page.get_by_label("Name", exact=True).fill("Newcomer")
    page.get_by_role("button", name="Invite").click()
    expect(page.get_by_role("status")).to_contain_text("/console/#invite/")
    row = page.get_by_role("row").filter(has_text=email)
    expect(row).to_have_count(1)
    expect(row).to_contain_text("invited")

    # Its workspaces: one more, then none — refused, the box back as stored.
    places = row.get_by_role("group", name="Workspaces of Newcomer")
    places.get_by_label("Second workspace").check()
    expect(row.get_by_role("status")).to_have_text("Saved.")
    expect(places.get_by_label("Second workspace")).to_be_checked()
    expect(places.get_by_label("Test workspace")).to_be_checked()
    listed = api(server, account, "GET", "/api/user")["data"]
    newcomer = next(u for u in listed if u["email"] == email)
    assert sorted(newcomer["workspaceIds"]) == sorted([account.workspace_id, second["id"]])
    places.get_by_label("Test workspace").uncheck()
    expect(row.get_by_role("status")).to_have_text("Saved.")
    expect(places.get_by_label("Test workspace")).not_to_be_checked()
    # A click, not uncheck(): the refused change is put back at once, and uncheck() would
    # take the box checked again for a click that did nothing.
    places.get_by_label("Second workspace").click()
    expect(row.get_by_role("alert")).to_contain_text("at least one workspace")
    expect(places.get_by_label("Second workspace")).to_be_checked()
    visit.failed.clear()  # the 422 was the point
    user = api(server, account, "GET", f"/api/user/{newcomer['id']}")["user"]
    assert user["workspaceIds"] == [second["id"]]

    # Made an admin, it belongs to every workspace.
    row.get_by_label("Role of Newcomer").select_option("admin")
    expect(row).to_contain_text("All workspaces")
    expect(row.get_by_role("status")).to_have_text("Saved.")
    assert api(server, account, "GET", f"/api/user/{newcomer['id']}")["user"]["role"] == "admin"
    assert visit.settle() == []


def test_a_role_walked_through_with_the_arrow_keys_is_saved_where_it_stops(
    visit: Visit, server: str, database_url: str
) -> None:
    """Arrow keys on a closed select change it a step at a time: viewer → agent → admin
    is one change, to admin, and one audit entry; not a grant of each role on the way."""
    account = new_account(database_url)
    newbie = _invite(server, account, "viewer")["user"]
    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    page.get_by_role("link", name="Users").click()
    puts: list[str] = []
    page.on("request", lambda r: puts.append(r.url) if r.method == "PUT" else None)
    role = page.get_by_label(f"Role of {newbie['name']}")
    expect(role).to_have_value("viewer")
    role.focus()
    role.press("ArrowUp")
    role.press("ArrowUp")
    expect(role).to_have_value("admin")
    row = page.get_by_role("row").filter(has_text=newbie["email"])
    expect(row.get_by_role("status")).to_have_text("Saved.")
    assert api(server, account, "GET", f"/api/user/{newbie['id']}")["user"]["role"] == "admin"
    assert len(puts) == 1, puts
    audit = api(server, account, "GET", "/api/audit")["data"]
    assert [e["action"] for e in audit if e["target"] == newbie["id"]] == [
        "user.updated",
        "user.invited",
    ]
    assert visit.settle() == []


def test_keys_limited_to_workspaces_with_an_expiry_and_a_refused_revoke(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    _workspace_named(server, account, "Second workspace")
    admin = _invite(server, account, "admin")
    _set_password(visit, admin)
    page = visit.page
    page.get_by_role("link", name="Keys").click()
    expect(page.get_by_role("heading", name="Keys")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("limited")
    page.get_by_label("contacts:read").check()
    page.get_by_role("group", name=re.compile("^Workspaces")).get_by_label("Test workspace").check()
    expires = page.get_by_label("Expires")
    expires.fill("2020-01-01T10:00")
    page.get_by_role("button", name="Create key").click()
    # The API's message beside the field it names.
    expect(expires).to_have_attribute("aria-invalid", "true")
    expect(expires).to_have_accessible_description(re.compile("must be in the future"))
    visit.failed.clear()  # the 422 was the point
    later = (datetime.now() + timedelta(days=30)).replace(second=0, microsecond=0)
    expires.fill(later.strftime("%Y-%m-%dT%H:%M"))
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("status")).to_contain_text("ccrm_")
    # The new key is listed at once, with its limits.
    row = page.get_by_role("row").filter(has_text="limited")
    expect(row).to_contain_text("Test workspace")
    expect(row.locator("time")).to_have_count(2)  # its expiry and its creation
    made = next(
        k for k in api(server, account, "GET", "/api/key")["data"] if k["name"] == "limited"
    )
    assert made["workspaceIds"] == [account.workspace_id]
    stored = datetime.fromisoformat(made["expiresAt"].replace("Z", "+00:00"))
    assert abs(stored - later.astimezone(UTC)) < timedelta(minutes=1)

    # Demoted elsewhere meanwhile: Revoke is refused, and the page says why.
    api(server, account, "PUT", f"/api/user/{admin['id']}",
        json={"role": "agent", "workspaceIds": [account.workspace_id]})  # fmt: skip
    row.get_by_role("button", name="Revoke limited").click()
    # Said in the row, then above the view drawn again for the new role (an agent is not
    # offered Keys): either way the refusal stays shown.
    refusal = page.get_by_role("alert").filter(has_text="This needs the permission 'keys:manage'")
    expect(refusal.first).to_be_visible()
    expect(page.get_by_role("link", name="Keys")).to_be_hidden()
    expect(refusal.first).to_be_visible()
    visit.failed.clear()  # the 403 was the point
    assert visit.settle() == []


def _other_session(server: str, email: str, password: str = PASSWORD) -> httpx.Client:
    """A session of the person elsewhere (another browser): a client with its cookie."""
    client = httpx.Client(base_url=server, timeout=30)
    started = client.post("/api/session", json={"email": email, "password": password})
    assert started.status_code == 200, started.text
    client.headers["X-CSRF-Token"] = started.json()["data"]["csrfToken"]
    return client


def test_profile_sessions_with_their_times_and_refusals_shown(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    invited = _invite(server, account, "agent")
    _set_password(visit, invited)
    email = invited["user"]["email"]
    elsewhere = _other_session(server, email)
    page = visit.page
    page.get_by_role("link", name="Profile").click()
    sessions = page.get_by_role("list").filter(has_text="(this one)")
    items = sessions.get_by_role("listitem")
    expect(items).to_have_count(2)
    for text in items.all_inner_texts():
        assert "[object" not in text, text
        assert re.search(r"since \S", text), text
    expect(items.locator("time")).to_have_count(2)
    # The contract names both "Sign out" and "Sign out other sessions": exact, one each.
    expect(page.get_by_role("button", name="Sign out", exact=True)).to_have_count(1)

    # "End" is told apart by its session's line (its description), its name kept.
    end = page.get_by_role("button", name="End", exact=True)
    expect(end).to_have_accessible_description(re.compile(r" — since \S"))
    # Ended elsewhere before "End" is pressed: the API's message, the list read again.
    assert elsewhere.delete("/api/session").status_code == 200
    end.click()
    expect(page.get_by_role("alert")).to_contain_text("No live session")
    expect(items).to_have_count(1)
    visit.failed.clear()  # the 404 was the point

    # "Sign out other sessions" after the list was drawn, one of them gone meanwhile and
    # another signed in since (an intruder's): the list is read again, every other one
    # ended (the one signed in since was left live), nothing to say about the one gone.
    gone, kept = _other_session(server, email), _other_session(server, email)
    page.get_by_role("link", name="Contacts").click()
    page.get_by_role("link", name="Profile").click()
    expect(items).to_have_count(3)
    assert gone.delete("/api/session").status_code == 200
    late = _other_session(server, email)
    # A double click runs it once (the second run found them ended: "No live session").
    page.get_by_role("button", name="Sign out other sessions").dblclick()
    expect(items).to_have_count(1)
    done = page.get_by_role("status").filter(has_text="Every other session is signed out.")
    expect(done).to_have_count(1)
    page.wait_for_timeout(300)
    expect(done).to_have_count(1)
    expect(page.get_by_role("alert")).to_have_count(0)
    assert kept.get("/api/session").status_code == 401
    assert late.get("/api/session").status_code == 401
    assert visit.settle() == []


def test_a_reset_link_of_a_two_factor_person_asks_for_the_code(
    visit: Visit, server: str, database_url: str
) -> None:
    """J.1/J.3: a reset link is not a second factor; the page asks for the code when the
    API says it is needed, and the link works once it is given."""
    account = new_account(database_url)
    invited = _invite(server, account, "agent")
    token = invited["inviteUrl"].rsplit("/", 1)[1]
    with httpx.Client(base_url=server, timeout=30) as person:
        started = person.post(
            "/api/invitation/accept", json={"token": token, "password": PASSWORD}
        ).json()["data"]
        csrf = {"x-csrf-token": started["csrfToken"]}
        secret = person.post("/api/me/2fa", headers=csrf).json()["data"]["secret"]
        enabled = person.post(
            "/api/me/2fa/enable", headers=csrf, json={"code": pyotp.TOTP(secret).now()}
        )
        recovery = enabled.json()["data"]["recoveryCodes"]
    reset = api(server, account, "POST", f"/api/user/{invited['id']}/reset-link")
    visit.goto("/console" + _fragment(reset["resetUrl"]))
    page = visit.page
    expect(page.get_by_role("heading", name="Set password")).to_be_visible()
    expect(page.get_by_label("Code")).to_be_hidden()
    page.get_by_label("Password").fill("another long password")
    page.get_by_role("button", name="Set password").click()
    expect(page.get_by_label("Code")).to_be_visible()
    expect(page.get_by_role("alert")).to_be_visible()
    visit.failed.clear()  # the 401 was the point
    page.get_by_label("Code").fill(recovery[0])
    page.get_by_role("button", name="Set password").click()
    page.get_by_role("button", name="Test workspace").click()
    expect(page.get_by_role("link", name="Profile")).to_be_visible()
    assert visit.settle() == []


def test_a_password_change_lists_only_the_live_sessions_and_one_click_makes_one_key(
    visit: Visit, server: str, database_url: str
) -> None:
    """The password change ended the other sessions but the list kept them (their "End"
    then refused); a double click on "Create key" made two keys; "Disable" left the
    keyboard nowhere."""
    account = new_account(database_url)
    invited = _invite(server, account, "admin")
    _set_password(visit, invited)
    _other_session(server, invited["user"]["email"])
    page = visit.page
    page.get_by_role("link", name="Profile").click()
    items = page.get_by_role("list", name="Your sessions").get_by_role("listitem")
    expect(items).to_have_count(2)
    page.get_by_label("Current password").fill(PASSWORD)
    page.get_by_label("New password").fill(PASSWORD + " and more")
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("status")).to_contain_text("Password changed")
    expect(items).to_have_count(1)
    # Drawn with this session alone, the button still reads the list again: one signed
    # in since (an intruder's) is ended too (it was disabled, and that one stayed live).
    late = _other_session(server, invited["user"]["email"], PASSWORD + " and more")
    page.get_by_role("button", name="Sign out other sessions").click()
    signed_out = page.get_by_role("status").filter(has_text="Every other session is signed out.")
    expect(signed_out).to_be_visible()
    expect(items).to_have_count(1)
    assert late.get("/api/session").status_code == 401

    page.get_by_role("link", name="Keys").click()
    page.get_by_label("Name", exact=True).fill("Double")
    page.get_by_label("contacts:read").check()
    page.get_by_role("button", name="Create key").dblclick()
    expect(page.get_by_role("status")).to_contain_text("ccrm_")
    page.wait_for_timeout(500)
    made = [k for k in api(server, account, "GET", "/api/key")["data"] if k["name"] == "Double"]
    assert len(made) == 1

    other = api(server, account, "POST", "/api/user", json={
        "email": unique_email(), "name": "Vera Viewer", "role": "viewer",
        "workspaceIds": [account.workspace_id],
    })["user"]  # fmt: skip
    page.get_by_role("link", name="Users").click()
    page.get_by_role("button", name="Disable Vera Viewer").click()
    expect(page.get_by_role("button", name="Enable Vera Viewer")).to_be_focused()
    assert api(server, account, "GET", f"/api/user/{other['id']}")["user"]["status"] == "disabled"
    assert visit.settle() == []


def test_a_malformed_link_throws_nothing(visit: Visit, server: str, database_url: str) -> None:
    account = new_account(database_url)
    visit.goto("/console#contacts/%E0%A4%A")
    # The unknown contact's 404 is awaited, so that it cannot land after the clear below.
    with visit.page.expect_response(lambda r: "/api/contact/%25" in r.url) as unknown:
        sign_in(visit, account)
    assert unknown.value.status == 404
    expect(visit.page.get_by_role("heading", name="Contacts")).to_be_visible()
    visit.page.evaluate("location.hash = '#invite/%E0%A4%A'")  # followed in the open tab
    expect(visit.page.get_by_role("heading", name="Set password")).to_be_visible()
    visit.failed.clear()  # the unknown contact's 404, awaited above
    assert visit.settle() == []


PHONE = {"width": 375, "height": 740}


def _fits_the_phone(visit: Visit) -> None:
    """Nothing wider than the screen, and every button of the page within it."""
    page = visit.page
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    buttons = page.locator("main").get_by_role("button")
    assert buttons.count() > 0
    for button in buttons.all():
        button.scroll_into_view_if_needed()
        expect(button).to_be_in_viewport(ratio=1)


def test_users_and_keys_fit_a_phone(visit: Visit, server: str, database_url: str) -> None:
    """docs/console.md: usable at phone width. The tables were 633 and 786 px wide at
    375 px, their buttons off the screen; each row is now a card, its cells named."""
    account = new_account(database_url)
    _workspace_named(server, account, "Second workspace")
    _invite(server, account, "agent")
    visit.page.set_viewport_size(PHONE)
    _set_password(visit, _invite(server, account, "owner"))
    page = visit.page

    page.get_by_role("link", name="Users").click()
    expect(page.get_by_role("heading", name="Users")).to_be_visible()
    # Still a table of rows to a screen reader, each value after its column's name.
    agent = page.get_by_role("row").filter(has_text="Agent Person")
    expect(agent).to_have_count(1)
    expect(agent.get_by_role("cell").first).to_have_text("Agent Person")
    expect(agent.get_by_role("group", name="Workspaces of Agent Person")).to_be_visible()
    _fits_the_phone(visit)
    # A link shown once, one long string, wraps too.
    page.get_by_label("Email", exact=True).fill(unique_email())
    page.get_by_label("Name", exact=True).fill("Newcomer")
    page.get_by_role("button", name="Invite").click()
    expect(page.get_by_role("status")).to_contain_text("/console/#invite/")
    _fits_the_phone(visit)

    page.get_by_role("link", name="Keys").click()
    _create_reader_key(page)
    expect(page.get_by_role("row").filter(has_text="reader")).to_have_count(1)
    _fits_the_phone(visit)
    assert visit.settle() == []


def test_long_names_wrap_on_every_page_at_every_width(
    visit: Visit, server: str, database_url: str
) -> None:
    """Names as long as the API takes (a workspace's, a tag's, a channel's) made the Users,
    Keys and Channels pages and the contact panel thousands of pixels wide, at 1280 px as
    at 375 (a fieldset or a flex item as wide as its longest word)."""
    account = new_account(database_url)
    _workspace_named(server, account, "W" * 200)
    _invite(server, account, "agent")  # a row with the workspaces' checkboxes
    ws = f"/api/workspace/{account.workspace_id}"
    tag = api(server, account, "POST", f"{ws}/tags", json={"name": "T" * 198, "color": "#d33"})
    contact = api(
        server,
        account,
        "POST",
        "/api/contact",
        json={"name": "Ana", "email": "ana@example.com", "tags": [tag["id"]]},
    )["contact"]
    channel = {
        "type": "whatsapp",
        "name": "C" * 200,
        "phoneNumberId": str(uuid.uuid4().int)[:15],
        "accessToken": "EAAG" + "x" * 40,
        "appSecret": "s" * 32,
        "apiBaseUrl": "http://127.0.0.1:9/v21.0",
    }
    api(server, account, "POST", "/api/channel", json=channel)
    _set_password(visit, _invite(server, account, "owner"))
    page = visit.page
    for width in (1280, 375):
        page.set_viewport_size({"width": width, "height": 800})
        for view in ("Users", "Keys", "Channels"):
            page.get_by_role("link", name=view).click()
            expect(page.get_by_role("heading", name=view, exact=True)).to_be_visible()
            expect(page.locator("main")).to_contain_text(
                "W" * 20 if view != "Channels" else "C" * 20
            )
            assert page.evaluate("document.documentElement.scrollWidth") <= width, (view, width)
        page.evaluate(f"location.hash = '#contacts/{contact['id']}'")
        panel = page.get_by_role("dialog", name="Ana", exact=True)
        expect(panel.get_by_label("T" * 198)).to_be_visible()
        assert panel.evaluate("d => d.scrollWidth <= d.clientWidth"), width
        page.keyboard.press("Escape")
    assert visit.settle() == []


def test_a_reload_during_a_burst_of_refusals_keeps_the_person_signed_in(
    visit: Visit, server: str, database_url: str
) -> None:
    """A reload whose session read met a 429 (or a 503) showed "Sign in" with no word, and
    forgot the still valid session for good: the read is now said in words and tried
    again."""
    account = new_account(database_url)
    _set_password(visit, _invite(server, account, "owner"))
    page = visit.page
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()

    def rate_limited(route: Route) -> None:
        body = '{"success":false,"code":429,"errorCode":"RATE_LIMITED",'
        body += '"message":"Too many requests; retry after 1 s.","data":null}'
        route.fulfill(status=429, body=body, content_type="application/json")

    busy_twice, refused = refusing_first(rate_limited, answer_unavailable)
    page.route("**/api/session", busy_twice)
    page.reload()
    alert = page.locator("p.error[role=alert]")
    expect(alert).to_contain_text("Too many requests; retry after 1 s. Trying again")
    expect(alert).to_contain_text("retry shortly", timeout=5000)
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible(timeout=8000)
    expect(page.get_by_role("heading", name="Sign in")).to_have_count(0)
    page.unroute("**/api/session")
    page.reload()  # and the next reload too: the session was not forgotten
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    visit.failed.clear()  # the refusals were the point
    assert len(refused) == 2 and visit.settle() == []


def test_a_session_ended_elsewhere_says_what_it_did_not_save(
    visit: Visit, server: str, database_url: str
) -> None:
    """Sessions ended elsewhere while a panel held an edit: the page went to Sign in and the
    typed text was gone without a word. The message now names what was not saved."""
    account = new_account(database_url)
    ana = api(
        server, account, "POST", "/api/contact", json={"name": "Ana", "email": "ana@example.com"}
    )["contact"]
    owner = _invite(server, account, "owner")
    _set_password(visit, owner)
    page = visit.page
    page.evaluate(f"location.hash = '#contacts/{ana['id']}'")
    panel = page.get_by_role("dialog", name="Ana", exact=True)
    panel.get_by_label("Last name").fill("Typed but not saved")
    api(server, account, "DELETE", f"/api/user/{owner['id']}/sessions")
    # The events feed's next poll meets the 401 (a Save would as well).
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=30_000)
    expect(page.locator("p.error[role=alert]")).to_contain_text(
        "Not saved: Ana — Last name “Typed but not saved”."
    )
    assert visit.settle(expected=("401 ",)) == []  # the 401s were the point


def _second_tab_signs_in(visit: Visit, invited: dict) -> Page:
    """Another tab of the same browser, where `invited` sets a password: the browser's
    cookie is then that person's session, not the first tab's."""
    other = visit.page.context.new_page()
    other.goto(f"{visit.base_url}/console{_fragment(invited['inviteUrl'])}")
    other.get_by_label("Password").fill(PASSWORD)
    other.get_by_role("button", name="Set password").click()
    other.get_by_role("button", name="Test workspace").click()
    expect(other.get_by_role("heading", name="Contacts")).to_be_visible()
    return other


def test_a_sign_out_in_another_tab_is_not_told_as_a_missing_api_key(
    visit: Visit, server: str, database_url: str
) -> None:
    """A sign-out in another tab clears the browser's cookie: this tab's next request
    carried none, and its sign-in said "Missing API key: send the header 'Authorization:
    Bearer …'" to a person who signed in with a password."""
    account = new_account(database_url)
    invited = _invite(server, account, "agent")
    _set_password(visit, invited)
    page = visit.page
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    other = page.context.new_page()
    other.goto(f"{visit.base_url}/console")
    other.get_by_role("button", name="Test workspace").click()
    other.get_by_role("button", name="Sign out").click()
    expect(other.get_by_label("Email")).to_be_visible()
    # The events feed's next poll meets it.
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible(timeout=40_000)
    expect(page.get_by_role("alert")).to_have_text(
        "This browser no longer holds your session (signed out in another tab, or ended): "
        "sign in again."
    )
    assert visit.settle(expected=("401 ",)) == []


def test_sign_out_ends_the_session_the_browser_holds_after_another_tab_signed_in(
    visit: Visit, server: str, database_url: str
) -> None:
    """The first tab's token is not the cookie's session's (403 CSRF_FAILED): the console
    took that for "signed out" and left the browser signed in as the other person."""
    account = new_account(database_url)
    _set_password(visit, _invite(server, account, "owner"))
    page = visit.page
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    other = _second_tab_signs_in(visit, _invite(server, account, "viewer"))
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Email")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)  # nothing left open to say
    assert page.request.get(f"{server}/api/session").status == 401
    other.reload()
    expect(other.get_by_label("Email")).to_be_visible()
    assert visit.settle(expected=("403 ",)) == []  # the first DELETE's refusal


def _a_viewer_signs_in_after_the_owner(
    visit: Visit, server: str, database_url: str
) -> tuple[NewAccount, dict]:
    """An owner signed in in the visited tab, then a viewer of the same account in a
    second tab of the browser (its cookie replaces the owner's): the account, the viewer."""
    account = new_account(database_url)
    _set_password(visit, _invite(server, account, "owner"))
    expect(visit.page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    viewer = _invite(server, account, "viewer")
    _second_tab_signs_in(visit, viewer)
    return account, viewer


def _expect_replaced_by(page: Page, viewer: dict) -> None:
    """The tab went to the sign-in, saying who signed in in another tab."""
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text(
        f"{viewer['user']['email']}) signed in in another tab of this browser"
    )


def test_a_tab_whose_session_another_person_replaced_says_so(
    visit: Visit, server: str, database_url: str
) -> None:
    """A change from the owner's tab after a viewer signed in in another one went out with
    the owner's token and the viewer's cookie: "needs the header X-CSRF-Token" at every
    click, under the owner's controls. The tab now says who holds the browser."""
    account, viewer = _a_viewer_signs_in_after_the_owner(visit, server, database_url)
    page = visit.page
    page.get_by_role("button", name="New contact").click()
    dialog = page.get_by_role("dialog", name="New contact")
    dialog.get_by_label("Name", exact=True).fill("Made by nobody")
    dialog.get_by_label("Email").fill("nobody@example.com")
    dialog.get_by_role("button", name="Create").click()
    _expect_replaced_by(page, viewer)
    listed = api(server, account, "GET", "/api/contact")
    assert "Made by nobody" not in str(listed)
    assert visit.settle(expected=("403 ",)) == []


def test_a_tab_whose_session_another_person_replaced_reads_nothing_as_them(
    visit: Visit, server: str, database_url: str
) -> None:
    """Reads as well as changes: the owner's tab, after a viewer signed in in another one,
    showed the next view as the viewer saw it (an assigned-only agent's board would lose
    cards without a word). Its reads carry its token, refused for another session."""
    _, viewer = _a_viewer_signs_in_after_the_owner(visit, server, database_url)
    page = visit.page
    page.get_by_role("link", name="Opportunities").click()
    _expect_replaced_by(page, viewer)
    expect(page.get_by_role("heading", name="Opportunities")).to_have_count(0)
    assert visit.settle(expected=("403 ",)) == []


def test_ending_the_session_a_second_sign_in_replaced_keeps_the_tab_signed_in(
    visit: Visit, server: str, database_url: str
) -> None:
    """After signing in again in another tab, "Sign out other sessions" ends the tab's
    first session: the events feed's poll, sent with the old cookie, then answered 401
    and the tab went to the sign-in though the browser holds the same person's session.
    It takes that session's token and goes on following changes."""
    account = new_account(database_url)
    owner = _invite(server, account, "owner")
    _set_password(visit, owner)
    page = visit.page
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    again = {"email": owner["user"]["email"], "password": PASSWORD}
    assert page.context.request.post(f"{server}/api/session", data=again).ok
    page.get_by_role("link", name="Profile").click()
    items = page.get_by_role("list", name="Your sessions").get_by_role("listitem")
    expect(items).to_have_count(2)
    page.get_by_role("button", name="Sign out other sessions").click()
    expect(items).to_have_count(1)
    page.get_by_role("link", name="Contacts").click()
    create(server, account, "contact", name="Still followed", email=unique_email())
    expect(page.get_by_role("article", name=re.compile("^Still followed"))).to_be_visible()
    expect(page.get_by_role("heading", name="Sign in")).to_have_count(0)
    assert visit.settle(expected=("401 ", "403 ")) == []


def test_the_same_person_signed_in_again_in_another_tab_goes_on_working(
    visit: Visit, server: str, database_url: str
) -> None:
    """The same person's new session (another tab's sign-in): the change goes through with
    its token, without a word."""
    account = new_account(database_url)
    owner = _invite(server, account, "owner")
    _set_password(visit, owner)
    page = visit.page
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    # A sign-in elsewhere in this browser (sharing its cookies): a new session, the first
    # one still open.
    again = {"email": owner["user"]["email"], "password": PASSWORD}
    assert page.context.request.post(f"{server}/api/session", data=again).ok
    # The board goes on following changes: the events feed reads with the new token.
    for name in ("First after", "Second after"):
        create(server, account, "contact", name=name, email=unique_email())
        expect(page.get_by_role("article", name=re.compile(f"^{name}"))).to_be_visible()
    # A read goes on too (its token taken from the new session), then a change.
    page.get_by_role("link", name="Opportunities").click()
    expect(page.get_by_role("heading", name="Opportunities")).to_be_visible()
    page.get_by_role("link", name="Contacts").click()
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    page.get_by_role("button", name="New contact").click()
    dialog = page.get_by_role("dialog", name="New contact")
    dialog.get_by_label("Name", exact=True).fill("Made again")
    dialog.get_by_label("Email").fill("made.again@example.com")
    dialog.get_by_role("button", name="Create").click()
    expect(dialog).to_be_hidden()
    assert "Made again" in str(api(server, account, "GET", "/api/contact"))
    assert visit.settle(expected=("403 ",)) == []


def test_ending_a_session_leaves_the_keyboard_on_the_next_one(
    visit: Visit, server: str, database_url: str
) -> None:
    """ "End" redraws the list: the focus fell to the page's start. A double click ends it
    once (the second found it ended: "No live session…")."""
    account = new_account(database_url)
    invited = _invite(server, account, "agent")
    _set_password(visit, invited)
    for _ in range(2):
        _other_session(server, invited["user"]["email"])
    page = visit.page
    page.get_by_role("link", name="Profile").click()
    ends = page.get_by_role("button", name="End", exact=True)
    expect(ends).to_have_count(2)
    ends.first.dblclick()
    expect(ends).to_have_count(1)
    page.wait_for_timeout(300)
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(ends.first).to_be_focused()
    ends.first.press("Enter")
    expect(ends).to_have_count(0)
    expect(page.get_by_role("list").filter(has_text="(this one)")).to_be_focused()
    assert visit.settle() == []


def test_a_refusal_under_another_person_s_session_is_not_taken_for_a_new_role(
    visit: Visit, server: str, database_url: str
) -> None:
    """A viewer's sign-in in another tab made the owner's tab's next refusal read the
    session again and take the viewer for the owner with a new role: the tab went on as the
    viewer, and its changes were made as them."""
    _, viewer = _a_viewer_signs_in_after_the_owner(visit, server, database_url)
    page = visit.page
    nav = page.get_by_role("navigation", name="Console")
    expect(nav.get_by_role("link", name="Users")).to_be_visible()  # drawn for the owner
    nav.get_by_role("link", name="Users").click()  # refused: the cookie is the viewer's
    _expect_replaced_by(page, viewer)
    assert visit.settle(expected=("403 ",)) == []


def test_a_refused_disable_leaves_the_keyboard_on_its_button(
    visit: Visit, server: str, database_url: str
) -> None:
    """The row's controls are held while a change is saved, which took the focus: a refusal
    (the last owner) left the keyboard at the page's start."""
    account = new_account(database_url)
    owner = _invite(server, account, "owner")
    _set_password(visit, owner)
    page = visit.page
    page.get_by_role("link", name="Users").click()
    disable = page.get_by_role("button", name=f"Disable {owner['user']['name']}")
    disable.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("alert")).to_contain_text("owner")
    expect(disable).to_be_focused()
    assert visit.settle(expected=("409 ",)) == []
