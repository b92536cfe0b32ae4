"""A cell the service can never take (a NUL character, or a lone surrogate that a JSON cell
spells `\\ud800`) fails its own row, named by its column, before anything is sent: it
never takes the other rows of its batch with it, nor the whole run (contract G: a failed
row never stops the others)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, summary, write_csv

pytestmark = pytest.mark.slow

NUL = "the NUL character is not allowed"
SURROGATE = "a lone surrogate (\\ud800) is not a character and cannot be sent"


def rejected(path: Path) -> dict[str, str]:
    """The rejects file's rows: name → error (its line number cut off)."""
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["name"]: row["error"].split(": ", 1)[1] for row in csv.DictReader(handle)}


def test_contact_rows_holding_nul_fail_alone(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """In a plain cell, or spelled `\\u0000` in a JSON cell (a `var:` one, `variables`):
    the API would refuse the whole upsert batch for it."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    with_var = write_csv(
        tmp_path / "var.csv",
        [
            ["name", "lastname", "email", "var:city"],
            ["Before", "", "before@example.com", "Lima"],
            ["Nul", "So\x00to", "nul@example.com", ""],
            ["Nul var", "", "nulvar@example.com", '"Li\\u0000ma"'],
            ["After", "", "after@example.com", "Cusco"],
        ],
    )
    rejects = tmp_path / "rejects.csv"
    for dry_run in (["--dry-run"], []):
        run = ws.cli("import", "contacts", str(with_var), "--rejects", str(rejects), *dry_run)
        assert run.exit_code == 1, run.output
        assert summary(run) == "created 2, updated 0, unchanged 0, failed 2"
        assert rejected(rejects) == {"Nul": f"lastname: {NUL}", "Nul var": f"var:city: {NUL}"}
    assert sorted(c["name"] for c in ws.records("/api/contact")) == ["After", "Before"]

    variables = write_csv(
        tmp_path / "variables.csv",
        [
            ["name", "email", "variables"],
            ["V value", "v1@example.com", '[{"name": "a", "value": "x\\u0000"}]'],
            ["V name", "v2@example.com", '[{"name": "a\\u0000", "value": 1}]'],
            ["V fine", "v3@example.com", '[{"name": "a", "value": "ok"}]'],
        ],
    )
    run = ws.cli("import", "contacts", str(variables), "--rejects", str(rejects))
    assert summary(run) == "created 1, updated 0, unchanged 0, failed 2", run.output
    assert rejected(rejects) == {"V value": f"variables: {NUL}", "V name": f"variables: {NUL}"}

    # A var: column whose variable's name holds a NUL would fail every row: the file is
    # refused before anything is sent.
    bad_header = write_csv(
        tmp_path / "header.csv", [["name", "email", "var:ci\x00ty"], ["H", "h@example.com", "1"]]
    )
    run = ws.cli("import", "contacts", str(bad_header))
    assert run.exit_code == 2, run.output
    assert run.stderr == f'chatcrm: error: column "var:ci\\x00ty": {NUL}\n'
    assert "H" not in {c["name"] for c in ws.records("/api/contact")}


def test_a_json_cell_spelling_a_lone_surrogate_fails_its_row_alone(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """`"\\ud800"` reads as half a UTF-16 pair, which has no UTF-8: it would stop the run."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    with_var = write_csv(
        tmp_path / "var.csv",
        [
            ["name", "email", "var:code"],
            ["Before", "before@example.com", "1"],
            ["Surrogate", "surrogate@example.com", '"\\ud800"'],
            ["Pair", "pair@example.com", '"\\ud83d\\ude00"'],  # a whole pair: 😀
        ],
    )
    rejects = tmp_path / "rejects.csv"
    for dry_run in (["--dry-run"], []):
        run = ws.cli("import", "contacts", str(with_var), "--rejects", str(rejects), *dry_run)
        assert run.exit_code == 1, run.output
        assert summary(run) == "created 2, updated 0, unchanged 0, failed 1"
        assert rejected(rejects) == {"Surrogate": f"var:code: {SURROGATE}"}
    contacts = {c["name"]: c for c in ws.records("/api/contact", shape="full")}
    assert sorted(contacts) == ["Before", "Pair"]
    assert contacts["Pair"]["variables"] == [{"name": "code", "value": "\U0001f600"}]

    variables = write_csv(
        tmp_path / "variables.csv",
        [
            ["name", "email", "variables"],
            ["V value", "v1@example.com", '[{"name": "a", "value": ["\\ud800"]}]'],
            ["V name", "v2@example.com", '[{"name": "\\ud800", "value": 1}]'],
            ["V fine", "v3@example.com", '[{"name": "a", "value": "ok"}]'],
        ],
    )
    run = ws.cli("import", "contacts", str(variables), "--rejects", str(rejects))
    assert summary(run) == "created 1, updated 0, unchanged 0, failed 2", run.output
    assert rejected(rejects) == {
        "V value": f"variables: {SURROGATE}",
        "V name": f"variables: {SURROGATE}",
    }


def test_opportunity_rows_holding_nul_fail_alone_naming_the_column(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    ws.call("POST", "/api/contact", json={"name": "Kim", "email": "kim@example.com"})
    sample = write_csv(
        tmp_path / "o.csv",
        [
            ["name", "amount", "description", "contact"],
            ["Deal\x00", "1", "", ""],
            ["Described", "2", "a\x00b", ""],
            ["Of nobody", "3", "", "kim\x00@example.com"],
            ["Fine", "4", "", "kim@example.com"],
        ],
    )
    rejects = tmp_path / "rejects.csv"
    run = ws.cli("import", "opportunities", str(sample), "--rejects", str(rejects))
    assert run.exit_code == 1, run.output
    assert summary(run) == "created 1, updated 0, unchanged 0, failed 3"
    assert rejected(rejects) == {
        "Deal\x00": f"name: {NUL}",
        "Described": f"description: {NUL}",
        "Of nobody": f"contact: {NUL}",
    }
    assert [o["name"] for o in ws.records("/api/opportunity")] == ["Fine"]
