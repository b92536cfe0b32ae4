"""Record ids: UUID version 7 strings (decision in the shared brief), time-ordered."""

from __future__ import annotations

import re
import time
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatcrm.core.ids import is_id, new_id
from tests.client import UUID7


def id_millis(value: str) -> int:
    return int(value.replace("-", "")[:12], 16)


def test_new_id_shape() -> None:
    value = new_id()
    assert isinstance(value, str)
    assert len(value) == 36
    assert UUID7.match(value), value
    parsed = uuid.UUID(value)
    assert str(parsed) == value  # canonical lowercase form
    assert parsed.version == 7
    assert parsed.variant == uuid.RFC_4122


def test_new_id_carries_the_creation_time_in_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    value = new_id()
    after = time.time_ns() // 1_000_000
    assert before <= id_millis(value) <= after


def test_ids_are_unique() -> None:
    ids = [new_id() for _ in range(20_000)]
    assert len(set(ids)) == len(ids)
    assert all(UUID7.match(i) for i in ids[:1000])


def test_random_bits_vary() -> None:
    ids = [new_id() for _ in range(200)]
    tails = {i[-12:] for i in ids}
    assert len(tails) == len(ids)


def test_later_ids_sort_after_earlier_ones() -> None:
    previous = new_id()
    for _ in range(20):
        start = id_millis(previous)
        # Wait for the clock to reach the next millisecond.
        while time.time_ns() // 1_000_000 <= start:
            time.sleep(0.0005)
        current = new_id()
        assert current > previous
        assert uuid.UUID(current).int > uuid.UUID(previous).int
        previous = current


def test_ids_sort_by_time_across_a_batch() -> None:
    ids = []
    for _ in range(30):
        ids.append(new_id())
        time.sleep(0.002)
    assert ids == sorted(ids)
    millis = [id_millis(i) for i in ids]
    assert millis == sorted(millis)
    assert len(set(millis)) == len(millis)


def test_is_id_of_new_ids() -> None:
    for _ in range(100):
        assert is_id(new_id())


@pytest.mark.parametrize(
    "value",
    [
        "01961234-5678-7abc-8def-0123456789ab",
        "00000000-0000-0000-0000-000000000000",
        "ffffffff-ffff-7fff-bfff-ffffffffffff",
    ],
)
def test_is_id_accepts_the_shape(value: str) -> None:
    assert is_id(value)


@pytest.mark.parametrize(
    "value",
    [
        "",
        "not-an-id",
        "0196123456787abc8def0123456789ab",  # no dashes
        "01961234-5678-7abc-8def-0123456789a",  # one short
        "01961234-5678-7abc-8def-0123456789abc",  # one long
        "01961234-5678-7abc-8def-0123456789ag",  # not hex
        "{01961234-5678-7abc-8def-0123456789ab}",
        "urn:uuid:01961234-5678-7abc-8def-0123456789ab",
        " 01961234-5678-7abc-8def-0123456789ab",
        "01961234-5678-7abc-8def-0123456789ab ",
        "01961234-5678-7abc-8def-0123456789ab\n",
        "01961234-5678-7abc-8def-0123456789ab\x00",
        "0196123-45678-7abc-8def-0123456789ab",
        "01961234-5678-7abc-8def-0123456789ab' OR '1'='1",
        "０1961234-5678-7abc-8def-0123456789ab",
    ],
)
def test_is_id_rejects(value: str) -> None:
    assert not is_id(value)


@pytest.mark.parametrize(
    "value",
    [None, 1, 0x01961234, b"01961234-5678-7abc-8def-0123456789ab", ["x"], {"id": "x"}, True],
)
def test_is_id_of_non_strings(value: object) -> None:
    assert is_id(value) is False


def test_is_id_of_a_uuid_object_is_false() -> None:
    assert is_id(uuid.UUID("01961234-5678-7abc-8def-0123456789ab")) is False


@settings(max_examples=300, deadline=None)
@given(st.uuids())
def test_is_id_of_any_canonical_uuid(value: uuid.UUID) -> None:
    assert is_id(str(value))


@settings(max_examples=500, deadline=None)
@given(st.text(max_size=40))
def test_is_id_of_arbitrary_text(value: str) -> None:
    result = is_id(value)
    assert result is (re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", value) is not None)
