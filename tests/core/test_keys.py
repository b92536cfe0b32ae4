"""API keys (contract section 0 and 6): `ccrm_<key id>_<secret>`, shown once, stored only as
a hash; anything malformed is simply not a key."""

from __future__ import annotations

import hashlib
import re
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcrm.auth.keys import PREFIX, hash_secret, new_key, parse_key, secret_matches
from chatcrm.core.ids import new_id

KEY_SHAPE = re.compile(r"^ccrm_[0-9a-f]{32}_[A-Za-z0-9_\-]{20,100}$")


def a_key() -> tuple[str, str, str]:
    key_id = new_id()
    key, stored = new_key(key_id)
    return key_id, key, stored


def test_new_key_shape() -> None:
    key_id, key, _ = a_key()
    assert key.startswith(PREFIX)
    assert PREFIX == "ccrm_"
    assert KEY_SHAPE.match(key)
    assert key[len(PREFIX) : len(PREFIX) + 32] == key_id.replace("-", "")


def test_round_trip() -> None:
    key_id, key, stored = a_key()
    parsed = parse_key(key)
    assert parsed is not None
    parsed_id, secret = parsed
    assert parsed_id == key_id
    assert key == f"ccrm_{key_id.replace('-', '')}_{secret}"
    assert secret_matches(secret, stored)


def test_stored_hash_is_not_the_key() -> None:
    _, key, stored = a_key()
    parsed = parse_key(key)
    assert parsed is not None
    _, secret = parsed
    assert stored != key
    assert stored != secret
    assert secret not in stored
    assert key not in stored
    assert re.fullmatch(r"[0-9a-f]{64}", stored)
    assert stored == hashlib.sha256(secret.encode()).hexdigest()
    assert hash_secret(secret) == stored


def test_secret_has_at_least_256_bits() -> None:
    _, key, _ = a_key()
    parsed = parse_key(key)
    assert parsed is not None
    # token_urlsafe: 6 bits per character; 43 characters carry 256 bits.
    assert len(parsed[1]) >= 43


def test_keys_are_fresh_each_time() -> None:
    key_id = new_id()
    keys = {new_key(key_id)[0] for _ in range(50)}
    assert len(keys) == 50


def test_wrong_secret_does_not_match() -> None:
    _, key, stored = a_key()
    parsed = parse_key(key)
    assert parsed is not None
    _, secret = parsed
    assert not secret_matches(secret + "x", stored)
    assert not secret_matches(secret[:-1], stored)
    assert not secret_matches("", stored)
    assert not secret_matches(secret.upper() if secret != secret.upper() else "x", stored)
    other_stored = new_key(new_id())[1]
    assert not secret_matches(secret, other_stored)
    # The stored hash itself is not a usable secret.
    assert not secret_matches(stored, stored)


def test_parse_key_formats_the_id_as_a_uuid() -> None:
    hex_id = "0123456789abcdef0123456789abcdef"
    parsed = parse_key(f"ccrm_{hex_id}_{'s' * 43}")
    assert parsed == ("01234567-89ab-cdef-0123-456789abcdef", "s" * 43)


def test_secret_may_contain_underscores_and_dashes() -> None:
    hex_id = "0" * 32
    secret = "a_b-c_" * 5
    assert parse_key(f"ccrm_{hex_id}_{secret}") == (str(uuid.UUID(hex_id)), secret)


_GOOD = "ccrm_" + "a" * 32 + "_" + "S" * 43


@pytest.mark.parametrize(
    "raw",
    [
        "",
        "ccrm_",
        "ccrm__",
        "ccrm",
        "S" * 43,
        "a" * 32 + "_" + "S" * 43,  # no prefix
        "CCRM_" + "a" * 32 + "_" + "S" * 43,  # prefix is case-sensitive
        "crm_" + "a" * 32 + "_" + "S" * 43,
        "ccrm-" + "a" * 32 + "_" + "S" * 43,
        "ccrm_" + "a" * 31 + "_" + "S" * 43,  # id one short
        "ccrm_" + "a" * 33 + "_" + "S" * 43,  # id one long
        "ccrm_" + "A" * 32 + "_" + "S" * 43,  # id must be lowercase hex
        "ccrm_" + "g" * 32 + "_" + "S" * 43,  # not hex
        "ccrm_" + "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa" + "_" + "S" * 43,  # dashed id
        "ccrm_" + "a" * 32 + "S" * 43,  # no separator
        "ccrm_" + "a" * 32 + "_",  # no secret
        "ccrm_" + "a" * 32 + "_" + "S" * 19,  # secret too short
        "ccrm_" + "a" * 32 + "_" + "S" * 101,  # secret too long
        "ccrm_" + "a" * 32 + "_" + "S" * 42 + "=",
        "ccrm_" + "a" * 32 + "_" + "S" * 42 + "+",
        "ccrm_" + "a" * 32 + "_" + "S" * 42 + "/",
        "ccrm_" + "a" * 32 + "_" + "S" * 42 + ".",
        "ccrm_" + "a" * 32 + "_" + "S" * 42 + "é",
        "ccrm_" + "a" * 32 + "_" + "S" * 20 + " " + "S" * 20,
        " " + _GOOD,
        _GOOD + " ",
        "Bearer " + _GOOD,
        _GOOD + "\n",
        _GOOD + "\r\n",
        "\n" + _GOOD,
        _GOOD + "\x00",
    ],
)
def test_malformed_keys_are_none(raw: str) -> None:
    assert parse_key(raw) is None


def test_well_formed_reference_key() -> None:
    assert parse_key(_GOOD) == (str(uuid.UUID("a" * 32)), "S" * 43)


@settings(max_examples=200, deadline=None)
@given(st.uuids())
def test_round_trip_over_random_key_ids(key_uuid: uuid.UUID) -> None:
    key_id = str(key_uuid)
    key, stored = new_key(key_id)
    assert KEY_SHAPE.match(key)
    parsed = parse_key(key)
    assert parsed is not None
    parsed_id, secret = parsed
    assert parsed_id == key_id
    assert secret_matches(secret, stored)
    assert not secret_matches(secret + "A", stored)
    assert stored != key and secret not in stored


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=160))
def test_parse_key_of_arbitrary_text(raw: str) -> None:
    parsed = parse_key(raw)
    if parsed is None:
        return
    key_id, secret = parsed
    assert raw == f"ccrm_{key_id.replace('-', '')}_{secret}"
    assert str(uuid.UUID(key_id)) == key_id
