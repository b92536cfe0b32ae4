"""An opportunity's activities (B.2: part of its record) go out with export, as one JSON
cell, and come back with import into another workspace (contract G: export then import
reproduces the records); a re-run adds none twice, a bad cell fails its row alone."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import Workspace, comparable_opportunities, read_csv, summary, write_csv

pytestmark = pytest.mark.slow


def _records(ws: Workspace) -> list[dict]:
    """The workspace's opportunities as compared (an import marks what it creates: G)."""
    return [{**o, "creationTypeId": None} for o in comparable_opportunities(ws)]


def test_activities_are_exported_and_imported_once(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    ana = first.call("POST", "/api/contact", json={"name": "Ana", "email": "ana@example.com"})
    deal = first.call(
        "POST", "/api/opportunity",
        json={"name": "Deal", "amount": 10, "contactId": ana["contact"]["id"]},
    )["opportunity"]  # fmt: skip
    for activity in (
        {"categoryType": "Calls", "content": "Intro call, \"quoted\"\nsecond line",
         "date": "2026-11-02T10:00:00.000000Z"},
        {"categoryType": "Email", "content": "Sent the price: S/ 1.200",
         "date": "2026-11-03T09:30:00.000000Z"},
    ):  # fmt: skip
        first.call("POST", f"/api/opportunity/{deal['id']}/agent/activities", json=activity)
    first.call("POST", "/api/opportunity", json={"name": "Quiet", "amount": 1})

    contacts, opportunities = tmp_path / "contacts.csv", tmp_path / "opportunities.csv"
    assert first.cli("export", "contacts", "-o", str(contacts)).exit_code == 0
    out = first.cli("export", "opportunities", "-o", str(opportunities))
    assert out.exit_code == 0, out.output
    rows = {r["name"]: r for r in read_csv(opportunities)}
    assert list(rows["Deal"])[-1] == "activities"
    assert rows["Quiet"]["activities"] == ""
    assert json.loads(rows["Deal"]["activities"]) == [
        {"categoryType": "Calls", "content": "Intro call, \"quoted\"\nsecond line",
         "date": "2026-11-02T10:00:00.000000Z"},
        {"categoryType": "Email", "content": "Sent the price: S/ 1.200",
         "date": "2026-11-03T09:30:00.000000Z"},
    ]  # fmt: skip
    jsonl = first.cli("export", "opportunities", "--format", "jsonl", "--q", "Deal")
    assert [a["categoryType"] for a in json.loads(jsonl.stdout)["activities"]] == ["Calls", "Email"]

    created = first.call("POST", "/api/workspace", json={"name": "Copy"})
    second = Workspace(server, account.api_key, created["id"])
    assert summary(second.cli("import", "contacts", str(contacts))).startswith("created 1,")
    copied = second.cli("import", "opportunities", str(opportunities))
    assert summary(copied) == "created 2, updated 0, unchanged 0, failed 0", copied.output
    assert _records(second) == _records(first)
    again = second.cli("import", "opportunities", str(opportunities))
    assert summary(again) == "created 0, updated 0, unchanged 2, failed 0", again.output
    assert _records(second) == _records(first)

    # One more activity in the file: that one is added, the others are not added twice.
    visit = {"categoryType": "Meeting", "content": "Visit"}
    more = [*json.loads(rows["Deal"]["activities"]), visit]
    header = list(rows["Deal"])
    changed = write_csv(
        tmp_path / "more.csv",
        [header, [json.dumps(more) if k == "activities" else rows["Deal"][k] for k in header]],
    )
    dry = second.cli("import", "opportunities", str(changed), "--dry-run")
    assert summary(dry) == "created 0, updated 1, unchanged 0, failed 0", dry.output
    added = second.cli("import", "opportunities", str(changed))
    assert summary(added) == "created 0, updated 1, unchanged 0, failed 0", added.output
    [copy] = second.records("/api/opportunity", shape="full", q="Deal")
    assert [a["categoryType"] for a in copy["activities"]][-1] == "Meeting"
    assert len(copy["activities"]) == 3

    # A cell that is not activities fails its row, naming what is wrong.
    bad = write_csv(
        tmp_path / "bad.csv",
        [
            ["name", "amount", "activities"],
            ["Odd", "5", '[{"categoryType": "Fax", "content": "x"}]'],
            ["Text", "5", "called twice"],
            ["Fine", "5", ""],
        ],
    )
    rejects = tmp_path / "rejects.csv"
    run = second.cli("import", "opportunities", str(bad), "--rejects", str(rejects))
    assert summary(run) == "created 1, updated 0, unchanged 0, failed 2", run.output
    errors = [r["error"] for r in read_csv(rejects)]
    assert errors[0].startswith("line 2: activities: activity 1: categoryType: must be one of")
    assert errors[1] == "line 3: activities: must be a JSON array of activities"


def test_rows_of_two_namesakes_in_another_order_take_their_own_activities(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """Two opportunities of one contact share a name, one with an activity: the rows of an
    export sorted the other way round each find their own (nothing is copied across)."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    ana = ws.call("POST", "/api/contact", json={"name": "Ana", "email": "ana@example.com"})
    for _ in range(2):
        made = ws.call(
            "POST",
            "/api/opportunity",
            json={"name": "Dup", "amount": 5, "contactId": ana["contact"]["id"]},
        )["opportunity"]
    note = {"categoryType": "Calls", "content": "only on the second"}
    ws.call("POST", f"/api/opportunity/{made['id']}/agent/activities", json=note)
    exported = tmp_path / "opportunities.csv"
    assert ws.cli("export", "opportunities", "-o", str(exported)).exit_code == 0
    before = _records(ws)
    listed = read_csv(exported)
    header, rows = list(listed[0]), [list(r.values()) for r in listed]
    swapped = write_csv(tmp_path / "swapped.csv", [header, *reversed(rows)])
    for args in (["--dry-run"], []):
        run = ws.cli("import", "opportunities", str(swapped), *args)
        assert summary(run) == "created 0, updated 0, unchanged 2, failed 0", run.output
    assert _records(ws) == before


def test_namesakes_given_activities_since_the_export_keep_their_own(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """Both rows are held by an opportunity among more activities (each got one since the
    export): the row of fewer could take the twin the other row alone is held by, and that
    row then copied its activities onto the first. Every row finds one it equals."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    kim = ws.call("POST", "/api/contact", json={"name": "Kim", "email": "kim@example.com"})
    body = {"name": "Deal", "amount": 100, "contactId": kim["contact"]["id"]}
    first, second = (ws.call("POST", "/api/opportunity", json=body)["opportunity"] for _ in "ab")
    # The same activity on both (a date given, as a migration from another CRM gives it).
    intro = {"categoryType": "Calls", "content": "Intro", "date": "2026-11-02T10:00:00.000000Z"}
    for deal, activities in (
        (first, [intro]),
        (second, [intro, {"categoryType": "Meeting", "content": "Demo"}]),
    ):
        for activity in activities:
            ws.call("POST", f"/api/opportunity/{deal['id']}/agent/activities", json=activity)
    exported = tmp_path / "opportunities.csv"
    assert ws.cli("export", "opportunities", "-o", str(exported)).exit_code == 0
    for deal in (first, second):
        later = {"categoryType": "Email", "content": f"Later {deal['id']}"}
        ws.call("POST", f"/api/opportunity/{deal['id']}/agent/activities", json=later)
    before = _records(ws)
    listed = read_csv(exported)
    header, rows = list(listed[0]), [list(r.values()) for r in listed]
    for order in (rows, list(reversed(rows))):
        again = write_csv(tmp_path / "again.csv", [header, *order])
        for args in (["--dry-run"], []):
            run = ws.cli("import", "opportunities", str(again), *args)
            assert summary(run) == "created 0, updated 0, unchanged 2, failed 0", run.output
    assert _records(ws) == before


def test_rows_pair_with_namesakes_across_exact_and_held_activities(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """A row without a date matches an activity at any time: it equals X (exactly its one
    activity) and Y (holding it among more); the other row equals X alone. The rows were
    paired exactly first: the first took X, the second then updated Y with a copy of X's
    activity. Both are unchanged: the first row takes Y."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    kim = ws.call("POST", "/api/contact", json={"name": "Kim", "email": "kim@example.com"})
    body = {"name": "Deal", "amount": 100, "contactId": kim["contact"]["id"]}
    x, y = (ws.call("POST", "/api/opportunity", json=body)["opportunity"] for _ in "xy")
    for deal, activities in (
        (x, [{"categoryType": "Calls", "content": "Intro", "date": "2026-11-02T10:00:00Z"}]),
        (y, [{"categoryType": "Calls", "content": "Intro", "date": "2026-11-05T10:00:00Z"},
             {"categoryType": "Meeting", "content": "Demo"}]),
    ):  # fmt: skip
        for activity in activities:
            ws.call("POST", f"/api/opportunity/{deal['id']}/agent/activities", json=activity)
    before = _records(ws)
    undated = [{"categoryType": "Calls", "content": "Intro"}]
    dated = [{**undated[0], "date": "2026-11-02T10:00:00.000000Z"}]
    given = write_csv(
        tmp_path / "given.csv",
        [["name", "amount", "contact", "activities"],
         *(["Deal", "100", "kim@example.com", json.dumps(a)] for a in (undated, dated))],
    )  # fmt: skip
    for args in (["--dry-run"], []):
        run = ws.cli("import", "opportunities", str(given), *args)
        assert summary(run) == "created 0, updated 0, unchanged 2, failed 0", run.output
    assert _records(ws) == before


def test_a_re_run_of_dates_in_any_iso_form_and_edited_spaces(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """The API reads `…z`, ordinal (`2027-001`) and basic-form dates; the import compared
    them with Python's own parser, which reads neither `z` nor ordinals: each re-run added
    the activities again and rewrote the expiration date (`updated` for ever). And a
    description whose edge spaces were edited was `unchanged`, not applied."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    ws.call("POST", "/api/contact", json={"name": "Zed", "email": "zed@example.com"})
    activities = [
        {"categoryType": "Calls", "content": "c1", "date": "2026-11-02T10:00:00z"},
        {"categoryType": "Email", "content": "c2", "date": "2026-306"},
    ]
    header = ["name", "amount", "contact", "expirationDate", "description", "activities"]
    rows = [
        [name, "1", "zed@example.com", date, "note  ", json.dumps(activities)]
        for name, date in (("D1", "2027-01-01T10:00:00z"), ("D2", "2027-001"), ("D3", "20270101"))
    ]
    given = write_csv(tmp_path / "given.csv", [header, *rows])
    made = ws.cli("import", "opportunities", str(given))
    assert summary(made) == "created 3, updated 0, unchanged 0, failed 0", made.output
    before = _records(ws)
    for args in (["--dry-run"], []):
        run = ws.cli("import", "opportunities", str(given), *args)
        assert summary(run) == "created 0, updated 0, unchanged 3, failed 0", run.output
    assert _records(ws) == before
    assert all(len(o["activities"]) == 2 for o in before)
    edited = write_csv(tmp_path / "edited.csv", [header, *([*r[:4], "note", r[5]] for r in rows)])
    run = ws.cli("import", "opportunities", str(edited))
    assert summary(run) == "created 0, updated 3, unchanged 0, failed 0", run.output
    assert {o["description"] for o in ws.records("/api/opportunity")} == {"note"}
