"""The console's "New contact" and "New opportunity" dialogs (contract H) in chromium, on both
backends, at a phone's width: the API's messages next to the fields they name, then a
create that lands on the board (once, even on a double click)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser import test_console
from tests.browser.conftest import Visit
from tests.browser.test_console import _api, _sign_in
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]

server = test_console.server  # the same real `chatcrm serve` on this run's backend


def test_new_contact_and_new_opportunity(visit: Visit, server: str, database_url: str) -> None:
    account = new_account(database_url)
    taken = {"name": "Ana", "lastname": "Diaz", "email": "ana@example.com"}
    _api(server, account, "POST", "/api/contact", json=taken)
    workspace = _api(server, account, "GET", f"/api/workspace/{account.workspace_id}")
    first = workspace["contactStages"][0]
    page = visit.page
    page.set_viewport_size({"width": 390, "height": 844})
    visit.goto("/console")
    _sign_in(visit, account)

    # A bad email, then one another contact has: each message beside Email.
    page.get_by_role("button", name="New contact").click()
    dialog = page.get_by_role("dialog", name="New contact")
    box = dialog.bounding_box()
    assert box is not None and box["width"] == 390  # the whole width of a phone
    dialog.get_by_label("Name", exact=True).fill("Eva")
    dialog.get_by_label("Last name").fill("Luna")
    email = dialog.get_by_label("Email")
    email.fill("eva@")
    expect(dialog.get_by_label("Channel")).to_have_value("7")
    dialog.get_by_role("button", name="Create").click()
    expect(dialog.get_by_role("alert")).to_contain_text("Invalid value for 'email'")
    expect(email).to_have_attribute("aria-invalid", "true")
    expect(email).to_have_accessible_description(re.compile("valid email address"))
    email.fill("ANA@example.com")
    dialog.get_by_role("button", name="Create").click()
    expect(email).to_have_accessible_description(re.compile("already used"))
    visit.failed.clear()  # the 422 and the 409 were the point

    # A good one, double-clicked: created once, and on the board.
    email.fill("eva@example.com")
    dialog.get_by_role("button", name="Create").dblclick()
    expect(dialog).to_have_count(0)
    # The focus is back on the button that opened it, not lost on the page.
    expect(page.get_by_role("button", name="New contact")).to_be_focused()
    column = page.get_by_role("region", name=first["name"], exact=True)
    expect(column.get_by_role("article", name=re.compile(r"^Eva Luna"))).to_have_count(1)
    found = _api(server, account, "GET", "/api/contact", params={"q": "eva@example.com"})
    assert [(c["name"], c["platformId"]) for c in found["data"]] == [("Eva", 7)]
    eva = found["data"][0]

    # An opportunity without an amount: the message beside Amount; then created for Eva.
    page.get_by_role("link", name="Opportunities").click()
    page.get_by_role("button", name="New opportunity").click()
    dialog = page.get_by_role("dialog", name="New opportunity")
    dialog.get_by_label("Name", exact=True).fill("Eva's plan")
    dialog.get_by_role("button", name="Create").click()
    amount = dialog.get_by_label("Amount")
    # Its format (the hint under it), then the API's message.
    expect(amount).to_have_accessible_description(re.compile(r"1,200\.50\. is required$"))
    expect(dialog.get_by_role("alert")).to_contain_text("Invalid value for 'amount'")
    amount.fill("lots")
    dialog.get_by_role("button", name="Create").click()
    expect(amount).to_have_accessible_description(re.compile(r"1,200\.50\. must be a number$"))
    visit.failed.clear()
    amount.fill("1500.5")
    dialog.get_by_label("Find a contact").fill("Eva")
    contact = dialog.get_by_label("Contact", exact=True)
    expect(contact.get_by_role("option")).to_have_count(2)  # (none) and Eva
    contact.select_option(eva["id"])
    dialog.get_by_role("button", name="Create").click()
    expect(dialog).to_have_count(0)
    made = _api(server, account, "GET", "/api/opportunity")["data"]
    # Made in the console: creationTypeId 3 (contract B.2).
    assert [(o["name"], o["amount"], o["contactId"], o["creationTypeId"]) for o in made] == [
        ("Eva's plan", 1500.5, eva["id"], 3)
    ]

    # Cancel leaves without creating.
    page.get_by_role("link", name="Contacts").click()
    page.get_by_role("button", name="New contact").click()
    dialog = page.get_by_role("dialog", name="New contact")
    dialog.get_by_label("Name", exact=True).fill("Nobody")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_have_count(0)
    assert len(_api(server, account, "GET", "/api/contact")["data"]) == 2
    assert visit.settle() == []


def test_a_refusal_is_not_replayed_after_its_cause_is_gone(
    visit: Visit, server: str, database_url: str
) -> None:
    """A create refused (409: the email is another contact's) kept its Idempotency-Key, so
    after that contact was deleted the same Create got the stored refusal again."""
    account = new_account(database_url)
    taken = _api(server, account, "POST", "/api/contact", json={"name": "Old", "email": "t@x.io"})
    visit.goto("/console")
    _sign_in(visit, account)
    page = visit.page
    page.get_by_role("button", name="New contact").click()
    dialog = page.get_by_role("dialog", name="New contact")
    dialog.get_by_label("Name", exact=True).fill("New")
    email = dialog.get_by_label("Email")
    email.fill("t@x.io")
    dialog.get_by_role("button", name="Create").click()
    expect(email).to_have_accessible_description(re.compile("already used"))
    visit.failed.clear()  # the 409 was the point
    body = {"contactIds": [{"ids": taken["id"]}]}
    _api(server, account, "POST", "/api/contact/delete-batch", json=body)
    dialog.get_by_role("button", name="Create").click()
    expect(dialog).to_have_count(0)
    found = _api(server, account, "GET", "/api/contact", params={"q": "t@x.io"})
    assert [c["name"] for c in found["data"]] == ["New"]
    assert visit.settle() == []
