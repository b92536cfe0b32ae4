"""Create Contact (contract B.3, B.1): shape, defaults, normalisation, rules and errors."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from tests.client import (
    UUID7,
    Api,
    error,
    error_fields,
    ok_data,
    unique,
    unique_email,
    unique_phone,
)

LAST_POSITION = 2**31 - 1  # the largest orderInCards (docs/api.md)

UPDATE_SHAPE = [
    "id", "creationDate", "assignedAgentId", "assignedAgentName", "segmentationId",
    "lastMessage", "lastMessageDate", "platformSenderId", "platformSenderName",
    "platformSenderPhone", "isRead", "isBotEnabled", "isManuallyAdded", "avatarColor",
    "orderInCards", "orderInCardsLastUpdated", "tags", "files", "variables", "isSolved",
    "solvedByAgentId", "solvedDate", "workspaceId", "internalWhatsappNumber", "name",
    "lastname", "email", "platformId", "stageId",
]  # fmt: skip
TAG_KEYS = ["id", "name", "color", "assignmentDate"]
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
MISSING_ID = "01a214de-0000-7000-8000-000000000000"
CREATED = "Contact created successfully."


def ts(value: str) -> datetime:
    """A wire timestamp, after checking its exact format."""
    assert TIMESTAMP.match(value), value
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def now() -> datetime:
    return datetime.now(UTC)


def post(api: Api, body: Any, **kw: Any) -> httpx.Response:
    return api.post("/api/contact", json=body, **kw)


def created(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    data = ok_data(post(api, body), CREATED)
    assert list(data) == ["id", "contact"]
    assert data["id"] == data["contact"]["id"]
    assert list(data["contact"]) == UPDATE_SHAPE
    return data["contact"]


def rejected(response: httpx.Response) -> list[str]:
    """Assert a 422 VALIDATION_ERROR; return the fields it names."""
    return error_fields(error(response, 422, "VALIDATION_ERROR"))


def second_workspace(api: Api) -> Api:
    """Another workspace of the same account, as its own client."""
    data = ok_data(api.post("/api/workspace", json={"name": unique("Second ")}))
    other = Api(api.http, api.account)
    other.ws = data["id"]
    return other


# --- shape and defaults ----------------------------------------------------------------------


def test_create_returns_update_shape_with_every_default(api: Api) -> None:
    email = unique_email()
    before = now()
    response = post(api, {"name": "Ana", "email": email})
    after = now()
    data = ok_data(response, CREATED)
    assert list(data) == ["id", "contact"]
    contact = data["contact"]
    assert list(contact) == UPDATE_SHAPE
    assert data["id"] == contact["id"] and UUID7.match(contact["id"])
    created_at = ts(contact["creationDate"])
    assert before <= created_at <= after
    assert contact["lastMessageDate"] == contact["creationDate"]
    assert contact["orderInCardsLastUpdated"] == contact["creationDate"]
    assert contact == {
        **contact,
        "assignedAgentId": None,
        "assignedAgentName": None,
        "segmentationId": None,
        "lastMessage": None,
        "platformSenderId": None,
        "platformSenderName": "",
        "platformSenderPhone": None,
        "isRead": False,
        "isBotEnabled": True,
        "isManuallyAdded": True,
        "avatarColor": None,
        "orderInCards": 0,
        "tags": [],
        "files": [],
        "variables": [],
        "isSolved": False,
        "solvedByAgentId": None,
        "solvedDate": None,
        "workspaceId": api.ws,
        "internalWhatsappNumber": "",
        "name": "Ana",
        "lastname": "",
        "email": email,
        "platformId": 7,
        "stageId": api.stage_ids("contact")[0],
    }


def test_created_contact_is_stored_as_returned(api: Api) -> None:
    contact = created(api, {"name": "Ana", "lastname": "Diaz", "email": unique_email()})
    response = api.get_contact(contact["id"])
    record = ok_data(response)["data"][0]
    for key, value in record.items():
        assert contact[key] == value, key


def test_create_sends_etag_of_version_one(api: Api) -> None:
    response = post(api, {"name": "Ana", "email": unique_email()})
    contact = ok_data(response, CREATED)["contact"]
    assert response.headers["ETag"] == '"1"'
    assert api.get_contact(contact["id"]).headers["ETag"] == '"1"'


OPTIONAL_CREATE_FIELDS = [
    "lastname", "platformId", "internalWhatsappNumber", "stageId", "segmentationId",
    "assignedAgentId", "tags", "variables", "isBotEnabled", "isRead", "files", "avatarColor",
    "lastMessage", "platformSenderId", "platformSenderName", "platformSenderPhone",
]  # fmt: skip


def test_nulls_for_optional_fields_mean_their_defaults(api: Api) -> None:
    body = {
        "name": "Ana",
        "email": unique_email(),
        **dict.fromkeys(OPTIONAL_CREATE_FIELDS),
    }
    contact = created(api, body)
    assert contact["lastname"] == "" and contact["platformId"] == 7
    assert contact["internalWhatsappNumber"] == "" and contact["platformSenderName"] == ""
    assert contact["tags"] == [] and contact["variables"] == [] and contact["files"] == []
    assert contact["isBotEnabled"] is True and contact["isRead"] is False
    assert contact["stageId"] == api.stage_ids("contact")[0]


def test_optional_fields_accepted_on_create_are_stored(api: Api) -> None:
    contact = created(
        api,
        {
            "name": "Ana",
            "lastname": "Diaz",
            "email": unique_email(),
            "isBotEnabled": False,
            "isRead": True,
            "avatarColor": "#12ab34",
            "files": ["https://files.example.com/a.pdf", "ref-2"],
            "lastMessage": "Hello there",
            "platformSenderId": "sender-1",
            "platformSenderName": "Ana D.",
            "platformSenderPhone": "+51 911-222-333",
        },
    )
    assert contact["lastname"] == "Diaz"
    assert contact["isBotEnabled"] is False and contact["isRead"] is True
    assert contact["avatarColor"] == "#12ab34"
    assert contact["files"] == ["https://files.example.com/a.pdf", "ref-2"]
    assert contact["lastMessage"] == "Hello there"
    assert contact["lastMessageDate"] == contact["creationDate"]
    assert contact["platformSenderId"] == "sender-1"
    assert contact["platformSenderName"] == "Ana D."
    assert contact["platformSenderPhone"] == "51911222333"
    assert contact["isManuallyAdded"] is True and contact["isSolved"] is False


# --- card positions and stages ---------------------------------------------------------------


def test_new_cards_go_to_the_end_of_their_column(api: Api) -> None:
    first, second = api.stage_ids("contact")[:2]
    assert [api.create_contact()["orderInCards"] for _ in range(3)] == [0, 1, 2]
    assert api.create_contact(stageId=second)["orderInCards"] == 0
    assert api.create_contact(stageId=second)["orderInCards"] == 1
    moved = api.create_contact(stageId=first)
    assert moved["orderInCards"] == 3
    api.set_contact(moved["id"], orderInCards=10)
    assert api.create_contact()["orderInCards"] == 11  # max + 1, not count


def test_a_card_at_the_last_position_leaves_its_column_usable(api: Api) -> None:
    """A client may put a card at 2147483647, the largest position: new and moved cards
    then share it (max + 1 is past the range) instead of failing, on every backend."""
    first, second = api.stage_ids("contact")[:2]
    api.set_contact(api.create_contact()["id"], orderInCards=LAST_POSITION)
    assert api.create_contact()["orderInCards"] == LAST_POSITION
    other = api.create_contact(stageId=second)
    moved = api.set_contact(other["id"], stageId=first)
    assert moved["orderInCards"] == LAST_POSITION
    item = {"name": "U", "email": unique_email(), "stageId": first}
    body = {"contacts": [item]}
    [result] = ok_data(api.post("/api/contact/upsert-batch", json=body))["results"]
    stored = ok_data(api.get_contact(result["id"], params={"shape": "full"}))["data"][0]
    assert stored["orderInCards"] == LAST_POSITION


def test_card_positions_are_per_workspace(api: Api, other_api: Api) -> None:
    api.create_contact()
    api.create_contact()
    assert other_api.create_contact()["orderInCards"] == 0


def test_explicit_stage_is_used(api: Api) -> None:
    stage = api.add_stage("contact")
    contact = api.create_contact(stageId=stage["id"])
    assert contact["stageId"] == stage["id"] and contact["orderInCards"] == 0


def test_default_stage_is_the_first_contact_stage(api: Api) -> None:
    stages = api.workspace()["contactStages"]
    first = min(stages, key=lambda s: s["order"])
    assert api.create_contact()["stageId"] == first["id"]


@pytest.mark.parametrize("kind", ["unknown", "opportunity", "other_workspace", "malformed"])
def test_bad_stage_is_422(api: Api, other_api: Api, kind: str) -> None:
    stage_id = {
        "unknown": MISSING_ID,
        "opportunity": api.stage_ids("opportunity")[0],
        "other_workspace": other_api.stage_ids("contact")[0],
        "malformed": "stage-1",
    }[kind]
    response = post(api, {"name": "Ana", "email": unique_email(), "stageId": stage_id})
    assert rejected(response) == ["stageId"]


# --- phones, platforms and the WhatsApp/email rule -------------------------------------------


@pytest.mark.parametrize(
    ("given", "stored"),
    [
        ("+51 987-654-321", "51987654321"),
        ("51987654321", "51987654321"),
        ("+1 (415) 555-0100", "14155550100"),
        ("123456", "123456"),
        ("123456789012345", "123456789012345"),
    ],
)
def test_phone_is_stored_as_digits(api: Api, given: str, stored: str) -> None:
    contact = created(api, {"name": "Ana", "platformId": 2, "internalWhatsappNumber": given})
    assert contact["internalWhatsappNumber"] == stored
    assert contact["platformId"] == 2 and contact["email"] is None


@pytest.mark.parametrize(
    "phone", ["12345", "1234567890123456", "51987abc321", "phone", "+51 987 654 321 ext 2", "++51"]
)
def test_invalid_phone_is_422(api: Api, phone: str) -> None:
    body = {"name": "Ana", "platformId": 2, "internalWhatsappNumber": phone}
    assert rejected(post(api, body)) == ["internalWhatsappNumber"]


def test_phone_must_be_a_string(api: Api) -> None:
    body = {"name": "Ana", "platformId": 2, "internalWhatsappNumber": 51987654321}
    assert rejected(post(api, body)) == ["internalWhatsappNumber"]


def test_phone_alias(api: Api) -> None:
    contact = created(api, {"name": "Ana", "platformId": 2, "phone": "+51 987-654-999"})
    assert contact["internalWhatsappNumber"] == "51987654999"
    assert "phone" not in contact
    assert rejected(post(api, {"name": "Ana", "platformId": 2, "phone": "12ab"})) == ["phone"]


def test_phone_and_alias_that_differ_are_422(api: Api) -> None:
    body = {
        "name": "Ana",
        "platformId": 2,
        "internalWhatsappNumber": unique_phone(),
        "phone": unique_phone(),
    }
    assert rejected(post(api, body)) == ["phone"]


@pytest.mark.parametrize("platform", [1, 2, 3, 4, 5, 6, 7])
def test_every_platform_is_accepted(api: Api, platform: int) -> None:
    body: dict[str, Any] = {"name": "Ana", "platformId": platform}
    if platform == 2:
        body["internalWhatsappNumber"] = unique_phone()
    else:
        body["email"] = unique_email()
    assert created(api, body)["platformId"] == platform


@pytest.mark.parametrize("platform", [0, 8, -1, 99, "2", 2.5, True, [2]])
def test_other_platform_values_are_422(api: Api, platform: Any) -> None:
    body = {"name": "Ana", "email": unique_email(), "platformId": platform}
    assert rejected(post(api, body)) == ["platformId"]


def test_whatsapp_contact_requires_the_number(api: Api) -> None:
    body = {"name": "Ana", "platformId": 2, "email": unique_email()}
    assert rejected(post(api, body)) == ["internalWhatsappNumber"]
    assert rejected(post(api, {**body, "internalWhatsappNumber": ""})) == ["internalWhatsappNumber"]


def test_whatsapp_contact_may_also_have_an_email(api: Api) -> None:
    email, phone = unique_email(), unique_phone()
    contact = created(api, {"name": "Ana", "platformId": 2, "phone": phone, "email": email})
    assert contact["email"] == email and contact["internalWhatsappNumber"] == phone


@pytest.mark.parametrize("platform", [None, 1, 3, 4, 5, 6, 7])
def test_other_platforms_require_an_email(api: Api, platform: int | None) -> None:
    body: dict[str, Any] = {"name": "Ana", "internalWhatsappNumber": unique_phone()}
    if platform is not None:
        body["platformId"] = platform
    assert rejected(post(api, body)) == ["email"]


def test_phone_is_stored_for_other_platforms_too(api: Api) -> None:
    phone = unique_phone()
    contact = created(api, {"name": "Ana", "email": unique_email(), "phone": phone})
    assert contact["internalWhatsappNumber"] == phone and contact["platformId"] == 7


# --- email -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "email",
    [
        "not-an-email",
        "ana@",
        "@example.com",
        "ana@example",
        "an a@example.com",
        "a@@b.com",
        "ana@exa mple.com",
        "ana..x@example.com",
        "ana@-example.com",
    ],
)
def test_invalid_email_is_422(api: Api, email: str) -> None:
    assert rejected(post(api, {"name": "Ana", "email": email})) == ["email"]


@pytest.mark.parametrize("email", [5, True, ["a@example.com"], {"email": "a@example.com"}])
def test_email_must_be_a_string(api: Api, email: Any) -> None:
    assert rejected(post(api, {"name": "Ana", "email": email})) == ["email"]


def test_valid_email_is_kept_as_given(api: Api) -> None:
    email = f"Ana.Diaz+{unique('x')}@Sub.Example.com"
    assert created(api, {"name": "Ana", "email": email})["email"] == email


# --- duplicates ------------------------------------------------------------------------------


def _duplicate(response: httpx.Response, field: str, existing_id: str) -> None:
    body = error(response, 409, "DUPLICATE_CONTACT")
    assert body["data"]["errors"][0]["field"] == field
    assert body["data"]["existingId"] == existing_id


def test_same_email_is_409_case_insensitively(api: Api) -> None:
    email = unique_email()
    first = api.create_contact(email=email)
    _duplicate(post(api, {"name": "Bea", "email": email}), "email", first["id"])
    _duplicate(post(api, {"name": "Bea", "email": email.upper()}), "email", first["id"])
    # nothing was inserted: the next card still takes position 1
    assert api.create_contact()["orderInCards"] == 1


def test_same_phone_is_409_whatever_its_formatting(api: Api) -> None:
    first = created(api, {"name": "Ana", "platformId": 2, "phone": "+51 987-000-111"})
    body = {"name": "Bea", "platformId": 2, "internalWhatsappNumber": "51987000111"}
    _duplicate(post(api, body), "internalWhatsappNumber", first["id"])
    _duplicate(
        post(api, {"name": "Bea", "platformId": 2, "phone": "+51 (987) 000 111"}),
        "phone",
        first["id"],
    )
    body = {"name": "Bea", "email": unique_email(), "internalWhatsappNumber": "51987000111"}
    _duplicate(post(api, body), "internalWhatsappNumber", first["id"])
    assert api.create_contact()["orderInCards"] == 1


def test_contacts_without_phone_do_not_collide(api: Api) -> None:
    a = api.create_contact()
    b = api.create_contact()
    assert a["internalWhatsappNumber"] == b["internalWhatsappNumber"] == ""


def test_duplicates_in_other_workspaces_are_allowed(api: Api, other_api: Api) -> None:
    email, phone = unique_email(), unique_phone()
    api.create_contact(email=email, internalWhatsappNumber=phone)
    theirs = other_api.create_contact(email=email, internalWhatsappNumber=phone)
    assert theirs["email"] == email and theirs["internalWhatsappNumber"] == phone
    mine_too = second_workspace(api).create_contact(email=email, internalWhatsappNumber=phone)
    assert mine_too["email"] == email


# --- references ------------------------------------------------------------------------------


def test_tags_are_assigned_with_their_details(api: Api) -> None:
    red = api.add_tag(color="#ff0000")
    blue = api.add_tag(color=None)
    before = now()
    contact = created(
        api, {"name": "Ana", "email": unique_email(), "tags": [blue["id"], {"id": red["id"]}]}
    )
    after = now()
    tags = contact["tags"]
    assert [t["id"] for t in tags] == [blue["id"], red["id"]]
    assert all(list(t) == TAG_KEYS for t in tags)
    assert tags[0]["name"] == blue["name"] and tags[0]["color"] is None
    assert tags[1]["name"] == red["name"] and tags[1]["color"] == "#ff0000"
    for tag in tags:
        assert before <= ts(tag["assignmentDate"]) <= after
    record = ok_data(api.get_contact(contact["id"]))["data"][0]
    assert record["tags"] == tags


def test_tags_of_other_contacts_never_show(api: Api, other_api: Api) -> None:
    other_api.create_contact(tags=[other_api.add_tag()["id"]])
    api.create_contact(tags=[api.add_tag()["id"]])
    assert api.create_contact()["tags"] == []
    mine = api.add_tag()
    contact = api.create_contact(tags=[mine["id"]])
    assert [t["id"] for t in contact["tags"]] == [mine["id"]]
    record = ok_data(api.get_contact(contact["id"]))["data"][0]
    assert [t["id"] for t in record["tags"]] == [mine["id"]]


def test_duplicate_tags_collapse(api: Api) -> None:
    tag = api.add_tag()
    contact = api.create_contact(tags=[tag["id"], {"id": tag["id"]}, tag["id"]])
    assert [t["id"] for t in contact["tags"]] == [tag["id"]]


@pytest.mark.parametrize("kind", ["unknown", "other_workspace", "malformed"])
def test_bad_tag_is_422(api: Api, other_api: Api, kind: str) -> None:
    good = api.add_tag()
    bad = {
        "unknown": MISSING_ID,
        "other_workspace": other_api.add_tag()["id"],
        "malformed": "vip",
    }[kind]
    response = post(api, {"name": "Ana", "email": unique_email(), "tags": [good["id"], bad]})
    fields = rejected(response)
    assert len(fields) == 1 and fields[0].startswith("tags")


@pytest.mark.parametrize("tags", ["vip", {"id": "x"}, [5], [None], [{"name": "vip"}]])
def test_tags_of_wrong_type_are_422(api: Api, tags: Any) -> None:
    fields = rejected(post(api, {"name": "Ana", "email": unique_email(), "tags": tags}))
    assert len(fields) == 1 and fields[0].startswith("tags")


def test_at_most_100_tags(api: Api) -> None:
    ids = [api.add_tag()["id"] for _ in range(101)]
    contact = api.create_contact(tags=ids[:100])
    assert [t["id"] for t in contact["tags"]] == ids[:100]
    assert rejected(post(api, {"name": "Ana", "email": unique_email(), "tags": ids})) == ["tags"]


def test_variables_are_stored_in_order(api: Api) -> None:
    variables = [
        {"name": "plan", "value": "gold"},
        {"name": "seats", "value": 12},
        {"name": "ratio", "value": 1.5},
        {"name": "vip", "value": True},
        {"name": "note", "value": None},
    ]
    contact = api.create_contact(variables=variables)
    assert contact["variables"] == variables


@pytest.mark.parametrize(
    "variables",
    [
        {"name": "a", "value": 1},
        ["a"],
        [{"name": "a"}],
        [{"value": 1}],
        [{"name": "a", "value": {"x": 1}}],
        [{"name": "a", "value": [1]}],
        [{"name": "a", "value": 1, "extra": 2}],
        [{"name": "", "value": 1}],
        [{"name": 5, "value": 1}],
        [{"name": "n" * 201, "value": 1}],
    ],
)
def test_bad_variables_are_422(api: Api, variables: Any) -> None:
    response = post(api, {"name": "Ana", "email": unique_email(), "variables": variables})
    fields = rejected(response)
    assert len(fields) == 1 and fields[0].startswith("variables")


def test_at_most_200_variables(api: Api) -> None:
    many = [{"name": f"v{i}", "value": i} for i in range(201)]
    assert api.create_contact(variables=many[:200])["variables"] == many[:200]
    body = {"name": "Ana", "email": unique_email(), "variables": many}
    assert rejected(post(api, body)) == ["variables"]


def test_segmentation_and_agent_are_set(api: Api) -> None:
    segmentation = api.add_segmentation()
    agent = api.add_agent(name="Carla Ruiz")
    contact = api.create_contact(segmentationId=segmentation["id"], assignedAgentId=agent["id"])
    assert contact["segmentationId"] == segmentation["id"]
    assert contact["assignedAgentId"] == agent["id"]
    assert contact["assignedAgentName"] == "Carla Ruiz"


@pytest.mark.parametrize("field", ["segmentationId", "assignedAgentId"])
@pytest.mark.parametrize("kind", ["unknown", "other_workspace", "malformed", "number"])
def test_bad_segmentation_or_agent_is_422(api: Api, other_api: Api, field: str, kind: str) -> None:
    theirs = (
        other_api.add_segmentation()["id"]
        if field == "segmentationId"
        else other_api.add_agent()["id"]
    )
    value = {"unknown": MISSING_ID, "other_workspace": theirs, "malformed": "x1", "number": 5}
    response = post(api, {"name": "Ana", "email": unique_email(), field: value[kind]})
    assert rejected(response) == [field]


def test_every_bad_reference_is_reported_together(api: Api) -> None:
    body = {
        "name": "Ana",
        "email": unique_email(),
        "stageId": MISSING_ID,
        "segmentationId": MISSING_ID,
        "assignedAgentId": MISSING_ID,
        "tags": [MISSING_ID],
    }
    fields = rejected(post(api, body))
    assert {"stageId", "segmentationId", "assignedAgentId"} <= set(fields)
    assert any(f.startswith("tags") for f in fields)


# --- string limits and types -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "limit"),
    [("name", 200), ("lastname", 200), ("platformSenderName", 200), ("lastMessage", 10_000)],
)
def test_string_limits(api: Api, field: str, limit: int) -> None:
    at_limit = created(api, {"name": "Ana", "email": unique_email(), field: "é" * limit})
    assert at_limit[field] == "é" * limit
    body = {"name": "Ana", "email": unique_email(), field: "é" * (limit + 1)}
    assert rejected(post(api, body)) == [field]


def test_at_most_100_files(api: Api) -> None:
    files = [f"https://files.example.com/{i}.pdf" for i in range(101)]
    assert api.create_contact(files=files[:100])["files"] == files[:100]
    body = {"name": "Ana", "email": unique_email(), "files": files}
    assert rejected(post(api, body)) == ["files"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("name", 123),
        ("name", ["Ana"]),
        ("lastname", 5),
        ("isBotEnabled", "true"),
        ("isBotEnabled", 1),
        ("isRead", "false"),
        ("isRead", 0),
        ("avatarColor", 5),
        ("files", "a.pdf"),
        ("files", [1]),
        ("lastMessage", 42),
        ("platformSenderId", 7),
        ("platformSenderName", False),
        ("platformSenderPhone", 51987654321),
        ("platformSenderPhone", "call me"),
        ("stageId", 1),
    ],
)
def test_wrong_types_are_422(api: Api, field: str, value: Any) -> None:
    body = {"name": "Ana", "email": unique_email(), field: value}
    fields = rejected(post(api, body))
    assert len(fields) == 1 and fields[0].split("[")[0] == field


def test_every_invalid_value_is_reported_together(api: Api) -> None:
    body = {"name": 1, "email": "nope", "isRead": "yes", "platformId": 9}
    assert set(rejected(post(api, body))) == {"name", "email", "isRead", "platformId"}


@pytest.mark.parametrize("body", [{"email": "a@example.com"}, {"name": None, "email": "a@b.co"}])
def test_missing_or_null_name_is_422(api: Api, body: dict[str, Any]) -> None:
    assert rejected(post(api, body)) == ["name"]


@pytest.mark.parametrize("name", ["", "   "])
def test_blank_name_is_422(api: Api, name: str) -> None:
    assert rejected(post(api, {"name": name, "email": unique_email()})) == ["name"]


@pytest.mark.parametrize(
    "key", ["foo", "id", "creationDate", "isSolved", "orderInCards", "isManuallyAdded", "Name"]
)
def test_unknown_keys_are_400(api: Api, key: str) -> None:
    body = error(post(api, {"name": "Ana", "email": unique_email(), key: 1}), 400, "BAD_REQUEST")
    assert error_fields(body) == [key]
    assert key in body["message"]


def test_unknown_key_comes_before_missing_name(api: Api) -> None:
    error(post(api, {"email": unique_email(), "foo": 1}), 400, "BAD_REQUEST")


# --- request handling ------------------------------------------------------------------------


def test_body_workspace_equal_to_header_is_accepted(api: Api) -> None:
    contact = created(api, {"workspaceId": api.ws, "name": "Ana", "email": unique_email()})
    assert contact["workspaceId"] == api.ws


def test_body_workspace_alone_selects_the_workspace(api: Api) -> None:
    other = second_workspace(api)
    body = {"workspaceId": other.ws, "name": "Ana", "email": unique_email()}
    contact = ok_data(post(api, body, workspace=None), CREATED)["contact"]
    assert contact["workspaceId"] == other.ws


def test_body_workspace_differing_from_header_is_403(api: Api) -> None:
    other = second_workspace(api)
    body = {"workspaceId": other.ws, "name": "Ana", "email": unique_email()}
    error(post(api, body), 403, "FORBIDDEN")


def test_no_workspace_is_401(api: Api) -> None:
    response = post(api, {"name": "Ana", "email": unique_email()}, workspace=None)
    error(response, 401, "WORKSPACE_REQUIRED")


def test_workspace_of_another_account_is_403(api: Api, other_api: Api) -> None:
    response = post(api, {"name": "Ana", "email": unique_email()}, workspace=other_api.ws)
    error(response, 403, "FORBIDDEN")
    body = {"workspaceId": other_api.ws, "name": "Ana", "email": unique_email()}
    error(post(api, body, workspace=None), 403, "FORBIDDEN")
    error(
        post(api, {"name": "Ana", "email": unique_email()}, workspace=MISSING_ID), 403, "FORBIDDEN"
    )


def test_missing_api_key_is_401(api: Api) -> None:
    error(post(api, {"name": "Ana", "email": unique_email()}, auth=None), 401, "UNAUTHORIZED")


@pytest.mark.parametrize("content", [b"[]", b'"Ana"', b"{", b"null", b""])
def test_body_that_is_not_a_json_object_is_400(api: Api, content: bytes) -> None:
    response = api.post(
        "/api/contact", content=content, headers={"Content-Type": "application/json"}
    )
    error(response, 400, "BAD_REQUEST")


def test_non_json_content_type_is_415(api: Api) -> None:
    response = api.post(
        "/api/contact",
        content=b'{"name": "Ana", "email": "a@example.com"}',
        headers={"Content-Type": "text/plain"},
    )
    error(response, 415, "UNSUPPORTED_MEDIA_TYPE")


def test_every_bad_element_of_tags_variables_and_files_is_reported(api: Api) -> None:
    body = {
        "name": "A",
        "email": "every-element@example.com",
        "tags": [5, {}],
        "variables": [{"name": "", "value": 1}, {"name": "a", "value": {}}],
        "files": ["", ""],
    }
    answer = error(api.post("/api/contact", json=body), 422, "VALIDATION_ERROR")
    assert error_fields(answer) == [
        "tags[0]",
        "tags[1]",
        "variables[0].name",
        "variables[1].value",
        "files[0]",
        "files[1]",
    ]
