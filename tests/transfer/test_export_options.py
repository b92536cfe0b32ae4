"""A bad value of any export filter option is exit 2 with one line naming the option
(contract G: "2 for a bad file or option"), found before the export starts: no file is
written, and an existing one is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace

pytestmark = pytest.mark.slow

# A lone surrogate: what Python makes of a command-line byte that is not UTF-8 (0xff).
NOT_UTF8 = "\udcff"

BAD_OPTIONS = [
    ("contacts", ["--updated-since", "notadate"], "--updated-since"),
    ("opportunities", ["--updated-since", "2025-13-45"], "--updated-since"),
    ("contacts", ["--q", f"caf{NOT_UTF8}"], "--q"),
    ("opportunities", ["--q", NOT_UTF8], "--q"),
    ("contacts", ["--stage", "No such stage"], "--stage"),
    ("opportunities", ["--stage", NOT_UTF8], "--stage"),
    ("contacts", ["--agent", "nobody@example.com"], "--agent"),
    ("opportunities", ["--agent", "nobody@example.com"], "--agent"),
    ("contacts", ["--tag", "No such tag"], "--tag"),
    ("opportunities", ["--contact", "nobody@example.com"], "--contact"),
    ("opportunities", ["--contact", f"{NOT_UTF8}@example.com"], "--contact"),
    ("opportunities", ["--win-loss-status", "7"], "--win-loss-status"),
]


@pytest.mark.parametrize(("kind", "args", "option"), BAD_OPTIONS)
def test_a_bad_filter_value_is_exit_2_naming_the_option(
    server: Server,
    database_url: str,
    tmp_path: Path,
    kind: str,
    args: list[str],
    option: str,
) -> None:
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    ws.call("POST", "/api/contact", json={"name": "Kim", "email": "kim@example.com"})
    kept = tmp_path / "kept.csv"
    kept.write_text("an earlier export\n", encoding="utf-8")
    for output in (kept, tmp_path / "new.csv"):
        run = ws.cli("export", kind, "-o", str(output), *args)
        assert run.exit_code == 2, run.output
        assert run.stderr.startswith("chatcrm: error: "), run.stderr
        assert len(run.stderr.strip().splitlines()) == 1, run.stderr
        assert option in run.stderr, run.stderr
    assert kept.read_text(encoding="utf-8") == "an earlier export\n"
    assert not (tmp_path / "new.csv").exists()


def test_good_filter_values_export(server: Server, database_url: str, tmp_path: Path) -> None:
    """Each filter's own values pass the check: the export runs."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    ws.call("POST", "/api/contact", json={"name": "Kim", "email": "kim@example.com"})
    stage = ws.setup()["contactStages"][0]["name"]
    run = ws.cli(
        "export",
        "contacts",
        "--q",
        "Kim",
        "--stage",
        stage,
        "--unsolved",
        "--updated-since",
        "2020-01-01",
    )
    assert run.exit_code == 0, run.output
    assert run.stdout.splitlines()[1].startswith("Kim,")
    run = ws.cli(
        "export",
        "opportunities",
        "--contact",
        "kim@example.com",
        "--win-loss-status",
        "0",
        "--updated-since",
        "2020-01-01T00:00:00+02:00",
    )
    assert run.exit_code == 0, run.output
