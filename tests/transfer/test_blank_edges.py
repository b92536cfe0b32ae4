"""Blanks at the edges of a tag's name, a file reference or a variable's name are the
record's own (the API keeps them): export escapes them so that import, which drops the
blanks a person typed around items and names, reads them back (contract G: export then
import reproduces the records; a re-run changes nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, comparable_contacts, summary

pytestmark = pytest.mark.slow


def test_blanks_at_the_edges_of_items_and_variable_names_survive_a_round_trip(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    padded = first.add("tags", name=" sp ")
    plain = first.add("tags", name="plain")
    bodies = [
        {"name": "G", "email": "g@example.com", "files": [" ", "y"]},
        {
            "name": "P",
            "email": "p@example.com",
            "files": [" padded ", "https://x.example/a b ", "C:\\docs\\ "],
            "tags": [padded["id"], plain["id"]],
        },
        {"name": "V", "email": "v@example.com", "variables": [{"name": " v ", "value": 1}]},
    ]
    for body in bodies:
        first.call("POST", "/api/contact", json=body)
    exported = tmp_path / "contacts.csv"
    assert first.cli("export", "contacts", "-o", str(exported)).exit_code == 0
    assert "var:\\ v\\ " in exported.read_text(encoding="utf-8")

    made = first.call("POST", "/api/workspace", json={"name": "Copy"})
    second = Workspace(server, account.api_key, made["id"])
    copied = second.cli("import", "contacts", str(exported), "--create-tags")
    assert summary(copied) == "created 3, updated 0, unchanged 0, failed 0", copied.output
    assert sorted(t["name"] for t in second.setup()["tags"]) == [" sp ", "plain"]
    assert comparable_contacts(second) == comparable_contacts(first)
    # Into its own workspace: the same records, nothing to change.
    again = first.cli("import", "contacts", str(exported))
    assert summary(again) == "created 0, updated 0, unchanged 3, failed 0", again.output
    assert comparable_contacts(second) == comparable_contacts(first)
