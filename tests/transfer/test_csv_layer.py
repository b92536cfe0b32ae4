"""The CSV layer of `chatcrm import` without a server: delimiter detection, BOM, quoted
newlines, the header check and cell reading; bad files and options exit 2 with one line
before anything is sent."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from chatcrm.cli import main
from chatcrm.transfer.bodies import BodyBuilder
from chatcrm.transfer.cells import (
    escaped_item,
    guarded,
    join_list,
    read_cell,
    read_item,
    read_variable,
    split_list,
    unguarded,
    variable_text,
    write_cell,
)
from chatcrm.transfer.columns import CONTACT_COLUMNS, OPPORTUNITY_COLUMNS, RecordColumns, Role
from chatcrm.transfer.csv_source import open_csv, sniff_delimiter
from chatcrm.transfer.names import WorkspaceNames
from chatcrm.transfer.problems import BadInput, RowError

# Nothing listens there: a test that reached the network would fail, not hang.
SERVER = ["--url", "http://127.0.0.1:9", "--api-key", "ccrm_x", "--workspace", "ws"]


def write(tmp_path: Path, text: str, *, bom: bool = False, name: str = "in.csv") -> Path:
    path = tmp_path / name
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


@pytest.mark.parametrize("delimiter", [",", ";"])
@pytest.mark.parametrize("bom", [False, True])
def test_delimiter_bom_and_quoted_newlines(tmp_path: Path, delimiter: str, bom: bool) -> None:
    d = delimiter
    text = (
        f"name{d}lastname{d}email{d}files\r\n"
        f'Ana{d}"Pérez{d} Díaz"{d}ana@example.com{d}"a.pdf;b.pdf"\r\n'
        f'"Luis\nSegundo"{d}Soto{d}luis@example.com{d}\r\n'
        "\r\n"
        f"{d}{d} {d}\r\n"  # an empty row as a spreadsheet writes it
        f"Eva{d}{d}eva@example.com{d}\r\n"
    )
    source = open_csv(write(tmp_path, text, bom=bom))
    assert source.delimiter == delimiter
    assert source.header == ["name", "lastname", "email", "files"]
    rows = list(source.rows())
    assert [row.number for row in rows] == [1, 2, 3]
    # The line each row starts on: the header is line 1, a quoted newline spans two.
    assert [row.line for row in rows] == [2, 3, 7]
    assert source.bom is bom
    assert rows[0].cells == ["Ana", f"Pérez{d} Díaz", "ana@example.com", "a.pdf;b.pdf"]
    assert rows[1].cells[0] == "Luis\nSegundo"
    assert source.count_rows() == 3


def test_sniffer_is_not_fooled_by_commas_inside_semicolon_cells() -> None:
    sample = "name;lastMessage\nAna;hello, world, again\nLuis;a, b\n"
    assert sniff_delimiter(sample) == ";"
    assert sniff_delimiter("name\nAna\n") == ","


def test_header_columns_of_both_kinds() -> None:
    read = CONTACT_COLUMNS.read_header(["name", "phone", "stage", "tags", "var:city", "error"])
    assert [c.role if c else None for c in read] == [
        Role.FIELD,
        Role.FIELD,
        Role.STAGE,
        Role.TAGS,
        Role.VARIABLE,
        None,
    ]
    assert read[1] is not None and read[1].wire == "internalWhatsappNumber"
    assert "workspaceId" not in CONTACT_COLUMNS.named
    # Creatable fields, and isSolved (set by an update after the upsert); orderInCards is
    # set by updates only.
    assert "isSolved" in CONTACT_COLUMNS.named and "isSolved" in CONTACT_COLUMNS.export_names
    assert "orderInCards" not in CONTACT_COLUMNS.named
    read = OPPORTUNITY_COLUMNS.read_header(["name", "amount", "contact"])
    assert read[2] is not None and read[2].role is Role.CONTACT
    with pytest.raises(BadInput, match='unknown column "var:city" for opportunities'):
        OPPORTUNITY_COLUMNS.read_header(["name", "var:city"])
    with pytest.raises(BadInput, match='"phone" and "internalWhatsappNumber" both set'):
        CONTACT_COLUMNS.read_header(["phone", "internalWhatsappNumber"])
    # `variables` and `var:` columns never together, whichever comes first.
    for header in (["var:x", "variables"], ["variables", "var:x"]):
        with pytest.raises(BadInput, match="both set variables"):
            CONTACT_COLUMNS.read_header(["name", *header])
    CONTACT_COLUMNS.read_header(["name", "var:x", "var:y"])


def test_cells_are_read_by_their_field_type_and_written_back() -> None:
    fields = CONTACT_COLUMNS.table
    assert read_cell(fields["isRead"], " TRUE ") is True
    assert read_cell(fields["platformId"], "2") == 2
    assert read_cell(fields["files"], "a.pdf; ;b.pdf") == ["a.pdf", "b.pdf"]
    amount = OPPORTUNITY_COLUMNS.table["amount"]
    assert read_cell(amount, "2500.75") == 2500.75
    assert read_cell(amount, "1200") == 1200
    for bad_field, bad in (("isRead", "yes"), ("platformId", "two")):
        with pytest.raises(ValueError):
            read_cell(fields[bad_field], bad)
    assert [write_cell(v) for v in (None, True, ["a", "b"], 2500.75, 1e12, 3)] == [
        "",
        "true",
        "a;b",
        "2500.75",
        "1000000000000",
        "3",
    ]


def test_a_money_cell_is_ascii_digits_with_a_point() -> None:
    """Decimal alone read `1_000` as 1000 and Arabic-Indic digits as theirs: a typo or a
    sheet of another locale became a silent amount."""
    amount = OPPORTUNITY_COLUMNS.table["amount"]
    written = {"1 234.50": Decimal("1234.50"), "+5": 5, ".5": Decimal("0.5"), "5.": 5}
    written |= {"1\u00a0234.50": Decimal("1234.50"), "1\u202f234": 1234}
    # Not made an integer of 5,001 digits, which the JSON writer refuses (a traceback):
    # sent as written, the server's bound refuses it with the row alone.
    assert read_cell(amount, "1e5000") == Decimal("1e5000")
    assert read_cell(amount, "1e999999999") == Decimal("1e999999999")
    for cell, value in written.items():
        assert read_cell(amount, cell) == value
    for bad in ("1_000", "\u0661\u0662\u0663", "1,5", "NaN", "1e", "--1", "Infinity"):
        with pytest.raises(ValueError):
            read_cell(amount, bad)


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"), ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"),
        ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"),
        # A sign then a letter, another sign or a parenthesis: a formula, not a number.
        ("+E1", "'+E1"), ("-2+3", "'-2+3"), ("-(1)", "'-(1)"), ("-1E+2", "'-1E+2"),
        ("'=x", "''=x"),
        # Numbers and phones as they are.
        ("-3", "-3"), ("-0.5", "-0.5"), ("+51 987 654 321", "+51 987 654 321"),
        ("+1 (555) 010-0100", "+1 (555) 010-0100"), ("'abc", "'abc"), ("Ana", "Ana"),
    ],
)  # fmt: skip
def test_a_cell_a_spreadsheet_would_run_is_guarded_and_read_back(cell: str, written: str) -> None:
    assert guarded(cell) == written
    assert unguarded(written) == cell


WORKSPACE = {
    "contactStages": [{"id": "s1", "name": "New"}, {"id": "s2", "name": "Won over"}],
    "opportunityStages": [],
    "agents": [{"id": "a1", "name": "Ann", "email": "ann@example.com"}],
    "segmentations": [],
    "tags": [{"id": "t1", "name": "VIP"}],
}


def test_a_name_kept_with_surrounding_spaces_is_found_as_exported_and_as_typed() -> None:
    """The API keeps a tag's name as given (" spaced tag "); export writes it so, and the
    cell is read without its spaces: the tag must be found either way, and the exact
    name still wins over another that differs only by them."""
    names = WorkspaceNames(
        {**WORKSPACE, "tags": [{"id": "t1", "name": " spaced tag "}, {"id": "t2", "name": "VIP"}]}
    )
    assert names.tags.find(" spaced tag ") == names.tags.find("spaced tag") == "t1"
    assert names.tags.find("SPACED TAG") == "t1"
    assert names.tags.find("VIP") == "t2"
    assert names.tags.shown("t1") == " spaced tag "


def test_a_row_becomes_a_body_with_names_resolved_and_every_bad_cell_reported() -> None:
    header = ["name", "stage", "agent", "tags", "var:city", "isRead", "email"]
    names = WorkspaceNames(WORKSPACE)
    builder = BodyBuilder(CONTACT_COLUMNS.read_header(header), names, stages=names.contact_stages)
    from chatcrm.transfer.csv_source import Row

    body = builder.body(Row(1, ["Ana", "won over", "ANN@example.com", "vip; t1", "Lima", "", ""]))
    assert body == {
        "name": "Ana",
        "stageId": "s2",
        "assignedAgentId": "a1",
        "tags": ["t1"],
        "variables": [{"name": "city", "value": "Lima"}],
    }
    with pytest.raises(RowError) as failure:
        builder.body(Row(2, ["Bo", "Lost", "", "VIP;Gold", "", "maybe", ""]))
    assert str(failure.value) == (
        'stage: no contact stage with name or id "Lost"; '
        'tags: unknown tag "Gold" (--create-tags creates them); '
        "isRead: must be true or false"
    )


@pytest.mark.parametrize(
    ("args", "text", "message"),
    [
        (["import", "contacts"], "name,colour\nAna,red\n", 'unknown column "colour"'),
        (["import", "contacts"], "", "the file is empty"),
        (["import", "contacts", "--match", "name"], "name\nAna\n", "Invalid value for '--match'"),
        # Contacts' own options are not options of an opportunities import.
        (["import", "opportunities", "--match", "phone"], "name\nA\n", "No such option"),
        (["import", "opportunities", "--create-tags"], "name\nA\n", "No such option"),
        (["import", "contacts", "--bogus"], "name\nAna\n", "No such option '--bogus'"),
        (["export", "contacts", "--format", "xml"], None, "Invalid value for '--format'"),
    ],
)
def test_bad_file_or_option_is_exit_2_with_one_line(
    tmp_path: Path, args: list[str], text: str | None, message: str
) -> None:
    extra = [] if text is None else [str(write(tmp_path, text))]
    result = CliRunner().invoke(main, [*args, *extra, *SERVER])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("chatcrm: error: "), result.stderr
    assert message in lines[0]
    assert result.stdout == ""


def test_a_missing_or_undecodable_file_is_exit_2(tmp_path: Path) -> None:
    missing = CliRunner().invoke(main, ["import", "contacts", str(tmp_path / "no.csv"), *SERVER])
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    latin = tmp_path / "latin.csv"
    latin.write_bytes("name\nJosé\n".encode("latin-1"))
    result = CliRunner().invoke(main, ["import", "contacts", str(latin), *SERVER])
    assert result.exit_code == 2 and "not UTF-8" in result.stderr


def test_header_names_match_whatever_their_case_and_surrounding_spaces() -> None:
    read = CONTACT_COLUMNS.read_header([" Name ", "EMAIL", "Phone", "VAR:City", "IsRead", "Line"])
    assert [c.wire if c else None for c in read] == [
        "name",
        "email",
        "internalWhatsappNumber",
        "variables",
        "isRead",
        None,  # a rejects file's line column, ignored
    ]
    assert read[3] is not None and read[3].name == "City"  # a variable keeps its own case
    assert OPPORTUNITY_COLUMNS.read_header(["NAME", "Contact", "FinalAmount"])[2] is not None
    with pytest.raises(BadInput, match="both set email"):
        CONTACT_COLUMNS.read_header(["email", "Email"])


@pytest.mark.parametrize(
    ("columns", "name", "suggested"),
    [
        (CONTACT_COLUMNS, "emial", "email"),
        (CONTACT_COLUMNS, "last name", "lastname"),
        (CONTACT_COLUMNS, "isread?", "isRead"),
        (OPPORTUNITY_COLUMNS, "ammount", "amount"),
    ],
)
def test_an_unknown_column_suggests_the_closest_known_one(
    columns: RecordColumns, name: str, suggested: str
) -> None:
    with pytest.raises(BadInput) as caught:
        columns.read_header(["name", name])
    assert f'unknown column "{name}"' in str(caught.value)
    assert f'did you mean "{suggested}"?' in str(caught.value)


def test_an_unknown_column_far_from_any_suggests_nothing() -> None:
    with pytest.raises(BadInput) as caught:
        CONTACT_COLUMNS.read_header(["zzzzzz"])
    assert "did you mean" not in str(caught.value)


def test_export_bom_is_for_csv_only(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["export", "contacts", "--format", "jsonl", "--bom", *SERVER])
    assert result.exit_code == 2
    assert result.stderr.strip() == "chatcrm: error: --bom applies to CSV only"


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("Lima", "Lima"),
        ("", '""'),
        ("  ", '"  "'),  # blank: a bare blank cell would be "not given"
        ("\t", '"\\t"'),
        ("30", '"30"'),
        (" 30 ", '" 30 "'),
        ("true", '"true"'),
        ("null", '"null"'),
        ('"Lima"', '"\\"Lima\\""'),
        ("[1, 2]", "[1, 2]"),
        ("NaN", "NaN"),
        ("0123", "0123"),
        ("ñandú", "ñandú"),
        (30, "30"),
        (-2, "-2"),
        (Decimal("0.1"), "0.1"),
        (Decimal("943635842617.1762"), "943635842617.1762"),
        (0.5, "0.5"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
    ],
)
def test_a_variable_cell_reads_back_to_the_value_exported(value: Any, cell: str) -> None:
    """Variables hold strings, numbers, booleans and null: what export writes, import reads
    back to the same value and type (30 stays a number, "30" a string)."""
    assert variable_text(value) == cell
    back = read_variable(cell)
    assert back == value and type(back) is (Decimal if type(value) is float else type(value))


def test_a_hand_written_variable_cell_reads_as_a_person_means_it() -> None:
    assert read_variable("1500") == 1500
    assert read_variable("12.50") == Decimal("12.50")
    assert read_variable("false") is False
    assert read_variable("Calle 5, 2nd floor") == "Calle 5, 2nd floor"
    assert read_variable("007") == "007"  # not a JSON number: text, zeros kept
    assert read_variable("Infinity") == "Infinity"
    assert read_variable("1e1000000000000000000") == "1e1000000000000000000"  # beyond Decimal
    assert variable_text("1e1000000000000000000") == "1e1000000000000000000"
    assert read_variable('{"a": 1}') == '{"a": 1}'


def test_a_rejected_row_keeps_its_error_under_its_heading(tmp_path: Path) -> None:
    """G: the failed row as it was, plus an `error` column: a row with more cells than the
    header still has its error under `error`, its extra cells after it."""
    from chatcrm.transfer.csv_source import Row
    from chatcrm.transfer.outcome import Rejects

    path = tmp_path / "rejects.csv"
    rejects = Rejects(path, ["name", "email", "lastMessage"], ",")
    rejects.write(Row(1, ["Extra", "extra@example.com", "hi", "toomany"], 2), "too many cells")
    rejects.close()
    with path.open(encoding="utf-8", newline="") as handle:
        header, row = list(csv.reader(handle))
    assert header == ["name", "email", "lastMessage", "error"]
    assert row == ["Extra", "extra@example.com", "hi", "line 2: too many cells", "toomany"]


def test_nameless_columns_at_the_end_are_a_spreadsheet_s_and_left_out() -> None:
    """`name,email,,` (cells touched past the data, as Excel and LibreOffice write them):
    the nameless columns at the end are left out, and a row's cells under them count as
    extra cells, refused only when one holds something. One before a named column is
    refused, naming the known columns."""
    names = WorkspaceNames(WORKSPACE)
    read = CONTACT_COLUMNS.read_header(["name", "email", "", " "])
    assert [c.name if c else None for c in read] == ["name", "email"]
    builder = BodyBuilder(read, names, stages=names.contact_stages)
    from chatcrm.transfer.csv_source import Row

    assert builder.body(Row(2, ["Ana", "ana@example.com", "", ""])) == {
        "name": "Ana",
        "email": "ana@example.com",
    }
    with pytest.raises(RowError, match="the row has 4 cells, the header 2"):
        builder.body(Row(3, ["Bo", "bo@example.com", "", "lost data"]))
    # Empty cells after the last one do not count (a `;` at the end of a line).
    with pytest.raises(RowError, match="the row has 4 cells, the header 2"):
        builder.body(Row(4, ["Bo", "bo@example.com", "", "lost data", "", " "]))
    with pytest.raises(BadInput, match="the header has an empty column name"):
        CONTACT_COLUMNS.read_header(["name", "", "email"])


@pytest.mark.parametrize(
    "items",
    [[" ", "y"], [" padded ", "a b "], ["\t tab\n"], ["x\\ ", " \\"], ["a;b", "C:\\docs"]],
)
def test_a_list_with_blanks_at_its_items_edges_reads_back_as_written(items: list[str]) -> None:
    assert split_list(join_list(items)) == items


def test_blanks_typed_around_items_and_names_are_not_theirs() -> None:
    assert split_list(" a ;  b;;\tc ") == ["a", "b", "c"]
    assert split_list("\\ x\\ ") == [" x "]
    assert read_item(" v ") == "v"
    assert read_item(escaped_item(" v ")) == " v "
