"""`chatcrm import` and `chatcrm export` against a real `chatcrm serve`, on both backends:
a sample file with good and bad rows, the rejects file, a dry run, a second run (all
unchanged), opportunities matched by contact and name, and export then import into another
workspace reproducing the records. One server per backend for the module (conftest)."""

from __future__ import annotations

import csv
import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import new_account
from tests.servers import Server
from tests.transfer.live import (
    Workspace,
    comparable_contacts,
    comparable_opportunities,
    read_csv,
    summary,
    write_csv,
)

pytestmark = pytest.mark.slow


def test_import_rejects_dry_run_rerun_and_export_into_another_workspace(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    setup = first.setup()
    second_stage = setup["contactStages"][1]["name"]
    opportunity_stage = setup["opportunityStages"][2]["name"]
    first.add("agents", name="Ann", email="ann@example.com")
    first.add("tags", name="VIP", color="#ff0000")

    header = ["name", "lastname", "email", "phone", "stage", "agent", "tags", "var:city"]
    header += ["isRead", "files", "platformId"]
    good = [
        [
            "Ana",
            "Pérez",
            "ana@example.com",
            "+51 987-654-321",
            second_stage,
            "ANN@example.com",
            "VIP;Newcomer",
            "Lima",
            "true",
            "a.pdf;b.pdf",
            "",
        ],
        ["Luis", "Soto\nSegundo", "luis@example.com", "", "", "", "VIP", "", "", "", ""],
        # WhatsApp (platformId 2): a phone and no email.
        ["Eva", "", "", "51911222333", "", "", "", "Cusco", "false", "", "2"],
    ]
    bad = [
        ["Bad email", "", "not-an-email", "", "", "", "", "", "", "", ""],
        ["Bad cells", "", "bad@example.com", "", "No such stage", "", "", "", "maybe", "", ""],
    ]
    sample = write_csv(
        tmp_path / "contacts.csv",
        [header, good[0], bad[0], good[1], bad[1], good[2]],
        delimiter=";",
        bom=True,
    )

    # A dry run reports what would happen and writes nothing.
    dry = first.cli("import", "contacts", str(sample), "--dry-run", "--create-tags")
    assert dry.exit_code == 1, dry.output
    assert summary(dry) == "created 3, updated 0, unchanged 0, failed 2"
    # Without --rejects, the failed rows are shown on stderr with their lines (the header
    # is line 1; Luis's quoted lastname spans lines 4 and 5).
    assert "chatcrm: line 3: email: " in dry.stderr
    assert 'chatcrm: line 6: stage: no contact stage with name or id "No such stage"' in (
        dry.stderr
    )
    assert "chatcrm: 2 rows failed; --rejects FILE writes every failed row" in dry.stderr
    assert first.records("/api/contact") == []
    assert [t["name"] for t in first.setup()["tags"]] == ["VIP"]

    rejects = tmp_path / "rejects.csv"
    run = first.cli(
        "import",
        "contacts",
        str(sample),
        "--create-tags",
        "--rejects",
        str(rejects),
        interval="0",
    )
    assert run.exit_code == 1, run.output
    assert summary(run) == "created 3, updated 0, unchanged 0, failed 2"
    # Not a terminal: progress lines on stderr (here one per batch, the interval being 0).
    assert "import contacts: 5 of 5 rows" in run.stderr
    assert "chatcrm: line " not in run.stderr  # the rejects file has them
    # The input had a byte-order mark: so has the rejects file (Excel reads its accents).
    assert rejects.read_bytes().startswith(b"\xef\xbb\xbf")
    with rejects.open(encoding="utf-8-sig", newline="") as handle:
        rejected = list(csv.reader(handle, delimiter=";"))
    # Contract G: each failed row as it was, plus an error column (which says its line).
    assert rejected[0] == [*header, "error"]
    assert [row[:-1] for row in rejected[1:]] == bad
    assert [row[-1].split(": ", 1)[0] for row in rejected[1:]] == ["line 3", "line 6"]
    assert rejected[1][-1].startswith("line 3: email: ")
    assert 'stage: no contact stage with name or id "No such stage"' in rejected[2][-1]
    assert "isRead: must be true or false" in rejected[2][-1]

    contacts = {c["name"]: c for c in first.records("/api/contact", shape="full")}
    assert set(contacts) == {"Ana", "Luis", "Eva"}
    ana = contacts["Ana"]
    assert ana["internalWhatsappNumber"] == "51987654321"
    assert ana["stageId"] == setup["contactStages"][1]["id"]
    assert ana["assignedAgentName"] == "Ann"
    assert sorted(t["name"] for t in ana["tags"]) == ["Newcomer", "VIP"]
    assert ana["variables"] == [{"name": "city", "value": "Lima"}]
    assert ana["isRead"] is True and ana["files"] == ["a.pdf", "b.pdf"]
    assert contacts["Luis"]["lastname"] == "Soto\nSegundo"

    again = first.cli("import", "contacts", str(sample), "--create-tags")
    assert summary(again) == "created 0, updated 0, unchanged 3, failed 2", again.output

    # Opportunities: matched by contact and name; a changed amount updates only that row.
    opp_header = ["name", "amount", "contact", "stage", "description"]
    opps = [
        ["Big deal", "2500.75", "+51 987-654-321", opportunity_stage, "first"],
        ["Small deal", "100", "luis@example.com", "", ""],
        # 16 significant digits: a float would round it (…1761).
        ["Orphan", "943635842617.1762", "", "", "no contact"],
        ["Lost one", "5", "nobody@example.com", "", ""],
    ]
    opp_file = write_csv(tmp_path / "opportunities.csv", [opp_header, *opps])
    made = first.cli("import", "opportunities", str(opp_file))
    assert summary(made) == "created 3, updated 0, unchanged 0, failed 1", made.output
    assert made.exit_code == 1
    same = first.cli("import", "opportunities", str(opp_file))
    assert summary(same) == "created 0, updated 0, unchanged 3, failed 1", same.output
    opps[1][1] = "150"
    changed = write_csv(tmp_path / "changed.csv", [opp_header, *opps[:3]])
    moved = first.cli("import", "opportunities", str(changed))
    assert moved.exit_code == 0, moved.output
    assert summary(moved) == "created 0, updated 1, unchanged 2, failed 0"
    stored = comparable_opportunities(first)
    assert {o["creationTypeId"] for o in stored} == {2}
    assert [(o["name"], str(o["amount"])) for o in stored] == [
        ("Big deal", "2500.75"),
        ("Orphan", "943635842617.1762"),
        ("Small deal", "150"),
    ]

    # The rejects file, fixed, imports as it is (its error column is ignored).
    fixed = [list(row) for row in rejected]
    fixed[1][header.index("email")] = "fixed@example.com"
    write_csv(rejects, fixed, delimiter=";")
    retried = first.cli("import", "contacts", str(rejects), "--dry-run")
    assert summary(retried) == "created 1, updated 0, unchanged 0, failed 1", retried.output

    # A won opportunity comes back won (its status is not a create field: set after).
    small = next(o for o in first.records("/api/opportunity") if o["name"] == "Small deal")
    won = {"paramToUpdate": "winLossStatus", "winLossStatus": 1}
    first.call("PUT", "/api/opportunity", params={"id": small["id"]}, json=won)

    # A solved contact comes back solved (isSolved is not a create field: set after), and
    # variables keep their types: a number, a boolean, null, text that reads as a number.
    luis = contacts["Luis"]
    solved = {"paramToUpdate": "isSolved", "isSolved": True}
    where = {"workspaceId": first.id}
    first.call("PUT", "/api/contact", params={"id": luis["id"], **where}, json=solved)
    typed = [
        {"name": "city", "value": "Lima"},
        {"name": "age", "value": 30},
        {"name": "score", "value": Decimal("0.1")},
        {"name": "vip", "value": True},
        {"name": "none", "value": None},
        {"name": "code", "value": "30"},
        {"name": "word", "value": "true"},
        {"name": "quoted", "value": '"Lima"'},
    ]
    body = json.dumps({"paramToUpdate": "variables", "variables": typed}, default=float)
    first.call(
        "PUT",
        "/api/contact",
        params={"id": ana["id"], **where},
        content=body,
        headers={"content-type": "application/json"},
    )

    # Names and references holding the list separator, and tags differing only by case,
    # come back as they were (the separator escaped, names matched as written first).
    semi = first.add("tags", name="Sales;EU")
    lower = first.add("tags", name="vip")
    vip = next(t["id"] for t in first.setup()["tags"] if t["name"] == "VIP")
    odd = {
        "paramToUpdate": "tags,files",
        "tags": [vip, semi["id"], lower["id"]],
        "files": ["https://x.example/a;b.pdf", "C:\\docs\\c.pdf"],
    }
    first.call("PUT", "/api/contact", params={"id": luis["id"], **where}, json=odd)

    # Export, then import into another workspace with the same names.
    exported = tmp_path / "export.csv"
    out = first.cli("export", "contacts", "-o", str(exported))
    assert out.exit_code == 0, out.output
    assert not exported.read_bytes().startswith(b"\xef\xbb\xbf")
    with_bom = tmp_path / "export-bom.csv"
    assert first.cli("export", "contacts", "--bom", "-o", str(with_bom)).exit_code == 0
    assert with_bom.read_bytes() == b"\xef\xbb\xbf" + exported.read_bytes()
    rows = read_csv(exported)
    assert len(rows) == 3
    assert {r["stage"] for r in rows} <= {s["name"] for s in setup["contactStages"]}
    exported_opps = tmp_path / "export-opportunities.csv"
    assert first.cli("export", "opportunities", "-o", str(exported_opps)).exit_code == 0
    # Phones with their '+': read the same whatever the importing workspace's country.
    assert {r["contact"] for r in read_csv(exported_opps)} == {
        "+51987654321",
        "",
        "luis@example.com",
    }
    assert "+51987654321" in {r["phone"] for r in rows}

    created = first.call("POST", "/api/workspace", json={"name": "Copy"})
    # In Brazil, 51 987654321 is a valid national number (Porto Alegre): bare digits
    # would be read as +55 51….
    second = Workspace(server, account.api_key, created["id"])
    second.call("PUT", f"/api/workspace/{second.id}", json={"defaultCountry": "BR"})
    second.add("agents", name="Ann", email="ann@example.com")
    for tag in ("VIP", "Newcomer", "Sales;EU", "vip"):
        second.add("tags", name=tag)
    copied = second.cli("import", "contacts", str(exported))
    assert summary(copied) == "created 3, updated 0, unchanged 0, failed 0", copied.output
    assert [c["name"] for c in second.records("/api/contact", isSolved="true")] == ["Luis"]
    copied = second.cli("import", "opportunities", str(exported_opps))
    assert summary(copied) == "created 3, updated 0, unchanged 0, failed 0", copied.output
    assert comparable_contacts(second) == comparable_contacts(first)
    assert comparable_opportunities(second) == comparable_opportunities(first)
    # The exported file imported back where it came from changes nothing.
    back = first.cli("import", "contacts", str(exported))
    assert summary(back) == "created 0, updated 0, unchanged 3, failed 0", back.output

    # JSON lines: the same columns, typed values, to stdout.
    lines = first.cli("export", "contacts", "--format", "jsonl", "--q", "Ana")
    assert lines.exit_code == 0, lines.output
    records = [json.loads(line) for line in lines.stdout.splitlines()]
    assert len(records) == 1
    jsonl = first.cli("export", "opportunities", "--format", "jsonl", "--q", "Orphan")
    assert '"amount":943635842617.1762' in jsonl.stdout.replace(" ", ""), jsonl.stdout
    assert set(records[0]["tags"]) == {"VIP", "Newcomer"}
    assert records[0]["isRead"] is True and records[0]["var:city"] == "Lima"
    assert records[0]["var:age"] == 30 and records[0]["var:code"] == "30"
    assert "exported 1 contacts" in lines.stderr


def test_opportunities_of_one_name_are_as_many_and_come_back_as_many(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """Contract G: export then import elsewhere reproduces the records, and a re-run
    changes nothing, also for a contact's opportunities that share a name."""
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    agent = first.add("agents", name="Bob", email="bob@example.com")
    contact = first.call("POST", "/api/contact", json={"name": "Kim", "email": "kim@example.com"})[
        "id"
    ]
    for amount, with_contact in ((100, True), (200, True), (1, False), (2, False)):
        body = {"name": "Renewal" if with_contact else "Loose", "amount": amount}
        first.call(
            "POST",
            "/api/opportunity",
            json={**body, **({"contactId": contact} if with_contact else {})},
        )
    exported = tmp_path / "opportunities.csv"
    assert first.cli("export", "opportunities", "-o", str(exported)).exit_code == 0
    assert len(read_csv(exported)) == 4
    back = first.cli("import", "opportunities", str(exported))
    assert summary(back) == "created 0, updated 0, unchanged 4, failed 0", back.output

    second = Workspace(
        server, account.api_key, first.call("POST", "/api/workspace", json={"name": "Copy"})["id"]
    )
    second.call("POST", "/api/contact", json={"name": "Kim", "email": "kim@example.com"})
    dry = second.cli("import", "opportunities", str(exported), "--dry-run")
    assert summary(dry) == "created 4, updated 0, unchanged 0, failed 0", dry.output
    copied = second.cli("import", "opportunities", str(exported))
    assert summary(copied) == "created 4, updated 0, unchanged 0, failed 0", copied.output
    for _ in range(2):
        again = second.cli("import", "opportunities", str(exported))
        assert summary(again) == "created 0, updated 0, unchanged 4, failed 0", again.output
    amounts = sorted((o["name"], str(o["amount"])) for o in second.records("/api/opportunity"))
    assert amounts == [("Loose", "1"), ("Loose", "2"), ("Renewal", "100"), ("Renewal", "200")]

    # One row changed: that opportunity is updated, its twin left alone.
    rows = read_csv(exported)
    changed = next(r for r in rows if r["name"] == "Renewal" and r["amount"] == "200")
    changed["amount"] = "250"
    edited = write_csv(tmp_path / "edited.csv", [list(rows[0]), *[list(r.values()) for r in rows]])
    moved = second.cli("import", "opportunities", str(edited))
    assert summary(moved) == "created 0, updated 1, unchanged 3, failed 0", moved.output
    amounts = sorted((o["name"], str(o["amount"])) for o in second.records("/api/opportunity"))
    assert amounts == [("Loose", "1"), ("Loose", "2"), ("Renewal", "100"), ("Renewal", "250")]

    # Create Opportunity's original name for the agent is a column too (contract B.3).
    original = write_csv(
        tmp_path / "original.csv",
        [["name", "amount", "assignedComercialId"], ["AC", "1", agent["id"]]],
    )
    made = first.cli("import", "opportunities", str(original))
    assert summary(made) == "created 1, updated 0, unchanged 0, failed 0", made.output
    [ac] = [o for o in first.records("/api/opportunity") if o["name"] == "AC"]
    assert ac["assignedAgentId"] == agent["id"]


def test_an_opportunity_of_a_deleted_contact_comes_back_unchanged(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """Its opportunities stay when a contact is deleted (B.3), and the export names the
    contact by id: a re-run of that file matches them (it failed their rows)."""
    account = new_account(database_url)
    first = Workspace(server, account.api_key, account.workspace_id)
    gone = first.call("POST", "/api/contact", json={"name": "Gone", "email": "gone@example.com"})
    first.call(
        "POST", "/api/opportunity", json={"name": "Orphan", "amount": 5, "contactId": gone["id"]}
    )
    first.call("POST", "/api/contact/delete-batch", json={"contactIds": [{"ids": gone["id"]}]})
    exported = tmp_path / "opportunities.csv"
    assert first.cli("export", "opportunities", "-o", str(exported)).exit_code == 0
    [row] = read_csv(exported)
    assert row["contact"] == gone["id"]
    for _ in range(2):
        back = first.cli("import", "opportunities", str(exported))
        assert summary(back) == "created 0, updated 0, unchanged 1, failed 0", back.output
    # An id no opportunity of the workspace names is still no contact.
    row["contact"] = "01a22a91-0000-7000-8000-000000000000"
    other = write_csv(tmp_path / "other.csv", [list(row), list(row.values())])
    failed = first.cli("import", "opportunities", str(other))
    assert summary(failed) == "created 0, updated 0, unchanged 0, failed 1", failed.output


def test_a_phone_names_the_contact_whose_whatsapp_number_it_is(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """Export names a deal's contact by its WhatsApp number; a newer contact may hold the
    same number as its sender phone (unique only as a WhatsApp number), and a phone search
    finds both, newest first: the deal went to that other contact, made anew."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    yan = ws.call(
        "POST", "/api/contact", json={"name": "Yan", "platformId": 2, "phone": "+34 600 000 001"}
    )
    ws.call(
        "POST",
        "/api/contact",
        json={"name": "Zoe", "email": "zoe@example.com", "platformSenderPhone": "+34 600 000 001"},
    )
    ws.call(
        "POST", "/api/opportunity", json={"name": "Yan deal", "amount": 1, "contactId": yan["id"]}
    )
    exported = tmp_path / "opportunities.csv"
    assert ws.cli("export", "opportunities", "-o", str(exported)).exit_code == 0
    [row] = read_csv(exported)
    assert row["contact"].lstrip("+") == "34600000001"
    for args in (["--dry-run"], []):
        back = ws.cli("import", "opportunities", str(exported), *args)
        assert summary(back) == "created 0, updated 0, unchanged 1, failed 0", back.output
    [deal] = ws.records("/api/opportunity")
    assert deal["contactId"] == yan["id"]
    # The export filter names the same contact.
    mine = ws.cli("export", "opportunities", "--contact", "+34 600 000 001", "--format", "jsonl")
    assert [json.loads(line)["name"] for line in mine.stdout.splitlines()] == ["Yan deal"]


def test_a_phone_names_its_holder_past_swapped_numbers_and_a_full_search(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """Two contacts holding each other's numbers (WhatsApp and sender phone) both hold
    both: the deal went to the newer one. And a phone search answers the newest 100:
    with more newer contacts holding the number as their sender phone, the holder was not
    among them and the deal went to the newest."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)

    def contact(name: str, whatsapp: str, sender: str) -> dict:
        body = {"name": name, "platformId": 2, "phone": whatsapp, "platformSenderPhone": sender}
        return ws.call("POST", "/api/contact", json=body)

    ana = contact("Ana", "+34 600 000 001", "+34 600 000 002")
    contact("Bea", "+34 600 000 002", "+34 600 000 001")  # newer, the numbers swapped
    old = contact("Old", "+34 600 000 009", "")
    # In one request: 101 creates at once pass the key's rate limit on a fast machine.
    shops = [
        {
            "name": f"Shop {i}",
            "email": f"shop{i}@example.com",
            "platformSenderPhone": "+34 600 000 009",
        }
        for i in range(101)
    ]
    ws.call("POST", "/api/contact/upsert-batch", json={"matchBy": "email", "contacts": shops})
    for holder in (ana, old):
        deal = {"name": f"{holder['contact']['name']} deal", "amount": 1}
        ws.call("POST", "/api/opportunity", json={**deal, "contactId": holder["id"]})
    exported = tmp_path / "opportunities.csv"
    assert ws.cli("export", "opportunities", "-o", str(exported)).exit_code == 0
    back = ws.cli("import", "opportunities", str(exported))
    assert summary(back) == "created 0, updated 0, unchanged 2, failed 0", back.output
    deals = {o["name"]: o["contactId"] for o in ws.records("/api/opportunity")}
    assert deals == {"Ana deal": ana["id"], "Old deal": old["id"]}
    for phone, name in (
        ("+34 600 000 001", "Ana deal"), ("0034600000009", "Old deal"),
        ("011 34 600 000 001", "Ana deal"),
    ):  # fmt: skip
        mine = ws.cli("export", "opportunities", "--contact", phone, "--format", "jsonl")
        assert [json.loads(line)["name"] for line in mine.stdout.splitlines()] == [name], phone
    # A national number is read in the workspace's defaultCountry (N), as the server
    # reads it: both contacts end with its digits, one in Peru, one in Spain.
    body = {"paramToUpdate": "defaultCountry", "defaultCountry": "PE"}
    ws.call("PUT", f"/api/workspace/{account.workspace_id}", json=body)
    peru = contact("Peru", "+51 987 654 321", "+34 987 654 321")
    contact("Spain", "+34 987 654 321", "+51 987 654 321")  # newer
    ws.call("POST", "/api/opportunity", json={"name": "Lima", "amount": 1, "contactId": peru["id"]})
    for phone in ("987 654 321", "+51 (0) 987 654 321", "51 (0) 987654321"):
        mine = ws.cli("export", "opportunities", "--contact", phone, "--format", "jsonl")
        assert [json.loads(line)["name"] for line in mine.stdout.splitlines()] == ["Lima"], phone
    given = write_csv(
        tmp_path / "lima.csv", [["name", "amount", "contact"], ["Lima", "1", "987 654 321"]]
    )
    back = ws.cli("import", "opportunities", str(given))
    assert summary(back) == "created 0, updated 0, unchanged 1, failed 0", back.output


def test_a_wrong_key_or_workspace_is_exit_2_before_any_row(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    sample = write_csv(tmp_path / "c.csv", [["name", "email"], ["Ana", "ana@example.com"]])
    wrong = Workspace(server, "ccrm_wrong", account.workspace_id)
    result = wrong.cli("import", "contacts", str(sample))
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("chatcrm: error: cannot use workspace")
    assert len(result.stderr.strip().splitlines()) == 1
    ok = Workspace(server, account.api_key, account.workspace_id)
    assert ok.records("/api/contact") == []


def test_feedback_on_stderr_duplicates_and_header_case(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    rows = [
        [" Name ", "EMAIL", "Phone"],
        ["Ana", "ana@example.com", "+51 987-654-321"],  # line 2
        ["Ana again", "", "51987654321"],  # line 3: the same phone, normalised
        ["Luis", "LUIS@example.com", ""],  # line 4
        *[[f"Bad {i}", "not-an-email", ""] for i in range(6)],  # lines 5 to 10
        ["Luis last", "luis@example.com", ""],  # line 11: the same email as line 4
        ["Ana later", "", "51 987 654 321"],  # line 12
        # The same number as the server reads it (contract N): an international prefix,
        # a trunk after the country code.
        ["Ana via 00", "", "0051 987 654 321"],  # line 13
        ["Ana last", "", "51 (0) 987654321"],  # line 14
    ]
    sample = write_csv(tmp_path / "people.csv", rows)
    run = ws.cli("import", "contacts", str(sample))
    assert run.exit_code == 1, run.output
    assert summary(run) == "created 2, updated 5, unchanged 0, failed 6"
    errors = [line for line in run.stderr.splitlines() if line.startswith("chatcrm: line ")]
    assert [line.split(":")[1] for line in errors] == [
        " line 5",
        " line 6",
        " line 7",
        " line 8",
        " line 9",
    ]
    assert all("email: " in line for line in errors)
    assert "chatcrm: 6 rows failed (the first 5 above); --rejects FILE" in run.stderr
    assert (
        "chatcrm: warning: lines 2, 3, 12, 13 and 14 match the same contact (phone 51987654321): "
        "they are applied in order, the last one wins"
    ) in run.stderr
    assert "chatcrm: warning: lines 4 and 11 match the same contact (email luis@example.com)" in (
        run.stderr
    )
    # The six bad rows share an email too, but failed: they match nothing, no warning.
    assert "(email not-an-email)" not in run.stderr
    names = sorted(c["name"] for c in ws.records("/api/contact"))
    assert names == ["Ana last", "Luis last"]


def test_a_failed_row_leaves_nothing_and_a_huge_cell_stops_no_other_row(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """G: a failed row never stops the others, and is not there after all: an opportunity
    whose `winLossStatus` the service refuses (set after its creation) is taken back, so
    neither this run nor the next makes it twice; a cell too big for Python's csv by
    default (128 Ki characters) is read and judged with its row."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    bad = write_csv(
        tmp_path / "o.csv",
        [["name", "amount", "winLossStatus"], ["Twice", "1", "9"], ["Twice", "2", "9"]],
    )
    for _ in range(2):
        run = ws.cli("import", "opportunities", str(bad))
        assert run.exit_code == 1, run.output
        assert summary(run) == "created 0, updated 0, unchanged 0, failed 2"
        assert ws.records("/api/opportunity") == []
    huge = write_csv(
        tmp_path / "huge.csv",
        [
            ["name", "email", "lastMessage"],
            ["Before", "before@example.com", "x"],
            ["Huge", "huge@example.com", "x" * 140_000],
            ["After", "after@example.com", "y"],
        ],
    )
    run = ws.cli("import", "contacts", str(huge))
    assert run.exit_code in (0, 1), run.output
    assert summary(run).startswith("created ")
    names = {c["name"] for c in ws.records("/api/contact")}
    assert {"Before", "After"} <= names


def test_a_contact_cell_that_is_no_id_email_or_phone_is_said_by_its_column(
    server: Server, database_url: str, tmp_path: Path
) -> None:
    """A contact typed by name, or a phone a spreadsheet wrote as 9.87654321E+08, went to
    the phone search, and the row failed with the search's own words about a `cellphone`
    parameter the file has no column of."""
    account = new_account(database_url)
    ws = Workspace(server, account.api_key, account.workspace_id)
    rows = [
        ["name", "amount", "contact"],
        ["ByName", "5", "Ana Pérez"],
        ["Sci", "5", "9.87654321E+08"],
        ["NoMail", "5", "Ann <ann@example.com>"],  # an "@", and yet no e-mail
    ]
    given = write_csv(tmp_path / "o.csv", rows)
    rejects = tmp_path / "rejects.csv"
    run = ws.cli("import", "opportunities", str(given), "--rejects", str(rejects))
    assert summary(run) == "created 0, updated 0, unchanged 0, failed 3", run.output
    errors = [row["error"] for row in read_csv(rejects)]
    assert errors == [
        'line 2: contact: no contact with id, phone or email "Ana Pérez"',
        'line 3: contact: no contact with id, phone or email "9.87654321E+08"',
        'line 4: contact: no contact with id, phone or email "Ann <ann@example.com>"',
    ]
