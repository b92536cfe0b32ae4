"""The sample of docs/import.md imports into a fresh workspace exactly as the page shows."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, summary

pytestmark = pytest.mark.slow


def _doc_sample() -> tuple[str, list[str], str]:
    """The sample of docs/import.md: the CSV, the command's arguments, its result line."""
    text = (Path(__file__).parents[2] / "docs" / "import.md").read_text(encoding="utf-8")
    section = text.split("## A sample file", 1)[1]
    csv_text = section.split("```csv\n", 1)[1].split("```", 1)[0]
    shell = section.split("```csv\n", 1)[1].split("```", 1)[1].split("```\n", 1)[1]
    shell = shell.split("```", 1)[0]
    lines = shell.strip().splitlines()
    command = " ".join(line.rstrip("\\").strip() for line in lines if line.startswith(("$", " ")))
    expected = [line for line in lines if not line.startswith(("$", " "))][-1]
    return csv_text, shlex.split(command.lstrip("$ ")), expected


def test_the_documented_sample_imports_as_shown(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    csv_text, argv, expected = _doc_sample()
    account = new_account(database_url)  # a workspace as `chatcrm init` makes it
    ws = Workspace(server, account.api_key, account.workspace_id)
    # What the demo's "Try it" line of a first `chatcrm serve` creates (cli/service.py).
    ws.call("POST", "/api/contact", json={"name": "Ana", "email": "ana@example.com"})
    assert argv[:3] == ["chatcrm", "import", "contacts"]
    (tmp_path / argv[3]).write_text(csv_text, encoding="utf-8")
    args: list[str] = []
    skip = {"--url", "--api-key", "--workspace"}
    words = iter(argv[3:])
    for word in words:
        if word in skip:
            next(words)
            continue
        args.append(str(tmp_path / word) if word.endswith(".csv") else word)
    run = ws.cli("import", "contacts", *args)
    assert run.exit_code == 0, (run.stdout, (tmp_path / "rejects.csv").read_text())
    assert summary(run) == expected == "created 3, updated 0, unchanged 0, failed 0"
