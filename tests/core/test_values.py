"""Validators of single body values (contract B.1, B.2, section 5): strict JSON types, the
string and count limits, exact money, ISO 8601 timestamps, tags and variables."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcrm.core import values as v
from chatcrm.core.jsontext import load_exact, to_text
from chatcrm.core.values import FieldError

UUID = "01961234-5678-7abc-8def-0123456789ab"


def field_error(fn: Any, *args: Any, **kwargs: Any) -> FieldError:
    with pytest.raises(FieldError) as info:
        fn(*args, **kwargs)
    assert info.value.message
    return info.value


def finishes_within(seconds: float, code: str) -> None:
    """Run `code` in a fresh interpreter; fail if it does not end (successfully) in time.

    A separate process because a runaway big-number computation holds the interpreter and
    cannot be interrupted from inside it.
    """
    try:
        result = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=seconds,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"did not finish within {seconds} s")
    assert result.returncode == 0, result.stderr


def test_field_error_names_field_and_message() -> None:
    exc = FieldError("name", "must be a string")
    assert exc.field == "name"
    assert exc.message == "must be a string"
    assert isinstance(exc, ValueError)


# --- text --------------------------------------------------------------------------------


def test_text_accepts_up_to_the_limit() -> None:
    assert v.text("name", "") == ""
    assert v.text("name", "Ana") == "Ana"
    assert v.text("name", "x" * 200) == "x" * 200
    assert v.text("name", "😀" * 200) == "😀" * 200  # characters, not bytes
    assert v.text("description", "x" * 10_000, max_len=10_000) == "x" * 10_000


def test_text_over_the_limit() -> None:
    exc = field_error(v.text, "name", "x" * 201)
    assert exc.field == "name"
    assert "200" in exc.message
    assert field_error(v.text, "description", "x" * 10_001, max_len=10_000).field == "description"


@pytest.mark.parametrize("value", [None, 1, Decimal("1.5"), True, [], ["a"], {}, {"a": "b"}])
def test_text_requires_a_string(value: object) -> None:
    exc = field_error(v.text, "name", value)
    assert exc.field == "name"
    assert "string" in exc.message


def test_text_nullable_and_nonblank() -> None:
    assert v.text("lastname", None, nullable=True) is None
    assert v.text("lastname", "  ", nullable=False) == "  "
    assert field_error(v.text, "lastname", "   ", nonblank=True).field == "lastname"
    assert field_error(v.text, "lastname", "", nonblank=True).field == "lastname"


def test_required_text() -> None:
    assert v.required_text("name", " Ana ") == " Ana "
    for bad in (None, "", "   ", "\n\t", 5, True, ["Ana"]):
        assert field_error(v.required_text, "name", bad).field == "name"
    assert field_error(v.required_text, "name", "x" * 201).field == "name"
    assert v.required_text("content", "x" * 10_000, max_len=10_000) == "x" * 10_000


def test_null_where_a_value_is_required_says_null() -> None:
    assert "null" in field_error(v.required_text, "name", None).message


# --- boolean -----------------------------------------------------------------------------


def test_boolean() -> None:
    assert v.boolean("isRead", True) is True
    assert v.boolean("isRead", False) is False


@pytest.mark.parametrize("value", [1, 0, "true", "false", "", None, Decimal("1"), [], {}])
def test_boolean_rejects_non_booleans(value: object) -> None:
    exc = field_error(v.boolean, "isRead", value)
    assert exc.field == "isRead"


# --- integer and choice ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, 0),
        (7, 7),
        (2**31 - 1, 2**31 - 1),
        (Decimal("3.0"), 3),
        (Decimal("3.000000000000000000000000000000"), 3),
        (Decimal("1E+2"), 100),
        (Decimal("-0.0"), 0),
    ],
)
def test_integer_accepts(value: object, expected: int) -> None:
    result = v.integer("orderInCards", value)
    assert result == expected
    assert type(result) is int


@pytest.mark.parametrize(
    "value",
    [
        True,
        False,
        Decimal("3.5"),
        Decimal("3.0000000000000000000000000000001"),
        "3",
        "",
        None,
        [3],
        {"v": 3},
        3.0,
        Decimal("NaN"),
        Decimal("Infinity"),
    ],
)
def test_integer_rejects_non_integers(value: object) -> None:
    exc = field_error(v.integer, "orderInCards", value)
    assert exc.field == "orderInCards"
    assert "integer" in exc.message


@pytest.mark.parametrize(
    "value", [-1, Decimal("-1.0"), 2**31, 10**40, Decimal("1E+40"), Decimal("-1E+40")]
)
def test_integer_out_of_range(value: object) -> None:
    exc = field_error(v.integer, "orderInCards", value)
    assert exc.field == "orderInCards"
    assert "between" in exc.message


def test_integer_custom_bounds() -> None:
    assert v.integer("pageSize", 1, minimum=1, maximum=100) == 1
    assert v.integer("pageSize", 100, minimum=1, maximum=100) == 100
    field_error(v.integer, "pageSize", 0, minimum=1, maximum=100)
    field_error(v.integer, "pageSize", 101, minimum=1, maximum=100)


def test_integer_with_a_huge_exponent_is_rejected_quickly() -> None:
    # A JSON body can carry `1e999999999` (11 bytes); it is read as a Decimal and must be
    # refused without first being expanded to a billion-digit integer.
    finishes_within(
        10,
        """
        from decimal import Decimal
        from chatcrm.core.values import FieldError, integer
        for text in ("1e999999999", "-1e999999999", "1.0e999999"):
            try:
                integer("orderInCards", Decimal(text))
            except FieldError as exc:
                assert exc.field == "orderInCards"
            else:
                raise AssertionError(text + " was accepted")
        """,
    )


@settings(max_examples=200, deadline=None)
@given(st.integers(min_value=0, max_value=2**31 - 1), st.integers(min_value=0, max_value=30))
def test_integer_written_with_a_fraction_is_that_integer(n: int, zeros: int) -> None:
    written = Decimal(f"{n}.{'0' * zeros}") if zeros else Decimal(n)
    assert v.integer("orderInCards", written) == n


PLATFORMS = (1, 2, 3, 4, 5, 6, 7)


def test_choice() -> None:
    for n in PLATFORMS:
        assert v.choice("platformId", n, PLATFORMS) == n
    assert v.choice("platformId", Decimal("2.0"), PLATFORMS) == 2
    for bad in (0, 8, -1, True, "2", None, Decimal("2.5")):
        assert field_error(v.choice, "platformId", bad, PLATFORMS).field == "platformId"


def test_choice_with_gaps() -> None:
    assert v.choice("kind", 3, (1, 3)) == 3
    exc = field_error(v.choice, "kind", 2, (1, 3))
    assert exc.field == "kind"
    assert "1, 3" in exc.message


def test_choice_win_loss_status() -> None:
    for n in (0, 1, 2):
        assert v.choice("winLossStatus", n, (0, 1, 2)) == n
    field_error(v.choice, "winLossStatus", 3, (0, 1, 2))


# --- reference ---------------------------------------------------------------------------


def test_reference() -> None:
    assert v.reference("stageId", UUID) == UUID
    assert v.reference("stageId", None) is None
    assert v.reference("stageId", "") is None
    assert v.reference("stageId", "x" * 64) == "x" * 64
    assert field_error(v.reference, "stageId", None, nullable=False).field == "stageId"
    assert field_error(v.reference, "stageId", "", nullable=False).field == "stageId"
    assert field_error(v.reference, "stageId", "x" * 65).field == "stageId"
    for bad in (5, True, [UUID], {"id": UUID}, Decimal("1")):
        assert field_error(v.reference, "stageId", bad).field == "stageId"


# --- timestamp ---------------------------------------------------------------------------


def test_timestamp() -> None:
    expected = datetime(2025, 4, 7, 16, 26, 19, tzinfo=UTC)
    assert v.timestamp("expirationDate", "2025-04-07T21:56:19+05:30") == expected
    assert v.timestamp("expirationDate", "2025-04-07T16:26:19Z") == expected
    assert v.timestamp("expirationDate", "2025-04-07T16:26:19") == expected
    assert v.timestamp("expirationDate", None) is None
    assert v.timestamp("expirationDate", "") is None  # none (docs/api.md 5.18)
    with pytest.raises(FieldError):
        v.timestamp("activity.date", "", nullable=False)


@pytest.mark.parametrize(
    "value", [" ", "tomorrow", "2025-13-01", "2025-02-30T00:00:00Z", 1744062979, True, [], {}]
)
def test_timestamp_rejects(value: object) -> None:
    assert field_error(v.timestamp, "expirationDate", value).field == "expirationDate"


def test_timestamp_not_nullable() -> None:
    exc = field_error(v.timestamp, "date", None, nullable=False)
    assert exc.field == "date"


# --- money -------------------------------------------------------------------------------


def test_money() -> None:
    assert v.money("amount", Decimal("1.50000")) == Decimal("1.5")
    assert v.money("amount", 0) == 0
    assert v.money("amount", 10**12) == 10**12


@pytest.mark.parametrize(
    "value",
    [
        Decimal("-0.01"),
        Decimal("1.00001"),
        Decimal("1.00000000000000000000000000000001"),
        10**12 + 1,
        "100",
        True,
        None,
        Decimal("NaN"),
        Decimal("Infinity"),
    ],
)
def test_money_rejects(value: object) -> None:
    assert field_error(v.money, "finalAmount", value).field == "finalAmount"


# --- email -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ana@example.com", "ana@example.com"),
        ("  ana@example.com  ", "ana@example.com"),
        ("Ana.Diaz+crm@Example.co.uk", "Ana.Diaz+crm@Example.co.uk"),
        ("a_b-c@sub-domain.example.org", "a_b-c@sub-domain.example.org"),
        ("x@a1.io", "x@a1.io"),
        # International domains (IDNA) and UTF-8 local parts (RFC 6531), kept as written.
        ("ana@correo.perú", "ana@correo.perú"),
        ("josé@ejemplo.com", "josé@ejemplo.com"),
        ("用户@例子.广告", "用户@例子.广告"),
    ],
)
def test_email_accepts(value: str, expected: str) -> None:
    assert v.email("email", value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "ana",
        "ana@",
        "@example.com",
        "ana@example",
        "ana@@example.com",
        "ana @example.com",
        "ana@exa mple.com",
        "ana@example..com",
        "ana..diaz@example.com",
        "ana@-example.com",
        "ana@example-.com",
        "ana@example.com.",
        "ana@.example.com",
        '"ana"@example.com',
        "ana<x>@example.com",
        "a" * 65 + "@example.com",
        "ana@" + "a" * 250 + ".com",
        "ana@example.com\nx",
        "ana@perú",  # one label, as ana@example
        "ana@correo..perú",
        "ana@-correo.perú",
        "jo sé@ejemplo.com",
        "josé\u0000@ejemplo.com",
        "ana@correo.per\u00fa\u200b" + "ú" * 70,  # a label over 63 characters
        5,
        True,
        ["ana@example.com"],
    ],
)
def test_email_rejects(value: object) -> None:
    assert field_error(v.email, "email", value).field == "email"


def test_email_empty_or_null() -> None:
    assert v.email("email", None) is None
    assert v.email("email", "") is None
    assert v.email("email", "   ") is None
    assert field_error(v.email, "email", None, nullable=False).field == "email"
    assert field_error(v.email, "email", "", nullable=False).field == "email"


def test_email_length_limit() -> None:
    local = "a" * 64
    longest = f"{local}@{'b' * 63}.{'b' * 63}.{'b' * 57}.com"
    assert len(longest) == 254
    assert v.email("email", longest) == longest
    too_long = f"{local}@{'b' * 63}.{'b' * 63}.{'b' * 58}.com"
    assert len(too_long) == 255
    assert field_error(v.email, "email", too_long).field == "email"


# --- phone -------------------------------------------------------------------------------


def test_phone() -> None:
    assert v.phone("internalWhatsappNumber", "+51 987-654-321") == "51987654321"
    assert v.phone("internalWhatsappNumber", "") == ""
    assert v.phone("internalWhatsappNumber", "   ") == ""


@pytest.mark.parametrize("value", ["abc", "12345", "++51987654321", "1" * 16, 51987654321, None])
def test_phone_rejects(value: object) -> None:
    exc = field_error(v.phone, "internalWhatsappNumber", value)
    assert exc.field == "internalWhatsappNumber"


def test_phone_not_empty_when_required() -> None:
    assert field_error(v.phone, "cellphone", "", allow_empty=False).field == "cellphone"
    assert field_error(v.phone, "cellphone", "  ", allow_empty=False).field == "cellphone"


# --- string lists and files --------------------------------------------------------------


def test_files() -> None:
    assert v.files("files", []) == []
    refs = ["https://example.com/a.pdf", "file-ref-1"]
    assert v.files("files", refs) == refs
    assert v.files("files", ["f"] * 100) == ["f"] * 100
    long_ref = "x" * 2048
    assert v.files("files", [long_ref]) == [long_ref]


def test_files_rejects() -> None:
    assert field_error(v.files, "files", "a.pdf").field == "files"
    assert field_error(v.files, "files", None).field == "files"
    assert field_error(v.files, "files", {"0": "a"}).field == "files"
    exc = field_error(v.files, "files", ["f"] * 101)
    assert exc.field == "files"
    assert "100" in exc.message
    assert field_error(v.files, "files", ["ok", 5]).field == "files[1]"
    assert field_error(v.files, "files", [None]).field == "files[0]"
    assert field_error(v.files, "files", ["ok", "ok", ""]).field == "files[2]"
    assert field_error(v.files, "files", ["x" * 2049]).field == "files[0]"
    assert field_error(v.files, "files", [{"url": "a"}]).field == "files[0]"


def test_string_list_limits_are_parameters() -> None:
    assert v.string_list("x", ["ab"], max_items=1, max_len=2) == ["ab"]
    assert field_error(v.string_list, "x", ["a", "b"], max_items=1, max_len=2).field == "x"
    assert field_error(v.string_list, "x", ["abc"], max_items=1, max_len=2).field == "x[0]"


# --- tag ids -----------------------------------------------------------------------------


def test_tag_ids_strings_and_objects() -> None:
    assert v.tag_ids("tags", []) == []
    assert v.tag_ids("tags", ["a", "b"]) == ["a", "b"]
    assert v.tag_ids("tags", [{"id": "a"}, "b"]) == ["a", "b"]
    # A tag as shown in a contact (id, name, color, assignmentDate) names its id.
    shown = {"id": "a", "name": "VIP", "color": "#fff", "assignmentDate": "2025-01-01"}
    assert v.tag_ids("tags", [shown]) == ["a"]


def test_tag_ids_keep_order_and_collapse_duplicates_at_first_position() -> None:
    assert v.tag_ids("tags", ["c", "a", "c", "b", "a"]) == ["c", "a", "b"]
    assert v.tag_ids("tags", [{"id": "b"}, "a", {"id": "b"}, "b"]) == ["b", "a"]


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ("a", "tags"),
        (None, "tags"),
        ({"id": "a"}, "tags"),
        (5, "tags"),
        ([5], "tags[0]"),
        (["a", None], "tags[1]"),
        (["a", ""], "tags[1]"),
        (["a", "b", {"name": "x"}], "tags[2]"),
        ([{"id": 5}], "tags[0]"),
        ([{"id": None}], "tags[0]"),
        ([{"id": ""}], "tags[0]"),
        ([["a"]], "tags[0]"),
        ([True], "tags[0]"),
    ],
)
def test_tag_ids_rejects(value: object, field: str) -> None:
    assert field_error(v.tag_ids, "tags", value).field == field


def test_tag_ids_limit_of_100() -> None:
    hundred = [f"t{i}" for i in range(100)]
    assert v.tag_ids("tags", hundred) == hundred
    exc = field_error(v.tag_ids, "tags", [*hundred, "t100"])
    assert exc.field == "tags"
    assert "100" in exc.message
    # The limit counts tags, so repeating one does not count twice.
    assert v.tag_ids("tags", hundred + hundred[:50]) == hundred


def test_tag_ids_many_distinct_ids_are_rejected_quickly() -> None:
    # About 1 MiB of body (the size limit) holds ~100,000 distinct short ids; rejecting them
    # must not take time quadratic in their number.
    finishes_within(
        10,
        """
        from chatcrm.core.values import FieldError, tag_ids
        try:
            tag_ids("tags", [f"t{i}" for i in range(100_000)])
        except FieldError as exc:
            assert exc.field == "tags"
        else:
            raise AssertionError("accepted")
        """,
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from([f"t{i}" for i in range(15)]), max_size=60), st.randoms())
def test_tag_ids_property(ids: list[str], rnd: Any) -> None:
    items: list[object] = [{"id": i} if rnd.random() < 0.5 else i for i in ids]
    result = v.tag_ids("tags", items)
    assert result == list(dict.fromkeys(ids))


# --- variables ---------------------------------------------------------------------------


def test_variables_value_types() -> None:
    given_vars = [
        {"name": "s", "value": "text"},
        {"name": "i", "value": 42},
        {"name": "neg", "value": -3},
        {"name": "d", "value": Decimal("1.5")},
        {"name": "t", "value": True},
        {"name": "f", "value": False},
        {"name": "n", "value": None},
        {"name": "empty", "value": ""},
    ]
    assert v.variables("variables", given_vars) == given_vars
    assert v.variables("variables", []) == []


def test_variables_element_shape_and_key_order() -> None:
    result = v.variables("variables", [{"value": 1, "name": "a"}])
    assert result == [{"name": "a", "value": 1}]
    assert list(result[0]) == ["name", "value"]


def test_variables_later_value_of_a_name_wins() -> None:
    result = v.variables(
        "variables",
        [{"name": "a", "value": 1}, {"name": "b", "value": 2}, {"name": "a", "value": 3}],
    )
    assert len(result) == 2
    assert {item["name"]: item["value"] for item in result} == {"a": 3, "b": 2}


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"name": "a", "value": 1}, "variables"),
        ("a=1", "variables"),
        (None, "variables"),
        (["a"], "variables[0]"),
        ([{"name": "a", "value": 1}, 5], "variables[1]"),
        ([{"name": "a"}], "variables[0]"),
        ([{"value": 1}], "variables[0]"),
        ([{}], "variables[0]"),
        ([{"name": "a", "value": 1, "type": "number"}], "variables[0]"),
        ([{"key": "a", "value": 1}], "variables[0]"),
        ([{"name": 5, "value": 1}], "variables[0].name"),
        ([{"name": None, "value": 1}], "variables[0].name"),
        ([{"name": "", "value": 1}], "variables[0].name"),
        ([{"name": "  ", "value": 1}], "variables[0].name"),
        ([{"name": "x" * 201, "value": 1}], "variables[0].name"),
        ([{"name": "a", "value": [1]}], "variables[0].value"),
        ([{"name": "a", "value": {"b": 1}}], "variables[0].value"),
        ([{"name": "a", "value": "x" * 10_001}], "variables[0].value"),
        ([{"name": "a", "value": 10**31}], "variables[0].value"),
    ],
)
def test_variables_rejects(value: object, field: str) -> None:
    assert field_error(v.variables, "variables", value).field == field


def test_variables_unknown_key_is_named() -> None:
    exc = field_error(v.variables, "variables", [{"name": "a", "value": 1, "type": "number"}])
    assert "type" in exc.message


def test_variables_limits() -> None:
    assert v.variables("variables", [{"name": "x" * 200, "value": "y" * 10_000}]) == [
        {"name": "x" * 200, "value": "y" * 10_000}
    ]
    two_hundred = [{"name": f"v{i}", "value": i} for i in range(200)]
    assert v.variables("variables", two_hundred) == two_hundred
    exc = field_error(v.variables, "variables", [*two_hundred, {"name": "v200", "value": 0}])
    assert exc.field == "variables"
    assert "200" in exc.message
    # The limit counts distinct names.
    repeated = two_hundred + [{"name": "v0", "value": "again"}] * 50
    assert len(v.variables("variables", repeated)) == 200


def test_variable_numbers_are_below_2_63_in_magnitude_either_sign() -> None:
    for edge in (2**63 - 1, -(2**63) + 1):
        assert v.variables("variables", [{"name": "a", "value": edge}])[0]["value"] == edge
    for beyond in (2**63, -(2**63)):  # -2^63 fits a signed 64-bit integer, not the rule
        exc = field_error(v.variables, "variables", [{"name": "a", "value": beyond}])
        assert exc.field == "variables[0].value"


@pytest.mark.parametrize("too_large", [10**31, Decimal("1E+31"), Decimal("1E+1000000")])
def test_variables_same_number_same_answer_however_written(too_large: object) -> None:
    # 10000000000000000000000000000000 and 1e31 are the same JSON number: a value of 2^63
    # or more in magnitude is refused, so it must be refused in exponent form too (1e1000000
    # would otherwise reach storage, which cannot render it).
    exc = field_error(v.variables, "variables", [{"name": "a", "value": too_large}])
    assert exc.field == "variables[0].value"
    # copy_negate: unary minus would round 1E+1000000 against the context and overflow.
    negative = too_large.copy_negate() if isinstance(too_large, Decimal) else -too_large  # type: ignore[operator]
    exc = field_error(v.variables, "variables", [{"name": "a", "value": negative}])
    assert exc.field == "variables[0].value"


@pytest.mark.parametrize(
    "number",
    [
        Decimal("1.5"),
        Decimal("-2500.75"),
        Decimal("1E-7"),
        10**30,
        -(10**30),
        2**64,
        -(2**63) - 1,
        Decimal("0.1234567890123456789012345678901"),
        Decimal("12345678901234567890123456789.5"),
    ],
    ids=str,
)
def test_variable_numbers_are_stored_exactly_or_refused(number: object) -> None:
    # Variables are kept as JSON text; a number must come back as sent, never rounded.
    try:
        clean = v.variables("variables", [{"name": "n", "value": number}])
    except FieldError:
        return
    stored = load_exact(to_text(clean))
    assert stored == [{"name": "n", "value": number}]


variable_values = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=20),
    st.integers(min_value=-(2**63) + 1, max_value=2**63 - 1),
    st.decimals(min_value=-(10**12), max_value=10**12, places=6, allow_nan=False),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["a", "b", "c", "d", "name with space", "ñ"]), variable_values),
        max_size=30,
    )
)
def test_variables_merge_property(pairs: list[tuple[str, Any]]) -> None:
    result = v.variables("variables", [{"name": n, "value": val} for n, val in pairs])
    expected: dict[str, Any] = {}
    for name, val in pairs:
        expected[name] = val
    assert {item["name"]: item["value"] for item in result} == expected
    assert len(result) == len(expected)
    assert all(list(item) == ["name", "value"] for item in result)


def test_every_bad_element_of_a_list_is_reported() -> None:
    """A form shows all its errors at once: each bad element is named, not the first only."""
    cases = [
        (v.files, "files", ["", "ok", 5], ["files[0]", "files[2]"]),
        (v.tag_ids, "tags", [5, "t", {}], ["tags[0]", "tags[2]"]),
        (
            v.variables,
            "variables",
            [{"name": "", "value": 1}, {"name": "a", "value": {}}, "x", {"name": " ", "value": []}],
            [
                "variables[0].name",
                "variables[1].value",
                "variables[2]",
                "variables[3].name",
                "variables[3].value",
            ],
        ),
    ]
    for check, field, value, fields in cases:
        with pytest.raises(FieldError) as raised:
            check(field, value)
        assert [e.field for e in raised.value.each()] == fields
