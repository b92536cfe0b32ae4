"""A rejects file can be fixed and imported as it is (docs/import.md), also when the file
read had a spreadsheet's nameless columns at the end of its header (`name,email,,`): those
are left out of the rejects file, with the empty cells under them, since a nameless column
before the `error` one would be refused on reading it back."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from chatcrm.transfer.csv_source import Row
from chatcrm.transfer.outcome import Rejects
from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, summary, write_csv


def _read(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.reader(handle))


def test_trailing_nameless_columns_are_left_out(tmp_path: Path) -> None:
    path = tmp_path / "rejects.csv"
    rejects = Rejects(path, ["name", "email", "", " "], ",")
    rejects.write(Row(1, ["Bad", "not-an-email", "", ""], 2), "email: bad")
    rejects.write(Row(2, ["Short", "x"], 3), "email: bad")
    # Something under a nameless column is an extra cell (why the row failed): kept, after
    # the error, as the extra cells of any row longer than its header.
    rejects.write(Row(3, ["Lost", "l@example.com", "", "data"], 4), "the row has 4 cells")
    rejects.close()
    assert _read(path) == [
        ["name", "email", "error"],
        ["Bad", "not-an-email", "line 2: email: bad"],
        ["Short", "x", "line 3: email: bad"],
        ["Lost", "l@example.com", "line 4: the row has 4 cells", "", "data"],
    ]


@pytest.mark.slow
def test_a_rejects_file_of_a_file_with_nameless_columns_imports_again(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    sample = write_csv(
        tmp_path / "in.csv",
        [
            ["name", "email", "", ""],
            ["Good", "good@example.com", "", ""],
            ["Bad", "not-an-email", "", ""],
        ],
    )
    rejects = tmp_path / "rejects.csv"
    run = ws.cli("import", "contacts", str(sample), "--rejects", str(rejects))
    assert summary(run) == "created 1, updated 0, unchanged 0, failed 1", run.output
    rows = _read(rejects)
    assert rows[0] == ["name", "email", "error"]
    assert rows[1][:2] == ["Bad", "not-an-email"] and len(rows[1]) == 3
    rows[1][1] = "fixed@example.com"
    write_csv(rejects, rows)
    again = ws.cli("import", "contacts", str(rejects))
    assert again.exit_code == 0, again.output
    assert summary(again) == "created 1, updated 0, unchanged 0, failed 0"
    assert sorted(c["name"] for c in ws.records("/api/contact")) == ["Bad", "Good"]


@pytest.mark.slow
@pytest.mark.parametrize("through", ["same path", "a link"])
def test_a_rejects_file_that_is_the_file_imported_is_refused(
    server: Server, database_url: str, tmp_path: Path, through: str
) -> None:
    """Opening the rejects file emptied the file being imported before it was read, and
    the import then said `failed 0`, exit 0."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    sample = write_csv(tmp_path / "in.csv", [["name", "email"], ["Bad", "not-an-email"]])
    before = sample.read_bytes()
    rejects = sample
    if through == "a link":
        rejects = tmp_path / "rejects.csv"
        rejects.symlink_to(sample)
    run = ws.cli("import", "contacts", str(sample), "--rejects", str(rejects))
    assert run.exit_code == 2, run.output
    assert f"{rejects}: --rejects names the file being imported; name another file" in run.output
    assert sample.read_bytes() == before
