"""Live updates in the console (contract H), in chromium on both backends: what another tab
or a bot changes through the API shows on the open board within 2 s, without a reload,
through the events feed's long poll; signing out stops that poll."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, Request, Route, expect

from chatcrm.provisioning import NewAccount
from tests.browser.conftest import (
    Visit,
    answer_unavailable,
    api,
    create,
    refusing_first,
    sign_in,
    update,
)
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_MS = 2000  # the contract's bound


@pytest.fixture(scope="module")
def server(console_server: str) -> str:
    """The console's shared server on this run's backend (the visit fixture's server)."""
    return console_server


def _following(request: Request) -> bool:
    """The console's long poll of the events feed (it starts once the feed's end is known)."""
    return "/api/events" in request.url and "wait=" in request.url


def _open_console(visit: Visit, account: NewAccount) -> Page:
    visit.goto("/console")
    with visit.page.expect_request(_following):
        sign_in(visit, account)
    return visit.page


def test_changes_made_elsewhere_show_within_two_seconds(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    workspace = api(server, account, "GET", f"/api/workspace/{account.workspace_id}")
    first, second = workspace["contactStages"][:2]
    stage = workspace["opportunityStages"][0]
    ana = create(server, account, "contact", name="Ana", email="ana@example.com")
    bea = create(server, account, "contact", name="Bea", email="bea@example.com")
    deal = create(
        server, account, "opportunity", name="Deal", amount=100, contactId=ana, stageId=stage["id"]
    )

    page = _open_console(visit, account)
    column = page.get_by_role("region", name=first["name"], exact=True)
    other = page.get_by_role("region", name=second["name"], exact=True)
    expect(column.get_by_label("2 contacts")).to_have_text("2")

    update(server, account, "contact", ana, lastname="Diaz", lastMessage="Hi from the bot")
    card = column.get_by_role("article", name=re.compile(r"^Ana Diaz"))
    expect(card).to_contain_text("Hi from the bot", timeout=LIVE_MS)

    update(server, account, "contact", bea, stageId=second["id"])  # a stage move
    expect(other.get_by_role("article", name="Bea")).to_be_visible(timeout=LIVE_MS)
    expect(column.get_by_label("1 contacts")).to_have_text("1", timeout=LIVE_MS)
    expect(other.get_by_label("1 contacts")).to_have_text("1", timeout=LIVE_MS)

    create(server, account, "contact", name="Cid", email="cid@example.com", stageId=second["id"])
    expect(other.get_by_role("article", name="Cid")).to_be_visible(timeout=LIVE_MS)

    page.get_by_role("link", name="Opportunities").click()
    column = page.get_by_role("region", name=stage["name"], exact=True)
    expect(column.get_by_label("Total 100.00")).to_be_visible()
    update(server, account, "opportunity", deal, amount=250.5, winLossStatus=1)
    # Won: the card stays, outside the column's open total.
    expect(column.get_by_label("Total 0.00")).to_be_visible(timeout=LIVE_MS)
    expect(column.get_by_role("article", name="Deal")).to_contain_text("Won", timeout=LIVE_MS)
    assert visit.settle() == []

    # Signing out stops following the feed: its long poll is cut, none follows.
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Email")).to_be_visible()
    assert visit.settle() == []
    assert [r.url for r in visit.in_flight] == []


def test_signing_out_while_the_workspace_loads_leaves_it_unopened(
    visit: Visit, server: str, database_url: str
) -> None:
    """Sign out before the chosen workspace has loaded: the page stays signed out — no feed
    or board is asked for without credentials afterwards, no message is shown."""
    account = new_account(database_url)
    held: list[Route] = []
    opening = re.compile(r"/api/workspace/[^/?]+$")
    visit.page.route(opening, lambda route: held.append(route))
    visit.goto("/console")
    sign_in(visit, account)  # picks the workspace: its GET is held here
    page = visit.page
    expect(page.locator("main")).to_have_text("Loading…")
    for _ in range(100):  # the interception reaches this process with Playwright's events
        if held:
            break
        page.wait_for_timeout(50)
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("Email")).to_be_visible()
    assert len(held) == 1, "the workspace's GET was not held"
    held[0].fallback()  # the workspace's answer arrives after the sign-out
    assert visit.settle() == []
    expect(page.get_by_label("Email")).to_be_visible()
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.get_by_role("navigation", name="Console")).to_be_hidden()


def test_a_read_bringing_a_change_to_an_edited_field_is_not_taken_in(
    visit: Visit, server: str, database_url: str
) -> None:
    """An open panel reads the record when another field changes elsewhere; when that read
    already holds a change to the field being edited (made before its own event arrives),
    the panel must not take it in: Save then meets the other version (412) instead of
    overwriting that change unseen."""
    account = new_account(database_url)
    bruno = create(server, account, "contact", name="Bruno", email="bruno@example.com")
    page = _open_console(visit, account)
    page.get_by_role("article", name="Bruno").click()
    expect(page.get_by_role("dialog", name="Bruno")).to_be_visible()
    panel = page.locator("dialog.panel")  # its title follows the record
    panel.get_by_label("Last name").fill("Silva")

    changed: list[str] = []

    def change_meanwhile(route: Route) -> None:
        # The panel's read, once: the last name changes just before it is answered.
        if not changed:
            update(server, account, "contact", bruno, lastname="Souza")
            changed.append(route.request.url)
        route.fallback()

    page.route(re.compile(rf"/api/contact/{bruno}\?"), change_meanwhile)
    update(server, account, "contact", bruno, name="Bruna")
    for _ in range(100):  # the interception reaches this process with Playwright's events
        if changed:
            break
        page.wait_for_timeout(50)
    assert changed, "the panel did not read the record after the change elsewhere"
    page.wait_for_timeout(300)  # the read's answer and the last name's event reach the page
    panel.get_by_role("button", name="Save").click()
    alert = panel.get_by_role("alert")
    expect(alert).to_contain_text("reload to see their change")
    expect(alert.get_by_role("button", name="Reload")).to_be_visible()
    visit.failed.clear()  # the 412 was the point
    stored = api(server, account, "GET", f"/api/contact/{bruno}")["data"][0]
    assert stored["lastname"] == "Souza"


def test_closing_a_panel_gives_the_focus_back_to_its_card_drawn_again(
    visit: Visit, server: str, database_url: str
) -> None:
    """A keyboard user opens an unread contact's card with Enter: opening marks it read,
    whose event draws the board again under the panel. Escape gives the focus back to the
    card of that contact (the one drawn again), not to the page."""
    account = new_account(database_url)
    cid = create(server, account, "contact", name="Ida", email="ida@example.com")
    assert api(server, account, "GET", f"/api/contact/{cid}")["data"][0]["isRead"] is False
    page = _open_console(visit, account)
    card = page.get_by_role("article", name=re.compile("^Ida"))
    card.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog", name="Ida")).to_be_visible()
    expect(card).not_to_contain_text("Unread", timeout=LIVE_MS)  # drawn again, read
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(card).to_be_focused()
    assert visit.settle() == []


def test_a_live_reload_that_failed_is_tried_again_and_its_alert_goes(
    visit: Visit, server: str, database_url: str
) -> None:
    """One board read answered 503 left the board stale (the feed had passed the event
    that asked for it) and its alert up for good."""
    account = new_account(database_url)
    workspace = api(server, account, "GET", f"/api/workspace/{account.workspace_id}")
    first = workspace["contactStages"][0]
    page = _open_console(visit, account)
    column = page.get_by_role("region", name=first["name"], exact=True)
    expect(column.get_by_label("0 contacts")).to_have_text("0")
    once_unavailable, refused = refusing_first(answer_unavailable)
    page.route("**/api/contact/board*", once_unavailable)
    create(server, account, "contact", name="Eli", email="eli@example.com")
    alert = page.locator("p.error[role=alert]")
    expect(alert).to_contain_text("retry shortly", timeout=LIVE_MS)
    expect(column.get_by_role("article", name="Eli")).to_be_visible(timeout=5000)
    expect(alert).to_be_hidden()
    visit.failed.clear()  # the 503 was the point
    assert refused and visit.settle() == []


def test_a_view_whose_first_read_failed_is_read_again(
    visit: Visit, server: str, database_url: str
) -> None:
    """The first board read answered 503 (or never answered): only the alert was shown, for
    good, and no change made elsewhere ever came."""
    account = new_account(database_url)
    create(server, account, "contact", name="Ada", email="ada@example.com")
    # A 503, then no answer at all: the server out of reach.
    first_unavailable, refused = refusing_first(
        answer_unavailable, lambda route: route.abort("connectionrefused")
    )
    visit.page.route("**/api/contact/board*", first_unavailable)
    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    alert = page.locator("p.error[role=alert]")
    expect(alert).to_contain_text("retry shortly")
    expect(alert).to_contain_text("The server cannot be reached", timeout=5000)
    expect(page.get_by_role("article", name="Ada")).to_be_visible(timeout=5000)
    expect(alert).to_be_hidden()
    create(server, account, "contact", name="Bo", email="bo@example.com")
    expect(page.get_by_role("article", name="Bo")).to_be_visible(timeout=LIVE_MS)
    visit.failed.clear()  # the refusals were the point
    assert len(refused) == 2 and visit.settle() == []
