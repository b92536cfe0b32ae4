"""Create and update bodies validated from a field table (records/bodies.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from chatcrm.core.errors import BadRequest
from chatcrm.records import bodies
from chatcrm.records.array_types import TAG_IDS
from chatcrm.records.fields import NULL, OPTIONAL, REQUIRED, UPDATE, Field, FieldTable
from chatcrm.records.scalar_types import BOOLEAN, EMAIL, MONEY, NAME, POSITION, TIMESTAMP, Phone

# fmt: off
TABLE = FieldTable("trial", [
    Field("name", NAME, "name", REQUIRED, UPDATE),
    Field("isRead", BOOLEAN, "is_read", OPTIONAL, UPDATE),
    Field("amount", MONEY, "amount", REQUIRED, UPDATE),
    Field("email", EMAIL, "email", NULL, OPTIONAL, UPDATE),
    Field("phone", Phone(), "phone", OPTIONAL, UPDATE, aliases="cellphone"),
    Field("orderInCards", POSITION, "order_in_cards", UPDATE),
    Field("date", TIMESTAMP, "date", NULL, OPTIONAL, UPDATE),
    Field("tags", TAG_IDS, None, OPTIONAL, UPDATE),
])
# fmt: on


def test_every_update_error_is_collected_in_order() -> None:
    body = {"name": "", "isRead": "yes", "amount": Decimal("5.5"), "email": "nope"}
    given = bodies.update_values(TABLE, ["name", "isRead", "amount", "email"], body)
    assert given.clean == {"amount": Decimal("5.5")}
    assert [e.field for e in given.errors] == ["name", "isRead", "email"]
    assert all(e.message for e in given.errors)


def test_only_the_named_fields_are_read() -> None:
    given = bodies.update_values(TABLE, ["name"], {"name": "Ana", "isRead": "not checked"})
    assert given.clean == {"name": "Ana"}
    assert given.errors == []


def test_values_are_normalised() -> None:
    body = {
        "phone": "+51 987-654-321",
        "amount": Decimal("1.50000"),
        "orderInCards": Decimal("3.0"),
        "date": "2025-04-07T21:56:19Z",
        "tags": ["a", {"id": "a"}, "b"],
    }
    given = bodies.update_values(TABLE, list(body), body)
    assert given.errors == []
    assert given.clean == {
        "phone": "51987654321",
        "amount": Decimal("1.5"),
        "orderInCards": 3,
        "date": datetime(2025, 4, 7, 21, 56, 19, tzinfo=UTC),
        "tags": ["a", "b"],
    }
    assert list(given.clean) == list(body)


def test_null_is_refused_where_the_field_is_not_nullable() -> None:
    given = bodies.update_values(TABLE, ["isRead", "email"], {"isRead": None, "email": None})
    assert given.clean == {"email": None}
    assert [e.field for e in given.errors] == ["isRead"]


def test_a_create_reports_missing_required_fields_first_then_values_in_body_order() -> None:
    given = bodies.create_body(TABLE, {"isRead": "x", "email": "bad", "name": None})
    assert [e.field for e in given.errors] == ["name", "amount", "isRead", "email"]


def test_an_alias_names_its_own_errors_and_must_agree() -> None:
    given = bodies.create_body(
        TABLE, {"name": "A", "amount": 1, "cellphone": "51987654321", "phone": "51987654322"}
    )
    assert [(e.field, e.message) for e in given.errors] == [("cellphone", "differs from phone")]
    given = bodies.create_body(TABLE, {"name": "A", "amount": 1, "cellphone": "51987654321"})
    assert given.clean["phone"] == "51987654321"
    assert given.key("phone") == "cellphone"


def test_an_unknown_create_key_is_a_400_listing_the_accepted_ones() -> None:
    with pytest.raises(BadRequest) as raised:
        bodies.create_body(TABLE, {"name": "A", "nickname": "x"})
    assert "Accepted keys: amount, cellphone, date, email" in raised.value.message
    assert "workspaceId" in raised.value.message


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({"name": "x"}, "Missing 'paramToUpdate'"),
        ({"paramToUpdate": 3}, "must be a string"),
        ({"paramToUpdate": "name,"}, "at least one field"),
        ({"paramToUpdate": "nickname", "nickname": 1}, "cannot be updated"),
        ({"paramToUpdate": "name"}, "missing from the body"),
        ({"paramToUpdate": "name", "name": "x", "isRead": True}, "Unexpected body key"),
        ({"paramToUpdate": "name", "name": "x", "id": "other"}, "does not match"),
    ],
)
def test_update_structure_mistakes_are_400s(body: dict[str, object], problem: str) -> None:
    with pytest.raises(BadRequest) as raised:
        bodies.update_names(TABLE, body, record_id="this")
    assert problem in raised.value.message
