"""A variable's number comes back from a CSV export and import as it was sent (docs/api.md
3.4: numbers are kept exactly as sent): its JSON text, `1200.50`, `3.0`, `1E+2`, `-0.0`,
is the cell, and the cell is read back as that number, not a normalized one (`1200.5`,
`3`, `100`, `0`)."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest

from chatcrm.transfer.cells import read_variable, variable_text
from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, summary

NUMBERS = {"price": "1200.50", "ratio": "3.0", "hundred": "1E+2", "zero": "-0.0"}


@pytest.mark.parametrize("text", NUMBERS.values())
def test_a_number_cell_is_its_json_text_and_reads_back_to_it(text: str) -> None:
    value = Decimal(text)  # as the SDK reads a stored number
    assert variable_text(value) == text
    back = read_variable(text)
    assert type(back) is Decimal and str(back) == text


@pytest.mark.slow
def test_variable_numbers_survive_an_export_and_import_as_written(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    # Sent as JSON text, so that no encoder rewrites the numbers on the way.
    variables = ", ".join(f'{{"name": "{n}", "value": {t}}}' for n, t in NUMBERS.items())
    body = f'{{"name": "Kim", "email": "kim@example.com", "variables": [{variables}]}}'
    first.call("POST", "/api/contact", content=body, headers={"content-type": "application/json"})

    def stored(ws: Workspace) -> dict[str, str]:
        [contact] = ws.records("/api/contact", shape="full")
        # Money and numbers are read as Decimal (live.py), which keeps the digits as sent.
        return {v["name"]: str(v["value"]) for v in contact["variables"]}

    assert stored(first) == NUMBERS
    exported = tmp_path / "contacts.csv"
    assert first.cli("export", "contacts", "-o", str(exported)).exit_code == 0
    with exported.open(encoding="utf-8", newline="") as handle:
        [row] = list(csv.DictReader(handle))
    assert {name: row[f"var:{name}"] for name in NUMBERS} == NUMBERS
    lines = first.cli("export", "contacts", "--format", "jsonl")
    [record] = [json.loads(line, parse_float=Decimal) for line in lines.stdout.splitlines()]
    assert {name: str(record[f"var:{name}"]) for name in NUMBERS} == NUMBERS

    made = first.call("POST", "/api/workspace", json={"name": "Copy"})
    second = Workspace(server, account.api_key, made["id"])
    copied = second.cli("import", "contacts", str(exported))
    assert summary(copied) == "created 1, updated 0, unchanged 0, failed 0", copied.output
    assert stored(second) == NUMBERS
    back = first.cli("import", "contacts", str(exported))
    assert summary(back) == "created 0, updated 0, unchanged 1, failed 0", back.output
    assert stored(first) == NUMBERS


def test_a_variable_the_server_refuses_is_named_by_its_column(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """The server's refusal named the wire field (`variables[1].value`): the person had to
    count the file's `var:` columns from 0. The rejects file names the column."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    sample = tmp_path / "c.csv"
    sample.write_text("name,email,var:ok,var:code\nKim,kim@example.com,1,99999999999999999999\n")
    rejects = tmp_path / "rejects.csv"
    run = ws.cli("import", "contacts", str(sample), "--rejects", str(rejects))
    assert summary(run) == "created 0, updated 0, unchanged 0, failed 1", run.output
    with rejects.open(encoding="utf-8", newline="") as handle:
        [row] = list(csv.DictReader(handle))
    assert "var:code: must be a number" in row["error"], row["error"]
