"""The console's two boards (contract H) in chromium, on both backends, as a person uses
them: columns with counts and totals, cards with what they show, the search box, "Load
more", and cards dragged to another column or place, saved with If-Match; a drop the
server refuses puts the card back and says why."""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, Route, expect

from chatcrm.provisioning import NewAccount
from tests.browser.conftest import Visit, api, create, sign_in, update
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def server(console_server: str) -> str:
    """The console's shared server on this run's backend (the visit fixture's server)."""
    return console_server


def _workspace(server: str, account: NewAccount) -> dict[str, Any]:
    found: dict[str, Any] = api(server, account, "GET", f"/api/workspace/{account.workspace_id}")
    return found


def _named(server: str, account: NewAccount, name: str, stage_id: str) -> str:
    """A contact with an email, in that stage."""
    email = f"{name.lower()}@example.com"
    return create(server, account, "contact", name=name, email=email, stageId=stage_id)


def _column(page: Page, name: str) -> Locator:
    return page.get_by_role("region", name=name, exact=True)


def _card_names(column: Locator) -> list[str]:
    return column.locator("article h4").all_inner_texts()


def test_both_boards_with_their_cards_counts_totals_and_search(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    workspace = _workspace(server, account)
    first, second = workspace["contactStages"][:2]
    early, late = workspace["opportunityStages"][:2]
    ws = f"/api/workspace/{account.workspace_id}"
    tag = api(server, account, "POST", f"{ws}/tags", json={"name": "VIP", "color": "#dd3333"})
    agent = api(server, account, "POST", f"{ws}/agents", json={"name": "Marta", "email": "m@x.io"})
    ana = create(
        server, account, "contact", name="Ana", lastname="Diaz", platformId=2, phone="51987654321",
        tags=[tag["id"]], assignedAgentId=agent["id"],
    )  # fmt: skip
    update(server, account, "contact", ana, lastMessage="Do you have it in blue?", isSolved=True)
    for name in ("Bea", "Cid"):
        _named(server, account, name, second["id"])
    linked = {"contactId": ana, "stageId": early["id"]}
    create(server, account, "opportunity", name="Big deal", amount=2000.5, **linked)
    small = create(server, account, "opportunity", name="Small deal", amount=500.25, **linked)
    update(server, account, "opportunity", small, winLossStatus=1)
    gone = create(server, account, "opportunity", name="Gone deal", amount=100, stageId=late["id"])
    update(server, account, "opportunity", gone, winLossStatus=2)

    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    column = _column(page, first["name"])
    card = column.get_by_role("article", name=re.compile(r"^Ana Diaz"))
    for shown in ("+51 987 654 321", "VIP", "Marta", "Do you have it in blue?", "Solved"):
        expect(card).to_contain_text(shown)
    chip = card.get_by_role("listitem").filter(has_text="VIP")
    assert chip.evaluate("e => getComputedStyle(e).getPropertyValue('--tag-color')") == "#dd3333"
    expect(column.get_by_label("1 contacts")).to_have_text("1")
    expect(_column(page, second["name"]).get_by_label("2 contacts")).to_have_text("2")

    # The search filters every column, counts included, and outlives a change of view.
    page.get_by_label("Search").fill("bea")
    expect(column.get_by_label("0 contacts")).to_have_text("0")
    expect(_column(page, second["name"]).get_by_role("article")).to_have_count(1)
    expect(_column(page, second["name"]).get_by_label("1 contacts")).to_be_visible()

    page.get_by_role("link", name="Opportunities").click()
    column = _column(page, early["name"])
    # The open pipeline: the won card stays in its column, outside its count and total.
    expect(column.get_by_label("1 opportunities")).to_have_text("1")
    expect(column.get_by_label("Total 2,000.50")).to_have_text("2,000.50")
    big = column.get_by_role("article", name=re.compile(r"^Big deal"))
    expect(big).to_contain_text(re.compile(r"OPP-\d{4}-0001"))
    expect(big).to_contain_text("2,000.50")
    expect(big).to_contain_text("Ana Diaz")  # the contact, by name
    expect(column.get_by_role("article", name=re.compile(r"^Small deal"))).to_contain_text("Won")
    other = _column(page, late["name"])
    expect(other.get_by_role("article", name=re.compile(r"^Gone deal"))).to_contain_text("Lost")
    expect(other.get_by_label("Total 0.00")).to_be_visible()
    page.get_by_label("Search").press_sequentially("small")
    page.get_by_label("Search").press("Enter")
    expect(column.get_by_role("article")).to_have_count(1)  # the won card, outside the figures
    expect(column.get_by_label("0 opportunities")).to_be_visible()
    expect(column.get_by_label("Total 0.00")).to_be_visible()

    page.get_by_role("link", name="Contacts").click()
    expect(page.get_by_label("Search")).to_have_value("bea")
    expect(_column(page, second["name"]).get_by_role("article")).to_have_count(1)
    page.get_by_label("Search").fill("")
    expect(_column(page, second["name"]).get_by_role("article")).to_have_count(2)

    # At phone width the columns stack, nothing wider than the screen; a card is there to tap.
    page.set_viewport_size({"width": 390, "height": 844})
    card = _column(page, first["name"]).get_by_role("article", name=re.compile(r"^Ana Diaz"))
    expect(card).to_be_in_viewport()
    top, below = (_column(page, s["name"]).bounding_box() for s in (first, second))
    assert top is not None and below is not None and below["y"] > top["y"] + top["height"]
    for box in (top, below, card.bounding_box()):
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    board = page.get_by_role("region", name="Contacts board")
    assert board.evaluate("e => e.scrollWidth <= e.clientWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    card.click()  # Playwright checks that the card itself receives the click
    assert visit.settle() == []


def _drop_at_end(card: Locator, column: Locator) -> None:
    box = column.bounding_box()
    assert box is not None
    card.drag_to(column, target_position={"x": box["width"] / 2, "y": box["height"] - 4})


def test_load_more_and_cards_dragged_to_another_column_and_place(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    first, second = _workspace(server, account)["contactStages"][:2]
    leads = [{"name": f"Lead {n:02}", "email": f"lead{n}@example.com"} for n in range(55)]
    done = api(server, account, "POST", "/api/contact/upsert-batch", json={"contacts": leads})
    assert done["created"] == 55
    lead = {r["index"]: r["id"] for r in done["results"]}
    for name in ("Xavi", "Yola"):
        _named(server, account, name, second["id"])

    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    column, other = _column(page, first["name"]), _column(page, second["name"])
    expect(column.get_by_label("55 contacts")).to_have_text("55")
    expect(column.get_by_role("article")).to_have_count(50)
    column.get_by_role("button", name="Load more").click()
    expect(column.get_by_role("article")).to_have_count(55)
    expect(column.get_by_role("button", name="Load more")).to_be_hidden()
    expect(other.get_by_role("button", name="Load more")).to_be_hidden()

    # To the end of another column: that stage, after its last card.
    _drop_at_end(column.get_by_role("article", name="Lead 00"), other)
    expect(other.get_by_label("3 contacts")).to_have_text("3")
    expect(column.get_by_label("54 contacts")).to_have_text("54")
    assert _card_names(other) == ["Xavi", "Yola", "Lead 00"]
    moved = api(server, account, "GET", f"/api/contact/{lead[0]}")["data"][0]
    assert (moved["stageId"], moved["orderInCards"]) == (second["id"], 2)

    # Before the first card of its column (position 0, no room): the others move down.
    xavi = other.get_by_role("article", name="Xavi")
    other.get_by_role("article", name="Lead 00").drag_to(xavi, target_position={"x": 20, "y": 3})
    expect(other.locator("article h4").first).to_have_text("Lead 00")
    # Before the first card of a column with room before it (Lead 00 left position 0).
    target = column.get_by_role("article", name="Lead 01")
    column.get_by_role("article", name="Lead 10").drag_to(target, target_position={"x": 20, "y": 3})
    expect(column.locator("article h4").first).to_have_text("Lead 10")
    assert visit.settle() == []
    placed = api(server, account, "GET", f"/api/contact/{lead[10]}")["data"][0]
    assert placed["orderInCards"] == 0
    assert api(server, account, "GET", f"/api/contact/{lead[1]}")["data"][0]["orderInCards"] == 1

    # The position rule itself (the page's module): gaps used, repeats and no room pushed.
    rule = page.evaluate(
        """async (cases) => {
            const { placement } = await import("/console/static/moves.js");
            return cases.map(([orders, index]) => placement(orders, index));
        }""",
        [[[], 0], [[3, 5], 2], [[3, 5], 1], [[4], 0], [[0, 1], 0], [[5, 5, 5], 1]],
    )
    assert rule == [
        {"order": 0, "shifts": []},
        {"order": 6, "shifts": []},
        {"order": 4, "shifts": []},
        {"order": 3, "shifts": []},
        {"order": 0, "shifts": [{"index": 1, "order": 2}, {"index": 0, "order": 1}]},
        {"order": 6, "shifts": [{"index": 2, "order": 8}, {"index": 1, "order": 7}]},
    ]

    page.reload()
    other = _column(page, second["name"])
    expect(other.get_by_role("article")).to_have_count(3)
    assert _card_names(other) == ["Lead 00", "Xavi", "Yola"]
    expect(_column(page, first["name"]).get_by_role("article")).to_have_count(50)
    assert _card_names(_column(page, first["name"]))[:3] == ["Lead 10", "Lead 01", "Lead 02"]
    assert visit.settle() == []


def test_a_won_card_dragged_leaves_the_open_figures_as_they_are(
    visit: Visit, server: str, database_url: str
) -> None:
    """Contract N: a stage's count and total are its open opportunities; a won card moved
    to another stage changes neither column's, on the page as on the server."""
    account = new_account(database_url)
    early, late = _workspace(server, account)["opportunityStages"][:2]
    opened = create(
        server, account, "opportunity", name="Open deal", amount=300, stageId=early["id"]
    )
    won = create(server, account, "opportunity", name="Won deal", amount=1000, stageId=early["id"])
    update(server, account, "opportunity", won, winLossStatus=1)

    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    page.get_by_role("link", name="Opportunities").click()
    column, other = _column(page, early["name"]), _column(page, late["name"])

    def figures(count: int, total: str, later: int, later_total: str) -> None:
        expect(column.get_by_label(f"{count} opportunities")).to_have_text(str(count))
        expect(column.get_by_label(f"Total {total}")).to_have_text(total)
        expect(other.get_by_label(f"{later} opportunities")).to_have_text(str(later))
        expect(other.get_by_label(f"Total {later_total}")).to_have_text(later_total)

    figures(1, "300.00", 0, "0.00")
    _drop_at_end(column.get_by_role("article", name=re.compile(r"^Won deal")), other)
    expect(other.get_by_role("article", name=re.compile(r"^Won deal"))).to_be_visible()
    assert visit.settle() == []
    assert (
        api(server, account, "GET", f"/api/opportunity/{won}")["data"][0]["stageId"] == late["id"]
    )
    figures(1, "300.00", 0, "0.00")
    _drop_at_end(column.get_by_role("article", name=re.compile(r"^Open deal")), other)
    figures(0, "0.00", 1, "300.00")
    assert visit.settle() == []
    assert (
        api(server, account, "GET", f"/api/opportunity/{opened}")["data"][0]["stageId"]
        == late["id"]
    )
    page.reload()
    column, other = _column(page, early["name"]), _column(page, late["name"])
    figures(0, "0.00", 1, "300.00")
    expect(other.get_by_role("article")).to_have_count(2)
    assert visit.settle() == []


def test_a_drop_on_a_stale_card_goes_back_with_the_apis_message(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    first, second = _workspace(server, account)["contactStages"][:2]
    ana = create(server, account, "contact", name="Ana", email="ana@example.com")
    bea = create(
        server, account, "contact", name="Bea", email="bea@example.com", stageId=second["id"]
    )
    bea_before = api(server, account, "GET", f"/api/contact/{bea}")["data"][0]

    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    column, other = _column(page, first["name"]), _column(page, second["name"])
    card = column.get_by_role("article", name="Ana")
    expect(card).to_be_visible()

    def changed_elsewhere_first(route: Route) -> None:
        if route.request.method == "PUT":  # someone else saves the card just before
            update(server, account, "contact", ana, lastMessage="Changed in another tab")
        route.fallback()

    page.route(re.compile(r"/api/contact\?"), changed_elsewhere_first)
    # Before Bea, at position 0: Bea would move down, but only once Ana is saved.
    card.drag_to(other.get_by_role("article", name="Bea"), target_position={"x": 20, "y": 3})
    expect(page.get_by_role("alert")).to_contain_text(
        "Someone else changed this contact just before — it is back where it was, with their change"
    )
    expect(column.get_by_role("article", name="Ana")).to_be_visible()
    expect(other.get_by_role("article")).to_have_count(1)
    expect(column.get_by_label("1 contacts")).to_have_text("1")
    # The feed then brings the other tab's change, and the message stays.
    expect(column.get_by_role("article", name="Ana")).to_contain_text("Changed in another tab")
    expect(page.get_by_role("alert")).to_contain_text(
        "Someone else changed this contact just before — it is back where it was, with their change"
    )
    # Followed by the API's own message, which names the versions (contract H).
    expect(page.get_by_role("alert")).to_contain_text("The record has changed")
    stored = api(server, account, "GET", f"/api/contact/{ana}")["data"][0]
    assert stored["stageId"] == first["id"]
    # Nothing else changed either: Bea kept her place (and version), no event of hers.
    assert api(server, account, "GET", f"/api/contact/{bea}")["data"][0] == bea_before
    history = api(server, account, "GET", f"/api/contact/{bea}/history")["events"]
    assert [e["type"] for e in history] == ["contact.created"]
    assert [f for f in visit.failed if "412" not in f] == []
    visit.failed.clear()  # the 412 was the point
    assert visit.settle() == []


def test_a_long_unbroken_name_wraps_inside_its_column(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    lastname = "Q" * 105  # no space to break at
    create(server, account, "contact", name="Ana", lastname=lastname, email="ana@example.com")
    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    card = page.get_by_role("article", name=re.compile(r"^Ana Q"))
    expect(card).to_be_visible()
    column = page.locator("section.column").filter(has=card)
    card_box, column_box = card.bounding_box(), column.bounding_box()
    assert card_box is not None and column_box is not None
    assert card_box["width"] <= column_box["width"], (card_box, column_box)
    assert card_box["x"] + card_box["width"] <= column_box["x"] + column_box["width"] + 1
    # And in its panel, the heading stays within the panel.
    card.click()
    panel = page.get_by_role("dialog", name=re.compile(r"^Ana Q"))
    heading = panel.get_by_role("heading", name=re.compile(r"^Ana Q"))
    panel_box, heading_box = panel.bounding_box(), heading.bounding_box()
    assert panel_box is not None and heading_box is not None
    assert heading_box["x"] + heading_box["width"] <= panel_box["x"] + panel_box["width"]
    assert visit.settle() == []


def test_load_more_from_the_keyboard_keeps_its_place(
    visit: Visit, server: str, database_url: str
) -> None:
    """ "Load more" was disabled while it loaded, which took the focus from it: a second
    Enter did nothing. It keeps the focus, and when no page is left the first card it
    brought has it."""
    account = new_account(database_url)
    first = _workspace(server, account)["contactStages"][0]
    leads = [{"name": f"Key {n:03}", "email": f"key{n}@example.com"} for n in range(110)]
    api(server, account, "POST", "/api/contact/upsert-batch", json={"contacts": leads})
    visit.goto("/console")
    sign_in(visit, account)
    column = _column(visit.page, first["name"])
    expect(column.get_by_role("article")).to_have_count(50)
    more = column.get_by_role("button", name="Load more")
    more.focus()
    visit.page.keyboard.press("Enter")
    expect(column.get_by_role("article")).to_have_count(100)
    expect(more).to_be_focused()
    visit.page.keyboard.press("Enter")
    expect(column.get_by_role("article")).to_have_count(110)
    expect(more).to_be_hidden()
    expect(column.get_by_role("article").nth(100)).to_be_focused()
    assert visit.settle() == []


def test_a_save_in_a_panel_keeps_the_cards_loaded_and_the_focus(
    visit: Visit, server: str, database_url: str
) -> None:
    """A save in a panel drew the board again from its first pages: the cards brought by
    "Load more" were gone, and the keyboard's focus with the card it came from."""
    account = new_account(database_url)
    first = _workspace(server, account)["contactStages"][0]
    leads = [{"name": f"Deep {n:03}", "email": f"deep{n}@example.com"} for n in range(70)]
    api(server, account, "POST", "/api/contact/upsert-batch", json={"contacts": leads})
    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    column = _column(page, first["name"])
    expect(column.get_by_role("article")).to_have_count(50)
    column.get_by_role("button", name="Load more").click()
    expect(column.get_by_role("article")).to_have_count(70)
    card = column.get_by_role("article", name="Deep 065")
    card.focus()
    page.keyboard.press("Enter")
    panel = page.get_by_role("dialog", name="Deep 065")
    panel.get_by_label("Last name").fill("Saved")
    panel.get_by_role("button", name="Save").click()
    expect(panel.get_by_role("status")).to_contain_text("Saved")
    expect(column.get_by_role("article", name="Deep 065 Saved")).to_be_visible()
    expect(column.get_by_role("article")).to_have_count(70)
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()
    expect(column.get_by_role("article", name="Deep 065 Saved")).to_be_focused()
    assert visit.settle() == []


def test_a_card_saved_whose_push_down_failed_says_so_and_the_message_stays(
    visit: Visit, server: str, database_url: str
) -> None:
    """The dropped card saved, the card it pushed down changed elsewhere (412): the
    message said the card went back, and vanished when the board was drawn again."""
    account = new_account(database_url)
    first, second = _workspace(server, account)["contactStages"][:2]
    ana = _named(server, account, "Ana", first["id"])
    bea = _named(server, account, "Bea", second["id"])  # position 0 of its column
    visit.goto("/console")
    sign_in(visit, account)
    page = visit.page
    column, other = _column(page, first["name"]), _column(page, second["name"])
    expect(column.get_by_role("article", name="Ana")).to_be_visible()

    def bea_changed_elsewhere_first(route: Route) -> None:
        if route.request.method == "PUT" and bea in route.request.url:
            update(server, account, "contact", bea, lastMessage="Changed in another tab")
        route.fallback()

    page.route(re.compile(r"/api/contact\?"), bea_changed_elsewhere_first)
    column.get_by_role("article", name="Ana").drag_to(
        other.get_by_role("article", name="Bea"), target_position={"x": 20, "y": 3}
    )
    alert = page.get_by_role("alert")
    said = "The contact is saved at its new place, but a card below it could not be moved down"
    expect(alert).to_contain_text(said)
    expect(other.get_by_role("article", name="Bea")).to_contain_text("Changed in another tab")
    expect(other.get_by_role("article")).to_have_count(2)
    page.wait_for_timeout(1500)  # the board read again, and the feed's change: still said
    expect(alert).to_contain_text(said)
    expect(alert).to_contain_text("The record has changed")
    stored = api(server, account, "GET", f"/api/contact/{ana}")["data"][0]
    assert (stored["stageId"], stored["orderInCards"]) == (second["id"], 0)
    assert visit.settle(expected=("412 ",)) == []
