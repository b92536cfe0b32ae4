"""An opportunity import's dry run refuses the values the real run would: it sends nothing,
so it checks each row by the API's own field rules — a negative or too large amount, a
date that is not one — and counts what the real run then counts (contract G; E.2: a dry
run validates everything)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, summary, write_csv

pytestmark = pytest.mark.slow


def test_a_dry_run_fails_the_rows_the_real_run_fails(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    ws.call("POST", "/api/opportunity", json={"name": "Kept", "amount": 5})
    sample = write_csv(
        tmp_path / "o.csv",
        [
            ["name", "amount", "expirationDate"],
            ["Fine", "10", "2027-01-31T00:00:00Z"],
            ["Negative", "-5", ""],
            ["Too large", "11111111111111111111", ""],
            ["Far too large", "1e5000", ""],  # was a traceback: an int of 5,001 digits
            ["Not a date", "1", "notadate"],
            ["Kept", "-1", ""],  # an update of the one there, refused as well
        ],
    )
    failed: dict[str, list[str]] = {}
    for dry_run in (["--dry-run"], []):
        rejects = tmp_path / f"rejects{len(dry_run)}.csv"
        run = ws.cli("import", "opportunities", str(sample), "--rejects", str(rejects), *dry_run)
        assert run.exit_code == 1, run.output
        assert summary(run) == "created 1, updated 0, unchanged 0, failed 5", dry_run
        with rejects.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        failed[" ".join(dry_run)] = [row["name"] for row in rows]
        for row in rows:
            field = {"Not a date": "expirationDate"}.get(row["name"], "amount")
            assert f"{field}: " in row["error"], row
    assert (
        failed["--dry-run"]
        == failed[""]
        == ["Negative", "Too large", "Far too large", "Not a date", "Kept"]
    )
    assert sorted(o["name"] for o in ws.records("/api/opportunity")) == ["Fine", "Kept"]
