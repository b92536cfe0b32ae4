"""Phones as people write them (contract N): '+', 00 and 011 read by libphonenumber (a
trunk `(0)` dropped), bare digits country code first unless the workspace's
`defaultCountry` reads them as a valid national number; stored as digits with the
country code, so one person written two ways is one contact."""

from __future__ import annotations

from typing import Any

import pytest

from tests.client import Api, error, error_fields, ok_data

UPDATED = "Workspace updated successfully."


def set_country(api: Api, country: Any) -> dict[str, Any]:
    data: dict[str, Any] = ok_data(
        api.put(f"/api/workspace/{api.ws}", json={"defaultCountry": country}), UPDATED
    )
    return data


def by_phone(api: Api, cellphone: str) -> list[str]:
    data = ok_data(api.get("/api/contact/searchByCellphone", params={"cellphone": cellphone}))
    return [data["contactId"]] if data["contactId"] else []


# The same reading on every backend: its Citus run adds nothing but time.
@pytest.mark.not_on_citus
@pytest.mark.parametrize(
    ("written", "stored"),
    [
        ("0051 922 333 444", "51922333444"),
        ("+51 (0) 922 333 444", "51922333444"),
        ("011 51 922 333 444", "51922333444"),
        ("+51 922-333-444", "51922333444"),
        ("51922333444", "51922333444"),
        # As pasted: the code in parentheses, no-break spaces, en dashes.
        ("(+51) 922 333 444", "51922333444"),
        ("+51\u00a0922\u00a0333\u00a0444", "51922333444"),
        ("+51\u2013922\u2013333\u2013444", "51922333444"),
    ],
)
def test_one_number_written_any_way_is_stored_alike(api: Api, written: str, stored: str) -> None:
    contact = api.create_contact(internalWhatsappNumber=written)
    assert contact["internalWhatsappNumber"] == stored
    assert by_phone(api, "+51 922 333 444") == [contact["id"]]


def test_the_same_person_written_two_ways_is_a_duplicate(api: Api) -> None:
    first = api.create_contact(internalWhatsappNumber="0051 922 333 444")
    body = error(
        api.post(
            "/api/contact",
            json={"name": "Ana", "email": "ana2@phones.test", "phone": "+51 (0) 922 333 444"},
        ),
        409,
        "DUPLICATE_CONTACT",
    )
    assert body["data"]["existingId"] == first["id"]


# The same reading on every backend: its Citus run adds nothing but time.
@pytest.mark.not_on_citus
@pytest.mark.parametrize(
    "query",
    [
        "0051922333444",
        "+51 (0) 922 333 444",
        "011 51 922333444",
        "(+51) 922 333 444",
        "+51\u00a0922\u2013333\u2013444",
    ],
)
def test_search_by_cellphone_reads_the_query_alike(api: Api, query: str) -> None:
    contact = api.create_contact(internalWhatsappNumber="51922333444")
    assert by_phone(api, query) == [contact["id"]]


# The same reading on every backend: its Citus run adds nothing but time.
@pytest.mark.not_on_citus
def test_an_unencoded_plus_in_the_query_still_means_plus(api: Api) -> None:
    contact = api.create_contact(internalWhatsappNumber="+51 (0) 922 333 444")
    response = api.get("/api/contact/searchByCellphone?cellphone=+51+(0)+922+333+444")
    assert ok_data(response)["contactId"] == contact["id"]


def test_default_country_is_shown_after_agents_see_only_assigned(api: Api) -> None:
    data = ok_data(api.get(f"/api/workspace/{api.ws}"))
    assert list(data)[-2:] == ["agentsSeeOnlyAssigned", "defaultCountry"]
    assert data["defaultCountry"] is None
    assert set_country(api, "pe")["defaultCountry"] == "PE"
    assert ok_data(api.get(f"/api/workspace/{api.ws}"))["defaultCountry"] == "PE"
    assert set_country(api, None)["defaultCountry"] is None
    # With paramToUpdate, as every A.1 update body may say it.
    body = {"paramToUpdate": "defaultCountry", "defaultCountry": "MX"}
    assert ok_data(api.put(f"/api/workspace/{api.ws}", json=body))["defaultCountry"] == "MX"


# The same reading on every backend: its Citus run adds nothing but time.
@pytest.mark.not_on_citus
@pytest.mark.parametrize("bad", ["XX", "XK", "PER", "Peru", 51, True, "P"])
def test_default_country_must_be_a_country_code(api: Api, bad: Any) -> None:
    body = error(
        api.put(f"/api/workspace/{api.ws}", json={"defaultCountry": bad}), 422, "VALIDATION_ERROR"
    )
    assert error_fields(body) == ["defaultCountry"]
    assert ok_data(api.get(f"/api/workspace/{api.ws}"))["defaultCountry"] is None


def test_a_prefix_national_in_the_default_country_and_short_numbers_as_written(
    api: Api,
) -> None:
    """0113… is Leeds in GB: with that defaultCountry, read as national; elsewhere 011 is
    the international prefix. A number the first rule took (6–15 digits with its prefix)
    is never refused, and a trunk (0) after a bare country code is dropped."""
    assert api.create_contact(phone="0113 496 0958")["internalWhatsappNumber"] == "34960958"
    set_country(api, "GB")
    leeds = api.create_contact(phone="0113 496 0957")
    assert leeds["internalWhatsappNumber"] == "441134960957"
    assert by_phone(api, "0113 496 0957") == [leeds["id"]]
    assert api.create_contact(phone="0012345")["internalWhatsappNumber"] == "0012345"
    assert api.create_contact(phone="011 2345")["internalWhatsappNumber"] == "0112345"
    lima = api.create_contact(phone="51 (0) 922 333 446")
    assert lima["internalWhatsappNumber"] == "51922333446"
    assert by_phone(api, "+51 (0) 922 333 446") == [lima["id"]]


def test_bare_digits_are_read_in_the_default_country(api: Api) -> None:
    before = api.create_contact(internalWhatsappNumber="987 654 321")
    assert before["internalWhatsappNumber"] == "987654321"  # country code first, as before
    set_country(api, "PE")
    contact = api.create_contact(internalWhatsappNumber="922 333 444")
    assert contact["internalWhatsappNumber"] == "51922333444"
    # Digits that already begin with the country code, or are no valid national number,
    # keep meaning "country code first"; '+', 00 and 011 ignore the default country.
    assert api.create_contact(phone="51911222333")["internalWhatsappNumber"] == "51911222333"
    assert api.create_contact(phone="123456")["internalWhatsappNumber"] == "123456"
    assert api.create_contact(phone="+1 415 555 2671")["internalWhatsappNumber"] == "14155552671"
    assert api.create_contact(phone="0044 20 7946 0958")["internalWhatsappNumber"] == (
        "442079460958"
    )
    # Every reader of a phone reads it the same way: search, update, upsert.
    assert by_phone(api, "922333444") == [contact["id"]]
    updated = api.set_contact(before["id"], internalWhatsappNumber="(01) 234 5678")
    assert updated["internalWhatsappNumber"] == "5112345678"
    sender = api.create_contact(platformSenderPhone="933 444 555")
    assert sender["platformSenderPhone"] == "51933444555"
    data = ok_data(
        api.post(
            "/api/contact/upsert-batch",
            json={"contacts": [{"name": "Ana Díaz", "phone": "922-333-444"}]},
        )
    )
    assert [r["id"] for r in data["results"]] == [contact["id"]]
    # Without it again, bare digits are country code first once more.
    set_country(api, None)
    assert api.create_contact(phone="922 333 445")["internalWhatsappNumber"] == "922333445"


def test_default_country_is_the_workspaces_own(api: Api, other_api: Api) -> None:
    set_country(api, "PE")
    assert other_api.create_contact(phone="922 333 444")["internalWhatsappNumber"] == "922333444"
    assert api.create_contact(phone="922 333 444")["internalWhatsappNumber"] == "51922333444"
