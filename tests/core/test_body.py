"""Reading JSON bodies (contract section 0 and 5): exact decimals, NaN/Infinity refused,
strings PostgreSQL and UTF-8 can hold, malformed input a 400 `BAD_REQUEST`, never a 500."""

from __future__ import annotations

import contextlib
import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcrm.api.body import is_json_media_type, parse_json
from chatcrm.core.errors import BadRequest


def bad_request(raw: bytes) -> BadRequest:
    with pytest.raises(BadRequest) as info:
        parse_json(raw)
    exc = info.value
    assert exc.status == 400
    assert exc.error_code == "BAD_REQUEST"
    assert exc.message
    return exc


# --- numbers -----------------------------------------------------------------------------


def test_numbers_with_a_fraction_or_exponent_are_exact_decimals() -> None:
    value = parse_json(b'{"a": 1.5, "b": 0.1, "c": 1e2, "d": 2500.7500, "e": -0.0}')
    assert value == {
        "a": Decimal("1.5"),
        "b": Decimal("0.1"),
        "c": Decimal("100"),
        "d": Decimal("2500.75"),
        "e": Decimal("0"),
    }
    assert all(isinstance(v, Decimal) for v in value.values())
    assert str(value["d"]) == "2500.7500"  # the text as sent, not a float's approximation
    # and each remembers its spelling, for the values given back as sent (variables)
    assert [v.text for v in value.values()] == ["1.5", "0.1", "1e2", "2500.7500", "-0.0"]
    assert type(value["c"] + 1) is Decimal  # arithmetic (money's normalising) drops it


def test_long_decimals_keep_every_digit() -> None:
    value = parse_json(b'{"amount": 1.00000000000000000000000000000001}')
    assert value["amount"] == Decimal("1.00000000000000000000000000000001")
    assert value["amount"] != 1


def test_integers_stay_integers() -> None:
    value = parse_json(b'{"a": 3, "b": -7, "c": 123456789012345678901234567890}')
    assert value == {"a": 3, "b": -7, "c": 123456789012345678901234567890}
    assert all(type(v) is int for v in value.values())


@pytest.mark.parametrize(
    "raw",
    [
        b"NaN",
        b"Infinity",
        b"-Infinity",
        b'{"amount": NaN}',
        b'{"amount": Infinity}',
        b'{"amount": -Infinity}',
        b'{"a": [1, {"b": NaN}]}',
        b'[{"x": [-Infinity]}]',
        b'{"amount": nan}',
        b'{"amount": inf}',
    ],
)
def test_nan_and_infinity_are_rejected(raw: bytes) -> None:
    bad_request(raw)


def test_integer_too_long_to_convert_is_a_bad_request() -> None:
    bad_request(b'{"a": ' + b"1" * 5000 + b"}")


# --- encoding ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b'{"name": "\xff"}',
        b'{"name": "caf\xe9"}',  # Latin-1, not UTF-8
        b'{"name": "\xc3"}',  # truncated sequence
        b'{"name": "\xc0\xaf"}',  # overlong encoding
        b'{"name": "\xed\xa0\x80"}',  # a surrogate encoded in UTF-8
        '{"name": "Ana"}'.encode("utf-16"),
    ],
)
def test_invalid_utf8_is_rejected(raw: bytes) -> None:
    bad_request(raw)


def test_utf8_bom_is_tolerated() -> None:
    assert parse_json(b'\xef\xbb\xbf{"name": "Ana"}') == {"name": "Ana"}


def test_only_one_bom_is_tolerated() -> None:
    bad_request(b'\xef\xbb\xbf\xef\xbb\xbf{"name": "Ana"}')


def test_non_ascii_text_is_kept() -> None:
    assert parse_json('{"name": "Zoë 日本 😀"}'.encode()) == {"name": "Zoë 日本 😀"}


# --- strings that cannot be stored -------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b'{"name": "a\\u0000b"}',
        b'{"name": "\\u0000"}',
        b'{"a\\u0000": 1}',
        b'{"tags": ["ok", "x\\u0000"]}',
        b'{"variables": [{"name": "v", "value": "\\u0000"}]}',
        b'{"outer": {"in\\u0000ner": true}}',
        b'["\\u0000"]',
        b'"\\u0000"',
    ],
)
def test_nul_character_is_rejected_anywhere(raw: bytes) -> None:
    bad_request(raw)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"name": "\\ud800"}',
        b'{"name": "\\uDFFF"}',
        b'{"name": "\\udc00"}',
        b'{"name": "a\\ud83d"}',
        b'{"name": "\\ude00\\ud83d"}',  # reversed pair
        b'{"name": "\\ud83d\\ud83d"}',  # two high halves
        b'{"\\ud800": 1}',
        b'{"files": ["ok", "\\udbff"]}',
        b'[[{"deep": ["\\ud800x"]}]]',
    ],
)
def test_lone_surrogates_are_rejected_anywhere(raw: bytes) -> None:
    bad_request(raw)


def test_valid_surrogate_pair_is_accepted() -> None:
    assert parse_json(b'{"name": "\\ud83d\\ude00"}') == {"name": "😀"}
    assert parse_json(b'{"name": "\\uD83D\\uDE00!"}') == {"name": "😀!"}
    assert parse_json(b'{"\\ud83d\\ude00": ["\\ud83d\\ude00"]}') == {"😀": ["😀"]}


def test_escaped_backslash_before_u0000_is_ordinary_text() -> None:
    # `\\u0000` in JSON is a backslash followed by "u0000", not a NUL character.
    assert parse_json(b'{"name": "\\\\u0000"}') == {"name": "\\u0000"}
    assert parse_json(b'{"name": "\\\\ud800"}') == {"name": "\\ud800"}


def test_other_escapes_are_accepted() -> None:
    assert parse_json(b'{"a": "\\u0041\\n\\t\\"\\/\\u00e9"}') == {"a": 'A\n\t"/é'}


def test_raw_control_characters_in_strings_are_rejected() -> None:
    bad_request(b'{"name": "a\x00b"}')
    bad_request(b'{"name": "a\nb"}')


# --- malformed ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"   ",
        b"{",
        b'{"a": 1',
        b'{"a": 1,}',
        b"[1, 2,]",
        b"{'a': 1}",
        b"{a: 1}",
        b'{"a": 1} trailing',
        b'{"a": 1}{"b": 2}',
        b'{"a": 01}',
        b'{"a": .5}',
        b'{"a": 1.}',
        b'{"a": +1}',
        b'{"a": 0x10}',
        b'{"a": undefined}',
        b'{"a": True}',
        b'{"a": 1} // comment',
        b'{"a": "\\x41"}',
    ],
)
def test_malformed_json_is_rejected(raw: bytes) -> None:
    bad_request(raw)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b"{}", {}),
        (b"[]", []),
        (b"null", None),
        (b"true", True),
        (b'"text"', "text"),
        (b'  \n{"a": null, "b": false}\n  ', {"a": None, "b": False}),
    ],
)
def test_any_json_value_parses(raw: bytes, expected: Any) -> None:
    assert parse_json(raw) == expected


# --- nesting -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
        b"[" * 100_000,
        b'{"a":[' * 20_000 + b'"\\u0000"' + b"]}" * 20_000,
    ],
)
def test_deep_nesting_is_a_bad_request(raw: bytes) -> None:
    bad_request(raw)


@pytest.mark.parametrize("inner", [b"1", b'"x"', b'"\\u0000"', b'"\\ud800"', b'"\\ud83d\\ude00"'])
@pytest.mark.parametrize("kind", ["array", "object"])
def test_nesting_near_the_limit_never_escapes_as_recursion_error(kind: str, inner: bytes) -> None:
    for depth in range(850, 1100, 3):
        if kind == "array":
            raw = b"[" * depth + inner + b"]" * depth
        else:
            raw = b'{"k":' * depth + inner + b"}" * depth
        # Any exception but BadRequest (RecursionError above all) fails the test.
        with contextlib.suppress(BadRequest):
            parse_json(raw)


# --- property: any JSON document we can write reads back as the same value ---------------

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.text(max_size=20),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.text(max_size=10), children, max_size=5),
    ),
    max_leaves=10,
)


def contains_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, list):
        return any(contains_nul(v) for v in value)
    if isinstance(value, dict):
        return any(contains_nul(k) or contains_nul(v) for k, v in value.items())
    return False


@settings(max_examples=200, deadline=None)
@given(json_values, st.booleans())
def test_round_trip_of_json_documents(value: Any, ascii_only: bool) -> None:
    raw = json.dumps(value, ensure_ascii=ascii_only).encode()
    if contains_nul(value):
        bad_request(raw)
    else:
        assert parse_json(raw) == value


@settings(max_examples=300, deadline=None)
@given(st.decimals(allow_nan=False, allow_infinity=False))
def test_any_finite_decimal_text_reads_back_exactly(d: Decimal) -> None:
    text = str(d)
    value = parse_json(text.encode())
    assert value == d
    if type(value) is Decimal:
        assert str(value) == text


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60))
def test_arbitrary_bytes_never_raise_anything_but_bad_request(raw: bytes) -> None:
    with contextlib.suppress(BadRequest):
        parse_json(raw)


# --- media types -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        'application/json; charset="utf-8"',
        "application/json; charset=utf8",
        "Application/JSON",
        "  application/json  ",
        "application/vnd.api+json",
        "application/problem+json; charset=utf-8",
        "application/json; boundary=x",
    ],
)
def test_json_media_types(content_type: str) -> None:
    assert is_json_media_type(content_type) is True


@pytest.mark.parametrize(
    "content_type",
    [
        "",
        "text/plain",
        "text/json",
        "text/html; charset=utf-8",
        "application/xml",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/jsonx",
        "application/json-patch",
        "application/octet-stream",
        "json",
        "application/json; charset=latin-1",
        "application/json; charset=utf-16",
        "application/vnd.api+json; charset=iso-8859-1",
    ],
)
def test_non_json_media_types(content_type: str) -> None:
    assert is_json_media_type(content_type) is False
