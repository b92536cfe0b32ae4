"""An opportunity import remembers, for the whole run, which opportunities its rows have
made or matched (docs/import.md: a row matches a live opportunity "that no other row of
this import has matched yet"). Only a bounded number of contacts' opportunities is kept
in memory; a contact dropped from it and listed again must not give back as free an
opportunity a row took: the later row of the same contact and name would update it
instead of making its own (two deals become one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcrm.transfer import opportunity_import
from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, summary, write_csv

pytestmark = pytest.mark.slow


def test_rows_of_one_name_far_apart_stay_two_opportunities(
    server: Server, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small: 2 contacts in memory, rows applied one window of 1 at a time, so that the
    # other contacts between the two Renewal rows push Kim out (10,000 in a real run).
    monkeypatch.setattr(opportunity_import, "CACHE_CONTACTS", 2)
    monkeypatch.setattr(opportunity_import, "WINDOW_ROWS", 1)
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    emails = ["kim@example.com", *(f"other{i}@example.com" for i in range(3))]
    for email in emails:
        ws.call("POST", "/api/contact", json={"name": email.split("@")[0], "email": email})
    # Kim already has one Renewal: the first row is unchanged, taking it.
    kim = ws.records("/api/contact", q="kim")[0]["id"]
    ws.call("POST", "/api/opportunity", json={"name": "Renewal", "amount": 100, "contactId": kim})
    rows = [
        ["name", "amount", "contact"],
        ["Renewal", "100", "kim@example.com"],
        ["New", "1", "kim@example.com"],  # made by this run
        *(["Other", "5", email] for email in emails[1:]),
        ["Renewal", "200", "kim@example.com"],  # the first one is taken: a second deal
        ["New", "2", "kim@example.com"],  # the one made above is taken: another
    ]
    sample = write_csv(tmp_path / "o.csv", rows)
    for dry_run in (["--dry-run"], []):
        run = ws.cli("import", "opportunities", str(sample), *dry_run)
        assert summary(run) == "created 6, updated 0, unchanged 1, failed 0", run.output
    mine = sorted(
        (o["name"], str(o["amount"]))
        for o in ws.records("/api/opportunity")
        if o["contactId"] == kim
    )
    assert mine == [("New", "1"), ("New", "2"), ("Renewal", "100"), ("Renewal", "200")]
    # A second run of the same file changes nothing.
    again = ws.cli("import", "opportunities", str(sample))
    assert summary(again) == "created 0, updated 0, unchanged 7, failed 0", again.output
