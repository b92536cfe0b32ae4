"""Moving between workspaces in the console (contract H: "the account's workspaces to pick
from"), in Debian's chromium on both backends: the nav offers its views only once a
workspace is open, "Switch workspace" goes back to the choice without signing out, the
boards' search and "Mine" start empty in the next workspace and after a sign-out, and a
workspace taken away from the person leaves the screen for the choice, live and on reload."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import Visit, api, create, sign_in
from tests.browser.test_console_people import _invite, _set_password
from tests.client import unique_email
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(console_server: str) -> str:
    """The console's shared server on this run's backend (the visit fixture's server)."""
    return console_server


def _views_hidden(page: Page) -> None:
    nav = page.get_by_role("navigation", name="Console")
    expect(nav.get_by_role("button", name="Sign out")).to_be_visible()
    for name in ("Contacts", "Opportunities", "Pipeline", "Profile"):
        expect(nav.get_by_role("link", name=name)).to_be_hidden()
    expect(nav.get_by_role("button", name="Switch workspace")).to_be_hidden()


def test_switch_workspace_and_the_filters_start_empty(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    second = api(server, account, "POST", "/api/workspace", json={"name": "Second workspace"})
    person = _invite(server, account, "admin")
    # An agent of the first workspace stands for the person: "Mine" can be ticked there.
    api(
        server, account, "POST", f"/api/workspace/{account.workspace_id}/agents",
        json={"name": "Me", "email": person["user"]["email"]},
    )  # fmt: skip
    create(server, account, "contact", name="Ana", email="ana@example.com")
    create(server, account, "contact", name="Bea", email="bea@example.com")
    beyond = {"x-workspace-id": second["id"]}
    api(
        server,
        account,
        "POST",
        "/api/contact",
        json={"name": "Cid", "email": "cid@example.com"},
        headers=beyond,
    )

    _set_password(visit, person)  # picks "Test workspace"
    page = visit.page
    search, mine = page.get_by_label("Search"), page.get_by_label("Mine")
    expect(page.get_by_role("article", name="Bea")).to_be_visible()
    search.fill("Ana")
    expect(page.get_by_role("article", name="Bea")).to_have_count(0)
    mine.check()

    page.get_by_role("button", name="Switch workspace").click()
    expect(page.get_by_role("heading", name="Choose a workspace")).to_be_visible()
    _views_hidden(page)
    page.get_by_role("button", name="Second workspace").click()
    expect(page.get_by_role("article", name="Cid")).to_be_visible()
    expect(page.get_by_role("navigation", name="Console")).to_contain_text("Second workspace")
    expect(search).to_have_value("")

    page.get_by_role("button", name="Switch workspace").click()
    page.get_by_role("button", name="Test workspace").click()
    expect(page.get_by_role("article", name="Bea")).to_be_visible()
    expect(search).to_have_value("")
    expect(mine).not_to_be_checked()

    # The same after a sign-out, whoever signs in next.
    search.fill("Ana")
    expect(page.get_by_role("article", name="Bea")).to_have_count(0)
    page.get_by_role("button", name="Sign out").click()
    sign_in(visit, account)
    expect(page.get_by_role("article", name="Bea")).to_be_visible()
    expect(search).to_have_value("")
    assert visit.settle() == []


def test_the_views_are_offered_once_a_workspace_is_chosen(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    visit.goto("/console")
    page = visit.page
    page.get_by_role("link", name="Sign in with an API key").click()
    page.get_by_label("API key").fill(account.api_key)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Choose a workspace")).to_be_visible()
    _views_hidden(page)
    page.get_by_role("button", name="Test workspace").click()
    nav = page.get_by_role("navigation", name="Console")
    for name in ("Contacts", "Opportunities", "Pipeline"):
        expect(nav.get_by_role("link", name=name)).to_be_visible()
    expect(nav.get_by_role("button", name="Switch workspace")).to_be_visible()
    assert visit.settle() == []


LIVE_MS = 2000  # the contract's bound for live updates


@pytest.mark.parametrize("role", ["agent", "viewer"])
def test_a_workspace_taken_away_leaves_the_screen_for_the_choice(
    visit: Visit, server: str, database_url: str, role: str
) -> None:
    """A person taken out of the open workspace kept its board on screen while every poll
    was refused (403 FORBIDDEN), and a reload left only "Sign out"."""
    account = new_account(database_url)
    second = api(server, account, "POST", "/api/workspace", json={"name": "Second workspace"})
    both = [account.workspace_id, second["id"]]
    body = {"email": unique_email(), "name": "Person", "role": role, "workspaceIds": both}
    invited = api(server, account, "POST", "/api/user", json=body)
    create(server, account, "contact", name="Ana", email="ana@example.com")
    _set_password(visit, invited)  # picks "Test workspace"
    page = visit.page
    nav = page.get_by_role("navigation", name="Console")
    expect(page.get_by_role("article", name="Ana")).to_be_visible()
    page.get_by_role("article", name="Ana").click()
    expect(page.get_by_role("dialog", name="Ana", exact=True)).to_be_visible()

    user = f"/api/user/{invited['user']['id']}"
    api(server, account, "PUT", user, json={"role": role, "workspaceIds": [second["id"]]})
    expect(page.get_by_role("heading", name="Choose a workspace")).to_be_visible(timeout=LIVE_MS)
    notice = page.get_by_role("alert")
    expect(notice).to_have_text(
        "You can no longer use the workspace “Test workspace”: choose another one."
    )
    expect(page.get_by_role("article", name="Ana")).to_have_count(0)
    expect(page.get_by_role("dialog", name="Ana", exact=True)).to_have_count(0)
    _views_hidden(page)
    expect(page.get_by_role("button", name="Test workspace")).to_have_count(0)
    page.get_by_role("button", name="Second workspace").click()
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    expect(nav).to_contain_text("Second workspace")

    # A tab reloaded with the workspace it had open, taken away since: the choice again.
    page.evaluate(f"sessionStorage.setItem('chatcrm.workspace', '{account.workspace_id}')")
    page.reload()
    expect(page.get_by_role("heading", name="Choose a workspace")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_text(
        "You can no longer use the workspace that was open: choose another one."
    )
    _views_hidden(page)
    page.get_by_role("button", name="Second workspace").click()
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    visit.failed.clear()  # the refusals (403) were the point
    assert visit.settle() == []
