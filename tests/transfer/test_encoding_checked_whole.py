"""A file that stops being UTF-8 past its start is refused before any row is sent (exit 2,
docs/import.md: "a bad file or option, before any row is sent: … not UTF-8"), naming the
line that holds the bad byte; it was half imported, then stopped, with a line number
the decoder's chunks had moved."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatcrm.transfer.csv_source import open_csv
from chatcrm.transfer.problems import BadInput
from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace

GOOD_ROWS = 3_000  # past the first 64 Ki characters open_csv reads


def _late_latin1(path: Path, newline: bytes = b"\n") -> tuple[Path, int]:
    """GOOD_ROWS UTF-8 rows (one cell holds a newline), a Latin-1 row, more rows; the
    Latin-1 row's line."""
    lines = [b"name,email,lastname"]
    lines.append(b'Multi,multi@example.com,"two' + newline + b'lines"')
    lines += [f"Row {i},row{i}@example.com,Pérez".encode() for i in range(GOOD_ROWS)]
    bad_line = len(lines) + 2  # the quoted newline makes one more line
    lines.append("José,jose@example.com,Núñez".encode("latin-1"))
    lines += [f"After {i},after{i}@example.com,".encode() for i in range(10)]
    path.write_bytes(newline.join(lines) + newline)
    return path, bad_line


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_the_whole_file_is_checked_and_the_bad_line_named(tmp_path: Path, newline: bytes) -> None:
    path, bad_line = _late_latin1(tmp_path / "late.csv", newline)
    source = open_csv(path)  # the start is UTF-8
    with pytest.raises(BadInput) as caught:
        source.count_rows()
    assert str(caught.value) == f"{path}: not UTF-8 at line {bad_line} (save it as UTF-8 CSV)"
    with pytest.raises(BadInput) as again:
        list(source.rows())
    assert str(again.value) == str(caught.value)


def test_a_bad_start_names_its_line_too(tmp_path: Path) -> None:
    path = tmp_path / "latin.csv"
    path.write_bytes("name\nAna\nJosé\n".encode("latin-1"))
    with pytest.raises(BadInput, match="not UTF-8 at line 3 "):
        open_csv(path)


@pytest.mark.slow
def test_a_file_not_utf8_past_its_start_sends_no_row(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    path, bad_line = _late_latin1(tmp_path / "late.csv")
    rejects = tmp_path / "rejects.csv"
    run = ws.cli("import", "contacts", str(path), "--rejects", str(rejects))
    assert run.exit_code == 2, run.output
    assert ws.records("/api/contact") == []
    assert not rejects.exists()
    assert run.stdout == ""  # no summary: nothing was done
    assert run.stderr.strip() == (
        f"chatcrm: error: {path}: not UTF-8 at line {bad_line} (save it as UTF-8 CSV)"
    )
