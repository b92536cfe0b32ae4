"""The console's Channels page (contract K.2, K.3) in Debian's chromium, on both backends:
an owner creates a WhatsApp channel and sees its webhook URL and verify token to paste
into Meta's dashboard (never its access token or app secret), disables and enables it,
sees the API's refusal of a duplicate beside its phone number ID, and deletes it; a key
without workspace:manage is not offered the page."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from chatcrm.provisioning import NewAccount
from tests.browser.conftest import Visit, api, sign_in
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ACCESS_TOKEN = "EAAG-secret-access-token"
APP_SECRET = "the-app-secret-value"


@pytest.fixture(scope="module")
def server(console_server: str) -> str:
    """The console's shared server, whose channels may call a Graph API on 127.0.0.1."""
    return console_server


def _channels_page(visit: Visit, account: NewAccount) -> None:
    visit.goto("/console")
    sign_in(visit, account)
    visit.page.get_by_role("link", name="Channels").click()
    expect(visit.page.get_by_role("heading", name="Channels", exact=True)).to_be_visible()


def test_an_owner_creates_lists_disables_and_deletes_a_channel(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    _channels_page(visit, account)
    page = visit.page
    expect(page.get_by_text("No channel yet")).to_be_visible()

    form = page.get_by_role("form", name="New channel")
    form.get_by_label("Name", exact=True).fill("Main line")
    form.get_by_label("Phone number ID").fill("109876543210987")
    form.get_by_label("Display phone number").fill("+51 1 555 0100")
    form.get_by_label("Access token").fill(ACCESS_TOKEN)
    form.get_by_label("App secret").fill(APP_SECRET)
    form.get_by_label("API base URL (optional)").fill("http://127.0.0.1:9/v21.0")
    form.get_by_role("button", name="Create channel").click()
    expect(form.get_by_role("status")).to_contain_text("Main line")

    listed = api(server, account, "GET", "/api/channel")["data"]
    assert [c["name"] for c in listed] == ["Main line"]
    stored = listed[0]
    card = page.get_by_role("region", name="Main line")
    webhook = card.get_by_label("Webhook URL", exact=True)
    expect(webhook).to_have_value(stored["webhookUrl"])
    expect(webhook).to_have_value(re.compile(rf"/channels/whatsapp/{stored['id']}$"))
    verify = card.get_by_label("Verify token", exact=True)
    expect(verify).to_have_value(stored["verifyToken"])
    assert len(stored["verifyToken"]) == 32  # chosen for us
    expect(card).to_contain_text("109876543210987")
    expect(card.get_by_text("Enabled", exact=True)).to_be_visible()
    # Written, never shown.
    content = page.content()
    assert ACCESS_TOKEN not in content and APP_SECRET not in content

    # Disable, then enable again.
    card.get_by_role("button", name="Disable").click()
    expect(card.get_by_text("Disabled", exact=True)).to_be_visible()
    assert (
        api(server, account, "GET", f"/api/channel/{stored['id']}")["channel"]["enabled"] is False
    )
    card.get_by_role("button", name="Enable").click()
    expect(card.get_by_text("Enabled", exact=True)).to_be_visible()
    assert api(server, account, "GET", f"/api/channel/{stored['id']}")["channel"]["enabled"] is True

    # The same phone number ID again: the API's message.
    form.get_by_label("Name", exact=True).fill("Second line")
    form.get_by_label("Phone number ID").fill("109876543210987")
    form.get_by_label("Display phone number").fill("+51 1 555 0101")
    form.get_by_label("Access token").fill(ACCESS_TOKEN)
    form.get_by_label("App secret").fill(APP_SECRET)
    form.get_by_label("Verify token (optional)").fill("my-own-verify-token")
    form.get_by_role("button", name="Create channel").click()
    expect(form.get_by_role("alert")).to_be_visible()
    # Beside the field it names, as docs/console.md says: a 409 with `data` null names none.
    taken = "The phoneNumberId '109876543210987' already belongs to a channel."
    phone_number_id = form.get_by_label("Phone number ID")
    expect(phone_number_id).to_have_attribute("aria-invalid", "true")
    expect(phone_number_id).to_have_accessible_description(re.compile(re.escape(taken)))
    expect(phone_number_id).to_be_focused()
    visit.failed.clear()  # the 409 was the point
    assert len(api(server, account, "GET", "/api/channel")["data"]) == 1

    # Refused (deleted elsewhere meanwhile): the API's message, the keyboard kept on the
    # button (held while it was sent, it went to the page's start).
    api(server, account, "DELETE", f"/api/channel/{stored['id']}")
    toggle = card.get_by_role("button", name="Disable")
    toggle.focus()
    page.keyboard.press("Enter")
    expect(card.get_by_role("alert")).to_contain_text("No channel with id")
    expect(toggle).to_be_focused()
    card.get_by_role("button", name="Delete", exact=True).click()
    sure = card.get_by_role("button", name="Delete Main line")
    sure.focus()
    page.keyboard.press("Enter")
    expect(card.get_by_role("alert")).to_contain_text("No channel with id")
    expect(sure).to_be_focused()
    page.reload()
    expect(page.get_by_role("region", name="Main line")).to_have_count(0)
    expect(page.get_by_text("No channel yet")).to_be_visible()
    assert api(server, account, "GET", "/api/channel")["data"] == []
    assert visit.settle(expected=("404 ",)) == []  # the refusals were the point


def test_a_channel_made_with_its_own_verify_token_shows_it(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    _channels_page(visit, account)
    form = visit.page.get_by_role("form", name="New channel")
    form.get_by_label("Name", exact=True).fill("Support")
    form.get_by_label("Phone number ID").fill("109876543210988")
    form.get_by_label("Display phone number").fill("+51 1 555 0102")
    form.get_by_label("Access token").fill(ACCESS_TOKEN)
    form.get_by_label("App secret").fill(APP_SECRET)
    form.get_by_label("Verify token (optional)").fill("paste-me-into-meta")
    form.get_by_label("API base URL (optional)").fill("http://127.0.0.1:9/v21.0")
    form.get_by_role("button", name="Create channel").click()
    card = visit.page.get_by_role("region", name="Support")
    expect(card.get_by_label("Verify token", exact=True)).to_have_value("paste-me-into-meta")
    assert visit.settle() == []


def test_the_page_is_not_offered_without_workspace_manage(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    scopes = ["contacts:read", "opportunities:read", "messages:read", "events:read"]
    made = api(server, account, "POST", "/api/key", json={"name": "reader", "scopes": scopes})
    reader = NewAccount(account.account_id, account.workspace_id, account.key_id, made["apiKey"])
    visit.goto("/console")
    sign_in(visit, reader)
    expect(visit.page.get_by_role("heading", name="Contacts")).to_be_visible()
    expect(visit.page.get_by_role("link", name="Channels")).to_be_hidden()
    assert visit.settle() == []
