"""The console's pipeline view (contract H): per opportunity stage the count and total amount,
and won vs lost totals by month, drawn as SVG — in chromium, on both backends; changes made
elsewhere redraw it within 2 s; a long stage name is cut with an ellipsis, never past the
chart's edge, its full name kept in a <title>."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Locator, Request, expect

from tests.browser.conftest import Visit, create, update
from tests.browser.test_console import _api, _sign_in, server
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]
__all__ = ["server"]  # the module's `chatcrm serve`, shared with the console's other tests


def test_the_pipeline_draws_stages_and_months(visit: Visit, server: str, database_url: str) -> None:
    account = new_account(database_url)
    ws = _api(server, account, "GET", f"/api/workspace/{account.workspace_id}")
    first, second = ws["opportunityStages"][:2]
    made = []
    for name, amount, stage in (("A", 1000, first), ("B", 250.5, first), ("C", 40, second)):
        body = {"name": name, "amount": amount, "stageId": stage["id"]}
        made.append(_api(server, account, "POST", "/api/opportunity", json=body)["id"])
    won = _api(
        server, account, "PUT", f"/api/opportunity?id={made[0]}&workspaceId={account.workspace_id}",
        json={"winLossStatus": 1},
    )["oportunity"]  # fmt: skip
    _api(
        server, account, "PUT", f"/api/opportunity?id={made[2]}&workspaceId={account.workspace_id}",
        json={"winLossStatus": 2},
    )  # fmt: skip

    visit.goto("/console#pipeline")
    _sign_in(visit, account)
    page = visit.page
    stages = page.get_by_role("figure", name="Opportunities by stage")
    expect(stages).to_be_visible()
    expect(stages.locator("svg")).to_be_visible()
    expect(stages.locator("svg")).to_contain_text(first["name"])
    # The open pipeline: the won and the lost deal count in their month only.
    expect(stages.locator("svg")).to_contain_text("1 · 250.50")
    expect(stages.locator("svg")).to_contain_text("0 · 0.00")
    # Each stage's row is told to a screen reader in words, one in the singular.
    expect(stages.locator("svg g.stage-row title").first).to_have_text(
        f"{first['name']}: 1 opportunity, total 250.50"
    )
    months = page.get_by_role("figure", name="Won and lost by month")
    expect(months.locator("svg rect.bar-won:not(.key)")).to_have_count(1)
    expect(months.locator("svg")).to_contain_text(won["winLossDate"][:7])
    table = page.get_by_role("table", name="Won and lost totals by month")
    row = table.get_by_role("row", name=won["winLossDate"][:7])
    expect(row.get_by_role("cell")).to_have_text(["1", "1,000.00", "1", "40.00"])
    # At phone width (docs/console.md) the table, 369 px at its desktop padding, made the
    # page 385 px wide and the charts with it: now nothing passes the screen.
    page.set_viewport_size({"width": 375, "height": 800})
    expect(row.get_by_role("cell").last).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    for figure in (stages, months):
        box = figure.bounding_box()
        assert box is not None and box["x"] + box["width"] <= 375, box
    page.set_viewport_size({"width": 1280, "height": 800})
    page.get_by_role("link", name="Contacts").click()
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    assert visit.settle() == []


LIVE_MS = 2000  # the contract's bound for live updates


def _following(request: Request) -> bool:
    """The console's long poll of the events feed (it starts once the feed's end is known)."""
    return "/api/events" in request.url and "wait=" in request.url


def test_the_pipeline_follows_changes_made_elsewhere(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    stage = _api(server, account, "GET", f"/api/workspace/{account.workspace_id}")[
        "opportunityStages"
    ][0]
    deal = create(server, account, "opportunity", name="Deal", amount=100, stageId=stage["id"])
    visit.goto("/console#pipeline")
    with visit.page.expect_request(_following):
        _sign_in(visit, account)
    svg = visit.page.get_by_role("figure", name="Opportunities by stage").locator("svg")
    expect(svg).to_contain_text("1 · 100.00")
    create(server, account, "opportunity", name="More", amount=50, stageId=stage["id"])
    expect(svg).to_contain_text("2 · 150.00", timeout=LIVE_MS)
    update(server, account, "opportunity", deal, winLossStatus=1)
    expect(svg).to_contain_text("1 · 50.00", timeout=LIVE_MS)
    table = visit.page.get_by_role("table", name="Won and lost totals by month")
    expect(table.get_by_role("row")).to_have_count(2, timeout=LIVE_MS)  # its month, won
    assert visit.settle() == []


def test_a_long_stage_name_is_cut_inside_the_chart(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    long = "Talks with the purchasing committee of the regional office " + "W" * 40
    ws = f"/api/workspace/{account.workspace_id}/stages"
    _api(server, account, "POST", ws, json={"kind": "opportunity", "name": long})
    visit.goto("/console#pipeline")
    _sign_in(visit, account)
    page = visit.page
    svg = page.get_by_role("figure", name="Opportunities by stage").locator("svg")
    expect(svg).to_be_visible()
    label = svg.locator("text.label").filter(has_text="Talks with")
    expect(label).to_have_count(1)
    shown = label.evaluate("t => t.lastChild.textContent")
    assert shown.endswith("…") and long.startswith(shown[:-1]), shown
    # Within the chart: it starts right of the SVG's left edge.
    assert label.evaluate("t => t.getBBox().x") >= 0
    expect(label.locator("title")).to_have_text(long)
    assert re.search("W{40}", svg.inner_html())  # the full name, in the <title>s
    assert visit.settle() == []


def _value_fits(svg: Locator, text: str) -> None:
    """The value label reads in full and ends inside the chart, in the SVG's own units and
    on the screen."""
    value = svg.locator("text.value").filter(has_text=text)
    expect(value).to_have_text(text)
    inside = """t => {
      const svg = t.ownerSVGElement, box = t.getBBox(), shown = t.getBoundingClientRect();
      return box.x + box.width <= svg.viewBox.baseVal.width
        && shown.right <= svg.getBoundingClientRect().right;
    }"""
    assert value.evaluate(inside), value.evaluate("t => t.ownerSVGElement.outerHTML")


def test_a_long_stage_total_is_shown_whole_inside_the_chart(
    visit: Visit, server: str, database_url: str
) -> None:
    """A total such as 1,000,000,001,347.0677 was cut at the chart's right edge (…1,347.06):
    the chart left 160 px after its longest bar, whatever its values."""
    account = new_account(database_url)
    stage = _api(server, account, "GET", f"/api/workspace/{account.workspace_id}")[
        "opportunityStages"
    ][0]
    create(server, account, "opportunity", name="Small", amount=1347.0677, stageId=stage["id"])
    visit.goto("/console#pipeline")
    with visit.page.expect_request(_following):
        _sign_in(visit, account)
    svg = visit.page.get_by_role("figure", name="Opportunities by stage").locator("svg")
    _value_fits(svg, "1 · 1,347.0677")
    # Short values keep the chart as it was: 160 px after the longest bar.
    assert svg.evaluate("s => s.viewBox.baseVal.width") == 180 + 420 + 160
    create(server, account, "opportunity", name="Big", amount=10**12, stageId=stage["id"])
    _value_fits(svg, "2 · 1,000,000,001,347.0677")  # drawn again live
    visit.page.reload()  # and drawn afresh
    svg = visit.page.get_by_role("figure", name="Opportunities by stage").locator("svg")
    _value_fits(svg, "2 · 1,000,000,001,347.0677")
    assert visit.settle() == []
