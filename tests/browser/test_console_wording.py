"""The console speaks to people (the open issue's items 7–11): the contact panel edits the
phone and the segmentation, refusals and the history read as sentences, fields by their
labels, phones grouped as people read them, amounts with thousands separators, the nav
hidden when signed out and readable on the dark bar, same-named workspaces told apart."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.browser import test_console
from tests.browser.conftest import Visit, api, sign_in
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]

server = test_console.server  # the same real `chatcrm serve` on this run's backend

# WCAG's contrast ratio of two computed `rgb(...)` colours.
_CONTRAST = """([fg, bg]) => {
  const lum = (c) => {
    const [r, g, b] = c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number).map((v) => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""


def test_signed_out_the_nav_is_hidden_and_its_links_are_readable(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    visit.goto("/console")
    page = visit.page
    expect(page.get_by_label("Email")).to_be_visible()
    # Signed out: no nav, no "Sign out".
    expect(page.get_by_role("navigation", name="Console")).to_be_hidden()
    expect(page.get_by_role("button", name="Sign out")).to_be_hidden()
    sign_in(visit, account)
    nav = page.get_by_role("navigation", name="Console")
    expect(nav).to_be_visible()
    bar = page.locator("header.bar").evaluate("e => getComputedStyle(e).backgroundColor")
    for name in ("Contacts", "Opportunities", "Pipeline"):
        color = nav.get_by_role("link", name=name).evaluate("e => getComputedStyle(e).color")
        assert page.evaluate(_CONTRAST, [color, bar]) >= 4.5, (name, color, bar)
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Email")).to_be_visible()
    expect(nav).to_be_hidden()
    assert visit.settle() == []


def test_workspaces_of_the_same_name_are_told_apart(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    other = api(server, account, "POST", "/api/workspace", json={"name": "Test workspace"})
    visit.goto("/console")
    page = visit.page
    page.get_by_role("link", name="Sign in with an API key").click()
    page.get_by_label("API key").fill(account.api_key)
    page.get_by_role("button", name="Sign in").click()
    buttons = page.locator("ul.workspaces").get_by_role("button")
    expect(buttons).to_have_count(2)
    names = buttons.all_inner_texts()
    assert len(set(names)) == 2, names
    for name in names:
        assert name.startswith("Test workspace (")
    # Each names the end of its id: the person can pick the one they mean.
    page.get_by_role("button", name=re.compile(f"id …{other['id'][-8:]}")).click()
    expect(page.locator("#workspace-name")).to_have_text("Test workspace")
    assert page.evaluate("sessionStorage.length") >= 1
    assert other["id"] in str(page.evaluate("JSON.stringify(sessionStorage)"))
    assert visit.settle() == []


def _setup(server: str, account: Any) -> dict[str, Any]:
    ws = f"/api/workspace/{account.workspace_id}"

    def post(path: str, body: dict[str, Any]) -> Any:
        return api(server, account, "POST", path, json=body)

    made: dict[str, Any] = {
        "segment": post(f"{ws}/segmentations", {"name": "Retail"}),
        "workspace": api(server, account, "GET", ws),
    }
    made["ana"] = post(
        "/api/contact",
        {"name": "Ana", "lastname": "Díaz", "email": "ana@example.com", "phone": "+51 987 654 321"},
    )["contact"]
    made["bruno"] = post("/api/contact", {"name": "Bruno", "email": "bruno@example.com"})["contact"]
    return made


def test_the_contact_panel_edits_the_phone_and_speaks_plainly(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    made = _setup(server, account)
    bruno = made["bruno"]
    first, second = made["workspace"]["contactStages"][:2]
    page = visit.page
    visit.goto("/console")
    sign_in(visit, account)
    # The card shows Ana's phone grouped after its country code.
    ana_card = page.get_by_role("article", name=re.compile("^Ana Díaz"))
    expect(ana_card.locator(".phone")).to_have_text("+51 987 654 321")

    page.get_by_role("article", name=re.compile("^Bruno")).click()
    expect(page.get_by_role("dialog", name="Bruno")).to_be_visible()
    panel = page.locator("dialog.panel")  # renamed on the way
    expect(panel.get_by_label("Phone")).to_have_value("")
    # Every field by its label; the history in words.
    fields = panel.locator("dl.fields")
    expect(fields.locator("dt", has_text=re.compile("^Created$"))).to_have_count(1)
    expect(fields).not_to_contain_text("creationDate")
    history = panel.get_by_role("region", name="History")
    expect(history.get_by_role("listitem").first).to_contain_text(re.compile(r"^Created — "))
    expect(history).not_to_contain_text("contact.created")

    # Ana's phone, taken: the console names her, with a link to her.
    panel.get_by_label("Phone").fill("+51 987 654 321")
    panel.get_by_role("button", name="Save").click()
    alert = panel.get_by_role("alert")
    expect(alert).to_contain_text("A contact already has this phone: Ana Díaz")
    visit.failed.clear()  # the 409 was the point

    # Phone, segmentation and bot: one save; the history names them by their labels.
    panel.get_by_label("Phone").fill("+51 912 345 678")
    panel.get_by_label("Segmentation").select_option(label="Retail")
    panel.get_by_label("Bot enabled").uncheck()
    panel.get_by_role("button", name="Save").click()
    expect(panel.get_by_role("status")).to_have_text("Saved.")
    stored = api(server, account, "GET", f"/api/contact/{bruno['id']}", params={"shape": "full"})
    stored = stored["data"][0]
    assert stored["internalWhatsappNumber"] == "51912345678"
    assert stored["segmentationId"] == made["segment"]["id"]
    assert stored["isBotEnabled"] is False
    expect(history).to_contain_text("Updated: Segmentation, Bot enabled, Phone")
    expect(fields).to_contain_text("+51 912 345 678")
    panel.get_by_label("Stage").select_option(label=second["name"])
    expect(panel.get_by_role("status")).to_have_text(f"Moved to {second['name']}.")
    expect(history).to_contain_text(f"Stage changed to {second['name']}")

    # Changed elsewhere meanwhile, the field being edited too (an open panel takes in a
    # change to the others by itself, so only that one is sure to conflict): the console
    # says so in a person's words.
    panel.get_by_label("Last name").fill("Silva")
    where = {"id": bruno["id"], "workspaceId": account.workspace_id}
    for change in ({"name": "Bruna"}, {"lastname": "Souza"}):
        api(server, account, "PUT", "/api/contact", params=where, json=change)
    panel.get_by_role("button", name="Save").click()
    expect(alert).to_contain_text("Someone else changed this contact — reload to see their change")
    visit.failed.clear()  # the 412 was the point
    alert.get_by_role("button", name="Reload").click()
    expect(panel.get_by_label("Name", exact=True)).to_have_value("Bruna")

    # The duplicate's link opens Ana's panel.
    panel.get_by_label("Phone").fill("51987654321")
    panel.get_by_role("button", name="Save").click()
    expect(alert).to_contain_text("A contact already has this phone: Ana Díaz")
    visit.failed.clear()
    alert.get_by_role("link", name="Ana Díaz").click()
    expect(page.get_by_role("dialog", name="Ana Díaz")).to_be_visible()
    expect(page.get_by_role("dialog")).to_have_count(1)  # Bruna's closed on the way
    assert first["name"]
    assert visit.settle() == []


def test_new_records_whatsapp_phone_and_grouped_amounts(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    api(server, account, "POST", "/api/contact", json={"name": "Ana", "email": "ana@example.com"})
    page = visit.page
    visit.goto("/console")
    sign_in(visit, account)
    page.get_by_role("button", name="New contact").click()
    dialog = page.get_by_role("dialog", name="New contact")
    dialog.get_by_label("Name", exact=True).fill("Carla")
    dialog.get_by_label("Channel").select_option(label="WhatsApp")
    dialog.get_by_role("button", name="Create").click()
    expect(dialog.get_by_role("alert")).to_have_text("WhatsApp contacts need a phone number")
    expect(dialog.get_by_label("Phone")).to_have_attribute("aria-invalid", "true")
    # Next to the field, the API's own message stays, the friendlier line after it.
    expect(dialog.locator(".field-error")).to_contain_text(
        "is required for WhatsApp contacts (platformId 2) — WhatsApp contacts need one"
    )
    visit.failed.clear()  # the 422 was the point
    dialog.get_by_role("button", name="Cancel").click()

    page.get_by_role("link", name="Opportunities").click()
    page.get_by_role("button", name="New opportunity").click()
    dialog = page.get_by_role("dialog", name="New opportunity")
    amount = dialog.get_by_label("Amount")
    expect(amount).to_have_accessible_description(re.compile("1,200.50"))
    dialog.get_by_label("Name", exact=True).fill("Seats")
    amount.fill("1,200")
    dialog.get_by_role("button", name="Create").click()
    expect(dialog).to_have_count(0)
    listed = api(server, account, "GET", "/api/opportunity")["data"]
    assert [(o["name"], o["amount"]) for o in listed] == [("Seats", 1200)]
    assert visit.settle() == []


def test_the_console_has_an_icon(visit: Visit) -> None:
    visit.goto("/console")
    href = visit.page.locator("link[rel=icon]").get_attribute("href")
    assert href and href.endswith("/console/static/favicon.svg")
    assert visit.page.request.get(visit.base_url + href).status == 200
    assert visit.settle() == []
