"""The console's pipeline view (contract H): per opportunity stage the count and total amount,
and won vs lost totals by month, drawn as SVG — in chromium, on both backends."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import Visit
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
    months = page.get_by_role("figure", name="Won and lost by month")
    expect(months.locator("svg rect.bar-won:not(.key)")).to_have_count(1)
    expect(months.locator("svg")).to_contain_text(won["winLossDate"][:7])
    table = page.get_by_role("table", name="Won and lost totals by month")
    row = table.get_by_role("row", name=won["winLossDate"][:7])
    expect(row.get_by_role("cell")).to_have_text(["1", "1,000.00", "1", "40.00"])
    page.get_by_role("link", name="Contacts").click()
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    assert visit.settle() == []
