"""`shape=full` on the record lists (an extension for exports, docs/api.md 2.2): the records
as updates and creates show them, paged under the same tokens; any other shape is a 422."""

from __future__ import annotations

from tests.client import Api, error, error_fields, ok_data, unique_phone


def test_full_shape_shows_contacts_as_creates_answer_them(api: Api) -> None:
    first = api.create_contact(
        name="Ana",
        platformId=2,
        internalWhatsappNumber=unique_phone(),
        variables=[{"name": "plan", "value": "gold"}],
    )
    second = api.create_contact(name="Bea", platformId=2, internalWhatsappNumber=unique_phone())
    page = ok_data(api.get("/api/contact", params={"shape": "full", "pageSize": 1}))
    assert page["data"] == [second]
    token = page["continuationToken"]
    rest = ok_data(api.get("/api/contact", params={"shape": "full", "continuationToken": token}))
    assert rest["data"] == [first]
    assert rest["data"][0]["variables"] == [{"name": "plan", "value": "gold"}]
    read = ok_data(api.get("/api/contact", params={"shape": "read"}))["data"]
    assert "variables" not in read[0] and "internalWhatsappNumber" not in read[0]


def test_opportunities_have_one_shape(api: Api) -> None:
    api.create_opportunity(name="Deal", amount=10)
    full = ok_data(api.get("/api/opportunity", params={"shape": "full"}))["data"]
    read = ok_data(api.get("/api/opportunity"))["data"]
    assert full == read


def test_another_shape_is_a_422_with_the_filters(api: Api) -> None:
    body = error(
        api.get("/api/contact", params={"shape": "wide", "pageSize": "0"}), 422, "VALIDATION_ERROR"
    )
    assert error_fields(body) == ["pageSize", "shape"]


def test_an_import_may_say_how_an_opportunity_was_created(api: Api) -> None:
    """Contract G: opportunities created by an import get creationTypeId 2."""
    assert (
        api.create_opportunity(name="Imported", amount=5, creationTypeId=2)["creationTypeId"] == 2
    )
    assert api.create_opportunity(name="By API", amount=5)["creationTypeId"] == 1
    body = error(
        api.post("/api/opportunity", json={"name": "X", "amount": 1, "creationTypeId": 9}),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["creationTypeId"]
