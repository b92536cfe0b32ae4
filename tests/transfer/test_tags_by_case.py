"""Tags differing only in case (`VIP` and `vip`, two tags to the API) come back as two from
an export imported elsewhere with `--create-tags` (contract G: export then import into
another workspace reproduces the records); a name in another case still finds a tag the
workspace had before the import."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, comparable_contacts, summary, write_csv

pytestmark = pytest.mark.slow


def test_tags_differing_in_case_survive_a_round_trip_with_create_tags(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    upper = first.add("tags", name="VIP")
    lower = first.add("tags", name="vip")
    body = {"name": "Kim", "email": "kim@example.com", "tags": [upper["id"], lower["id"]]}
    first.call("POST", "/api/contact", json=body)
    body = {"name": "Lee", "email": "lee@example.com", "tags": [lower["id"]]}
    first.call("POST", "/api/contact", json=body)
    exported = tmp_path / "contacts.csv"
    assert first.cli("export", "contacts", "-o", str(exported)).exit_code == 0

    made = first.call("POST", "/api/workspace", json={"name": "Copy"})
    second = Workspace(server, account.api_key, made["id"])
    assert second.setup()["tags"] == []
    copied = second.cli("import", "contacts", str(exported), "--create-tags")
    assert summary(copied) == "created 2, updated 0, unchanged 0, failed 0", copied.output
    assert sorted(t["name"] for t in second.setup()["tags"]) == ["VIP", "vip"]
    assert comparable_contacts(second) == comparable_contacts(first)
    again = second.cli("import", "contacts", str(exported), "--create-tags")
    assert summary(again) == "created 0, updated 0, unchanged 2, failed 0", again.output
    assert len(second.setup()["tags"]) == 2


def test_a_name_in_another_case_finds_a_tag_that_was_there(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """What a person types (`vip`, ` Vip `) names the workspace's `VIP`: no tag is made."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    ws.add("tags", name="VIP")
    sample = write_csv(
        tmp_path / "c.csv",
        [
            ["name", "email", "tags"],
            ["Kim", "kim@example.com", "vip"],
            ["Lee", "lee@example.com", " Vip ;New"],
            ["Max", "max@example.com", "new"],
        ],
    )
    run = ws.cli("import", "contacts", str(sample), "--create-tags")
    assert summary(run) == "created 3, updated 0, unchanged 0, failed 0", run.output
    assert sorted(t["name"] for t in ws.setup()["tags"]) == ["New", "VIP", "new"]
    tags = {
        c["name"]: sorted(t["name"] for t in c["tags"])
        for c in ws.records("/api/contact", shape="full")
    }
    assert tags == {"Kim": ["VIP"], "Lee": ["New", "VIP"], "Max": ["new"]}
