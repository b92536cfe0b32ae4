"""Update Contact (contract A.3, section 5): request rules, structure errors, conflicts, ETag.

The rules of each field live in test_update_rules.py.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.client import Api, error, error_fields, ok_data, unique_email, unique_phone
from tests.contacts.test_create import MISSING_ID, UPDATE_SHAPE, second_workspace

UPDATED = "Contact updated successfully."
# The contract's list (A.3), in its order.
UPDATABLE = [
    "name", "lastname", "email", "stageId", "segmentationId", "assignedAgentId",
    "isBotEnabled", "isRead", "isSolved", "tags", "orderInCards", "avatarColor", "variables",
    "files", "internalWhatsappNumber", "lastMessage",
]  # fmt: skip
READ_ONLY = [
    "id", "creationDate", "assignedAgentName", "lastMessageDate", "platformSenderId",
    "platformSenderName", "platformSenderPhone", "isManuallyAdded", "orderInCardsLastUpdated",
    "solvedDate", "workspaceId", "platformId",
]  # fmt: skip


def put(api: Api, contact_id: str, body: Any, **kw: Any) -> httpx.Response:
    return api.update_contact(contact_id, body, **kw)


def updated(response: httpx.Response, contact_id: str) -> dict[str, Any]:
    """Assert a successful update of this contact; return the contact (update shape)."""
    data = ok_data(response, UPDATED)
    assert list(data) == ["id", "contact"]
    assert data["id"] == contact_id
    assert list(data["contact"]) == UPDATE_SHAPE
    assert data["contact"]["id"] == contact_id
    return data["contact"]


def snapshot(api: Api, contact_id: str) -> tuple[dict[str, Any], str]:
    """The stored contact (read shape) and its ETag, without changing it."""
    response = api.get_contact(contact_id)
    return ok_data(response)["data"][0], response.headers["ETag"]


def full(api: Api, contact_id: str) -> dict[str, Any]:
    """The stored contact in the update shape (a no-op update of its name shows it)."""
    name = snapshot(api, contact_id)[0]["name"]
    return api.set_contact(contact_id, name=name)


def bad_request(response: httpx.Response) -> dict[str, Any]:
    return error(response, 400, "BAD_REQUEST")


def invalid(response: httpx.Response) -> list[str]:
    return error_fields(error(response, 422, "VALIDATION_ERROR"))


# --- success ---------------------------------------------------------------------------------


def test_update_returns_the_contact_in_update_shape(api: Api) -> None:
    contact = api.create_contact(name="Ana", lastname="Diaz")
    response = put(api, contact["id"], {"paramToUpdate": "name", "name": "Beatriz"})
    result = updated(response, contact["id"])
    assert result == {**contact, "name": "Beatriz"}
    record, _ = snapshot(api, contact["id"])
    assert record["name"] == "Beatriz" and record["lastname"] == "Diaz"


def test_several_fields_at_once(api: Api) -> None:
    contact = api.create_contact(name="Ana", lastname="Diaz")
    body = {"paramToUpdate": "name,lastname", "name": "Bea", "lastname": "Ruiz"}
    result = updated(put(api, contact["id"], body), contact["id"])
    assert result == {**contact, "name": "Bea", "lastname": "Ruiz"}


def test_body_id_and_workspace_that_match_are_accepted(api: Api) -> None:
    contact = api.create_contact()
    body = {"paramToUpdate": "name", "name": "Bea", "id": contact["id"], "workspaceId": api.ws}
    assert updated(put(api, contact["id"], body), contact["id"])["name"] == "Bea"
    # A template's empty id and workspaceId count as absent, both alike.
    for empty in (None, ""):
        body = {"paramToUpdate": "name", "name": "Cy", "id": empty, "workspaceId": empty}
        assert updated(put(api, contact["id"], body), contact["id"])["name"] == "Cy"


# --- query, header and workspace rules ---------------------------------------------------


def test_query_id_is_required(api: Api) -> None:
    contact = api.create_contact()
    body = {"paramToUpdate": "name", "name": "Bea"}
    for params in ({"workspaceId": api.ws}, {"workspaceId": api.ws, "id": ""}):
        response = put(api, contact["id"], {**body, "id": contact["id"]}, params=params)
        assert error_fields(bad_request(response)) == ["id"]
    assert snapshot(api, contact["id"])[0]["name"] == contact["name"]


def test_query_workspace_is_required(api: Api) -> None:
    contact = api.create_contact()
    response = put(
        api, contact["id"], {"paramToUpdate": "name", "name": "B"}, params={"id": contact["id"]}
    )
    assert error_fields(bad_request(response)) == ["workspaceId"]
    body = {"paramToUpdate": "name", "name": "B", "workspaceId": api.ws}
    response = put(api, contact["id"], body, params={"id": contact["id"]})
    assert error_fields(bad_request(response)) == ["workspaceId"]


def test_header_is_required(api: Api) -> None:
    contact = api.create_contact()
    response = put(api, contact["id"], {"paramToUpdate": "name", "name": "B"}, workspace=None)
    error(response, 401, "WORKSPACE_REQUIRED")
    # the header rule comes before the missing query parameters
    response = put(
        api, contact["id"], {"paramToUpdate": "name", "name": "B"}, params={}, workspace=None
    )
    error(response, 401, "WORKSPACE_REQUIRED")


def test_header_and_query_workspace_must_match(api: Api) -> None:
    contact = api.create_contact()
    other = second_workspace(api)
    params = {"id": contact["id"], "workspaceId": other.ws}
    response = put(api, contact["id"], {"paramToUpdate": "name", "name": "B"}, params=params)
    error(response, 403, "FORBIDDEN")
    assert snapshot(api, contact["id"])[0]["name"] == contact["name"]


def test_body_workspace_must_match_the_header(api: Api) -> None:
    contact = api.create_contact()
    other = second_workspace(api)
    body = {"paramToUpdate": "name", "name": "B", "workspaceId": other.ws}
    error(put(api, contact["id"], body), 403, "FORBIDDEN")
    assert snapshot(api, contact["id"])[0]["name"] == contact["name"]


def test_workspace_of_another_account_is_403(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    params = {"id": theirs["id"], "workspaceId": other_api.ws}
    response = put(
        api,
        theirs["id"],
        {"paramToUpdate": "name", "name": "B"},
        params=params,
        workspace=other_api.ws,
    )
    error(response, 403, "FORBIDDEN")
    assert snapshot(other_api, theirs["id"])[0]["name"] == theirs["name"]
    params = {"id": theirs["id"], "workspaceId": MISSING_ID}
    response = put(
        api,
        theirs["id"],
        {"paramToUpdate": "name", "name": "B"},
        params=params,
        workspace=MISSING_ID,
    )
    error(response, 403, "FORBIDDEN")


def test_missing_api_key_is_401(api: Api) -> None:
    contact = api.create_contact()
    response = put(api, contact["id"], {"paramToUpdate": "name", "name": "B"}, auth=None)
    error(response, 401, "UNAUTHORIZED")


# --- structural errors (400) -----------------------------------------------------------------


def test_a_body_naming_no_field_is_400(api: Api) -> None:
    # Without paramToUpdate the body's keys name the fields (contract E.1): none is a 400.
    contact = api.create_contact()
    for sent in ({}, {"id": contact["id"]}, {"workspaceId": api.ws}):
        body = bad_request(put(api, contact["id"], sent))
        assert error_fields(body) == ["paramToUpdate"]
        assert "no field" in body["message"]


@pytest.mark.parametrize("param", [None, 5, True, ["name"], {"name": 1}, "", " ", ",", "name,"])
def test_param_to_update_must_name_fields(api: Api, param: Any) -> None:
    contact = api.create_contact()
    body = bad_request(put(api, contact["id"], {"paramToUpdate": param, "name": "Bea"}))
    assert error_fields(body) == ["paramToUpdate"]


def test_named_field_missing_from_the_body_is_400(api: Api) -> None:
    contact = api.create_contact()
    body = bad_request(put(api, contact["id"], {"paramToUpdate": "name"}))
    assert error_fields(body) == ["name"]
    body = bad_request(put(api, contact["id"], {"paramToUpdate": "name,lastname", "name": "B"}))
    assert error_fields(body) == ["lastname"]
    assert snapshot(api, contact["id"])[0]["name"] == contact["name"]


@pytest.mark.parametrize("field", ["foo", "cellphone", "Name", "variables2", "tag"])
def test_unknown_field_is_400_listing_the_updatable_ones(api: Api, field: str) -> None:
    contact = api.create_contact()
    body = bad_request(put(api, contact["id"], {"paramToUpdate": field, field: 1}))
    assert error_fields(body) == [field]
    assert field in body["message"]
    for name in UPDATABLE:
        assert name in body["message"]


@pytest.mark.parametrize("field", READ_ONLY)
def test_read_only_field_is_400_saying_so(api: Api, field: str) -> None:
    contact = api.create_contact()
    before = snapshot(api, contact["id"])
    body = bad_request(put(api, contact["id"], {"paramToUpdate": field, field: contact[field]}))
    assert error_fields(body) == [field]
    assert "read-only" in body["message"]
    assert snapshot(api, contact["id"]) == before


def test_read_only_among_several_fields_is_400(api: Api) -> None:
    contact = api.create_contact()
    body = {"paramToUpdate": "name,platformId", "name": "Bea", "platformId": 2}
    assert "read-only" in bad_request(put(api, contact["id"], body))["message"]
    assert snapshot(api, contact["id"])[0]["name"] == contact["name"]


@pytest.mark.parametrize("extra", ["lastname", "foo", "creationDate", "paramtoupdate"])
def test_extra_body_keys_are_400(api: Api, extra: str) -> None:
    contact = api.create_contact()
    body = bad_request(put(api, contact["id"], {"paramToUpdate": "name", "name": "B", extra: ""}))
    assert error_fields(body) == [extra]
    assert snapshot(api, contact["id"])[0]["name"] == contact["name"]


def test_body_id_that_differs_from_the_query_is_400(api: Api) -> None:
    contact = api.create_contact()
    other = api.create_contact()
    body = {"paramToUpdate": "name", "name": "Bea", "id": other["id"]}
    assert error_fields(bad_request(put(api, contact["id"], body))) == ["id"]
    assert snapshot(api, contact["id"])[0]["name"] == contact["name"]
    assert snapshot(api, other["id"])[0]["name"] == other["name"]


@pytest.mark.parametrize("content", [b"[]", b'"name"', b"{", b"null", b"", b"NaN"])
def test_body_that_is_not_a_json_object_is_400(api: Api, content: bytes) -> None:
    contact = api.create_contact()
    response = api.put(
        "/api/contact",
        content=content,
        params={"id": contact["id"], "workspaceId": api.ws},
        headers={"Content-Type": "application/json"},
    )
    bad_request(response)


def test_non_json_content_type_is_415(api: Api) -> None:
    contact = api.create_contact()
    response = api.put(
        "/api/contact",
        content=b'{"paramToUpdate": "name", "name": "Bea"}',
        params={"id": contact["id"], "workspaceId": api.ws},
        headers={"Content-Type": "text/plain"},
    )
    error(response, 415, "UNSUPPORTED_MEDIA_TYPE")


# --- order of the checks -----------------------------------------------------------------


def test_structure_is_checked_before_values(api: Api) -> None:
    contact = api.create_contact()
    body = {"paramToUpdate": "name", "name": 123, "foo": 1}
    bad_request(put(api, contact["id"], body))


def test_structure_is_checked_before_the_record(api: Api) -> None:
    bad_request(put(api, MISSING_ID, {"paramToUpdate": "foo", "foo": 1}))


def test_values_are_checked_before_the_record(api: Api) -> None:
    assert invalid(put(api, MISSING_ID, {"paramToUpdate": "isRead", "isRead": "yes"})) == ["isRead"]


def test_record_is_checked_before_references(api: Api) -> None:
    response = put(api, MISSING_ID, {"paramToUpdate": "stageId", "stageId": MISSING_ID})
    error(response, 404, "CONTACT_NOT_FOUND")


def test_every_invalid_value_is_reported_together(api: Api) -> None:
    contact = api.create_contact()
    body = {
        "paramToUpdate": "name,email,isRead,orderInCards",
        "name": 5,
        "email": "nope",
        "isRead": "yes",
        "orderInCards": -1,
    }
    assert set(invalid(put(api, contact["id"], body))) == {
        "name",
        "email",
        "isRead",
        "orderInCards",
    }


# --- not found -------------------------------------------------------------------------------


@pytest.mark.parametrize("contact_id", [MISSING_ID, "not-an-id", "1"])
def test_unknown_id_is_404(api: Api, contact_id: str) -> None:
    response = put(api, contact_id, {"paramToUpdate": "name", "name": "Bea"})
    error(response, 404, "CONTACT_NOT_FOUND")


def test_contact_of_another_workspace_is_404(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    error(put(api, theirs["id"], {"paramToUpdate": "name", "name": "B"}), 404, "CONTACT_NOT_FOUND")
    sibling = second_workspace(api).create_contact()
    response = put(api, sibling["id"], {"paramToUpdate": "name", "name": "B"})
    error(response, 404, "CONTACT_NOT_FOUND")
    assert snapshot(other_api, theirs["id"])[0]["name"] == theirs["name"]


# --- duplicates ------------------------------------------------------------------------------


def _duplicate(response: httpx.Response, field: str, existing_id: str) -> None:
    body = error(response, 409, "DUPLICATE_CONTACT")
    assert body["data"]["errors"][0]["field"] == field
    assert body["data"]["existingId"] == existing_id


def test_email_of_another_contact_is_409(api: Api) -> None:
    taken = api.create_contact(email=unique_email())
    contact = api.create_contact()
    before = snapshot(api, contact["id"])
    for email in (taken["email"], taken["email"].upper()):
        response = put(api, contact["id"], {"paramToUpdate": "email", "email": email})
        _duplicate(response, "email", taken["id"])
    assert snapshot(api, contact["id"]) == before


def test_phone_of_another_contact_is_409(api: Api) -> None:
    taken = api.create_contact(internalWhatsappNumber="+51 987-111-222")
    contact = api.create_contact()
    before = snapshot(api, contact["id"])
    body = {"paramToUpdate": "internalWhatsappNumber", "internalWhatsappNumber": "51987111222"}
    _duplicate(put(api, contact["id"], body), "internalWhatsappNumber", taken["id"])
    assert snapshot(api, contact["id"]) == before


def test_own_email_and_phone_again_are_fine(api: Api) -> None:
    phone = unique_phone()
    contact = api.create_contact(email=unique_email(), internalWhatsappNumber=phone)
    assert api.set_contact(contact["id"], email=contact["email"])["email"] == contact["email"]
    shouting = contact["email"].upper()
    assert api.set_contact(contact["id"], email=shouting)["email"] == shouting
    result = api.set_contact(contact["id"], internalWhatsappNumber=f"+{phone}")
    assert result["internalWhatsappNumber"] == phone


def test_email_used_in_another_workspace_is_fine(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact(internalWhatsappNumber=unique_phone())
    contact = api.create_contact()
    result = api.set_contact(
        contact["id"],
        email=theirs["email"],
        internalWhatsappNumber=theirs["internalWhatsappNumber"],
    )
    assert result["email"] == theirs["email"]
    assert result["internalWhatsappNumber"] == theirs["internalWhatsappNumber"]


def test_a_freed_email_can_be_taken(api: Api) -> None:
    first = api.create_contact()
    second = api.create_contact()
    email = first["email"]
    api.set_contact(first["id"], email=unique_email())
    assert api.set_contact(second["id"], email=email)["email"] == email


# --- a rejected update changes nothing ---------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({"paramToUpdate": "name,email", "name": "Bea", "email": "nope"}, 422),
        ({"paramToUpdate": "name,orderInCards", "name": "Bea", "orderInCards": -3}, 422),
        ({"paramToUpdate": "name,stageId", "name": "Bea", "stageId": MISSING_ID}, 422),
        ({"paramToUpdate": "name,tags", "name": "Bea", "tags": [MISSING_ID]}, 422),
        ({"paramToUpdate": "name,lastname", "name": "Bea"}, 400),
        ({"paramToUpdate": "name", "name": "Bea", "lastname": "x"}, 400),
        ({"paramToUpdate": "name,creationDate", "name": "Bea", "creationDate": "x"}, 400),
    ],
)
def test_rejected_update_changes_nothing(api: Api, body: dict[str, Any], status: int) -> None:
    tag = api.add_tag()
    contact = api.create_contact(tags=[tag["id"]], variables=[{"name": "a", "value": 1}])
    before = snapshot(api, contact["id"])
    assert put(api, contact["id"], body).status_code == status
    assert snapshot(api, contact["id"]) == before
    assert full(api, contact["id"]) == contact


def test_duplicate_among_several_fields_changes_nothing(api: Api) -> None:
    taken = api.create_contact()
    contact = api.create_contact()
    before = snapshot(api, contact["id"])
    body = {"paramToUpdate": "name,email", "name": "Bea", "email": taken["email"]}
    _duplicate(put(api, contact["id"], body), "email", taken["id"])
    assert snapshot(api, contact["id"]) == before


# --- ETag and If-Match -----------------------------------------------------------------------


def test_etag_changes_with_each_update(api: Api) -> None:
    contact = api.create_contact()
    tags = []
    for name in ("B", "C", "D"):
        response = put(api, contact["id"], {"paramToUpdate": "name", "name": name})
        updated(response, contact["id"])
        tags.append(response.headers["ETag"])
        assert snapshot(api, contact["id"])[1] == response.headers["ETag"]
    assert tags == ['"2"', '"3"', '"4"']


def test_stale_if_match_is_412_and_changes_nothing(api: Api) -> None:
    contact = api.create_contact()
    api.set_contact(contact["id"], name="Bea")
    before = snapshot(api, contact["id"])
    # Also versions no record can have: past the column's range, past 64 bits.
    for stale in ('"1"', '"3"', 'W/"2"', '"x"', '"2147483648"', '"9223372036854775808"'):
        response = put(
            api,
            contact["id"],
            {"paramToUpdate": "name", "name": "Carla"},
            headers={"If-Match": stale},
        )
        error(response, 412, "PRECONDITION_FAILED")
    assert snapshot(api, contact["id"]) == before


def test_matching_if_match_is_applied(api: Api) -> None:
    contact = api.create_contact()
    _, tag = snapshot(api, contact["id"])
    response = put(
        api, contact["id"], {"paramToUpdate": "name", "name": "Bea"}, headers={"If-Match": tag}
    )
    assert updated(response, contact["id"])["name"] == "Bea"
    assert response.headers["ETag"] != tag
    # the old tag is stale now
    response = put(
        api, contact["id"], {"paramToUpdate": "name", "name": "Carla"}, headers={"If-Match": tag}
    )
    error(response, 412, "PRECONDITION_FAILED")
    assert snapshot(api, contact["id"])[0]["name"] == "Bea"


def test_if_match_compares_tags_strongly_not_as_numbers(api: Api) -> None:
    """`"027"` is not the tag `"27"` (contract C: a strong tag), whatever field is named."""
    contact = api.create_contact()
    _, tag = snapshot(api, contact["id"])
    padded = f'"0{tag.strip(chr(34))}"'
    for body in ({"paramToUpdate": "name", "name": "Bea"}, {"lastname": "Ruiz"}):
        error(
            put(api, contact["id"], body, headers={"If-Match": padded}), 412, "PRECONDITION_FAILED"
        )
    assert snapshot(api, contact["id"])[1] == tag


def test_if_match_star_and_lists(api: Api) -> None:
    contact = api.create_contact()
    body = {"paramToUpdate": "name", "name": "Bea"}
    assert updated(put(api, contact["id"], body, headers={"If-Match": "*"}), contact["id"])
    body = {"paramToUpdate": "name", "name": "Carla"}
    response = put(api, contact["id"], body, headers={"If-Match": '"7", "2"'})
    assert updated(response, contact["id"])["name"] == "Carla"


def test_if_match_on_unknown_contact_is_404(api: Api) -> None:
    response = put(
        api, MISSING_ID, {"paramToUpdate": "name", "name": "B"}, headers={"If-Match": "*"}
    )
    error(response, 404, "CONTACT_NOT_FOUND")
