"""The console's people parts (contract K.3, J) in Debian's chromium: a person signs in
with e-mail and password, sets a password from an invitation link, sees only what its role
allows, manages users and keys, and turns two-factor on with a QR code drawn in the page."""

from __future__ import annotations

import re

import pyotp
import pytest
from playwright.sync_api import expect

from chatcrm.provisioning import NewAccount
from tests.browser.conftest import Visit, api
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
    page.get_by_role("link", name="Keys").click()
    # The Users page stays until the Keys page is drawn: its "Name" is not the key's.
    expect(page.get_by_role("heading", name="Keys")).to_be_visible()
    page.get_by_label("Name", exact=True).fill("reader")
    page.get_by_label("contacts:read").check()
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_role("status")).to_contain_text("ccrm_")
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
    secret = re.search(r"enter this key: (\w+)", page.locator(".two-factor").inner_text())
    assert secret is not None
    page.get_by_label("Code").fill(pyotp.TOTP(secret.group(1)).now())
    page.get_by_role("button", name="Turn on").click()
    expect(page.locator("ul.recovery li")).to_have_count(10)
    assert visit.settle() == []
    user = api(server, account, "GET", f"/api/user/{invited['id']}")["user"]
    assert user["twoFactorEnabled"] is True
