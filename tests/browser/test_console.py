"""The web console (contract H) in Debian's chromium, on both backends, as a person uses it:
sign in with an API key, pick a workspace, read the contacts board, sign out. Nothing
leaves the server's origin, and the key lives in the tab's sessionStorage, never a cookie."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Visit, api, sign_in
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(console_server: str) -> str:
    """The console's shared server on this run's backend (the visit fixture's server)."""
    return console_server


# The helpers live in tests/browser/conftest.py; these names stay for the modules that
# import them from here.
_api = api
_sign_in = sign_in


def test_the_root_leads_to_the_sign_in_with_nothing_from_elsewhere(visit: Visit) -> None:
    visit.goto("/")
    assert visit.page.url.endswith("/console")
    expect(visit.page.get_by_label("Email")).to_be_visible()
    expect(visit.page.get_by_label("Password")).to_be_visible()
    # The API key stays as a second way in (contract K.3).
    visit.page.get_by_role("link", name="Sign in with an API key").click()
    expect(visit.page.get_by_label("API key")).to_be_visible()
    assert visit.settle() == []


def test_a_wrong_key_is_refused_with_the_apis_message(visit: Visit) -> None:
    visit.goto("/console")
    page = visit.page
    page.get_by_role("link", name="Sign in with an API key").click()
    page.get_by_label("API key").fill("ccrm_not_a_key")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("alert")).to_contain_text("API key")
    visit.failed.clear()  # the 401 was the point


def test_the_contacts_board_and_sign_out(visit: Visit, server: str, database_url: str) -> None:
    account = new_account(database_url)
    workspace = api(server, account, "GET", f"/api/workspace/{account.workspace_id}")
    first, second = workspace["contactStages"][:2]
    tag = api(
        server, account, "POST", f"/api/workspace/{account.workspace_id}/tags",
        json={"name": "VIP", "color": "#d33"},
    )  # fmt: skip
    ana = {"name": "Ana", "lastname": "Diaz", "platformId": 2, "phone": "51987654321"}
    api(server, account, "POST", "/api/contact", json={**ana, "tags": [tag["id"]]})
    for name in ("Bea", "Cid"):
        body = {"name": name, "email": f"{name.lower()}@example.com", "stageId": second["id"]}
        api(server, account, "POST", "/api/contact", json=body)

    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    column = page.get_by_role("region", name=first["name"], exact=True)
    expect(column).to_be_visible()
    card = column.get_by_role("article", name=re.compile(r"^Ana Diaz"))
    expect(card).to_contain_text("+51 987 654 321")  # grouped as people read it
    expect(card).to_contain_text("VIP")
    expect(column.get_by_label("1 contacts")).to_have_text("1")
    other = page.get_by_role("region", name=second["name"], exact=True)
    expect(other.get_by_role("article")).to_have_count(2)
    expect(other.get_by_label("2 contacts")).to_have_text("2")
    names = [s["name"] for s in workspace["contactStages"]]
    headings = page.locator("section.column h3").all_inner_texts()
    assert headings == names  # one column per stage, in stage order

    stored = page.evaluate("() => sessionStorage.getItem('chatcrm.key')")
    assert stored == account.api_key
    assert page.context.cookies() == []
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Email")).to_be_visible()
    assert page.evaluate("() => sessionStorage.length") == 0
    assert visit.settle() == []
