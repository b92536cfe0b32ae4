"""Create Opportunity (contract B.3, record B.2): shape, defaults, and every value rule."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
import orjson
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.config import Settings
from chatcrm.contacts.table import contacts
from chatcrm.db.database import Database
from chatcrm.db.engine import standalone_engine
from chatcrm.opportunities.kind import OPPORTUNITY
from chatcrm.provisioning import NewAccount
from chatcrm.records import statements
from tests.client import Api, error, error_fields, ok_data

CREATED = "Opportunity successfully created."

OPPORTUNITY_KEYS = [
    "id", "opportCode", "opportStatus", "winLossStatus", "winLossDate", "finalAmount",
    "creationDate", "creationTypeId", "updatedDate", "deletionDate", "userDeletion",
    "statusId", "files", "orderInCards", "orderInCardsLastUpdated", "activities",
    "segmentationId", "workspaceId", "name", "description", "amount", "userCreation",
    "contactId", "expirationDate", "assignedAgentId", "stageId",
]  # fmt: skip

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
CODE = re.compile(r"^OPP-(\d{4})-(\d{4})$")
UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"
T = TypeVar("T")


# --- helpers shared with the other opportunity test modules -----------------------------------


def run_db(database_url: str, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
    """Run `work` in one transaction of a short-lived engine on the test database."""

    async def run() -> T:
        engine = standalone_engine(database_url, Settings(database_url=database_url))
        try:
            async with engine.begin() as conn:
                return await work(conn)
        finally:
            await engine.dispose()

    return asyncio.run(run())


def soft_delete_contact(database_url: str, workspace_id: str, contact_id: str) -> None:
    """Mark a contact deleted the way a delete does (it stays stored, out of every read)."""

    async def work(conn: AsyncConnection) -> None:
        await conn.execute(
            update(contacts)
            .where(contacts.c.workspace_id == workspace_id, contacts.c.id == contact_id)
            .values(deleted_at=datetime.now(UTC))
        )

    run_db(database_url, work)


def stored(database_url: str, workspace_id: str, opportunity_id: str) -> tuple[Any, int]:
    """The opportunity as stored (wire shape) and its version, read straight from the database."""

    async def work() -> tuple[Any, int]:
        db = Database(Settings(database_url=database_url))
        try:
            async with db.session() as conn:
                view = await statements.get(conn, OPPORTUNITY, workspace_id, opportunity_id, "full")
        finally:
            await db.dispose()
        assert view is not None
        return orjson.loads(orjson.dumps(view.record)), view.version

    return asyncio.run(work())


def post(api: Api, body: Any, **kw: Any) -> httpx.Response:
    return api.post("/api/opportunity", json=body, **kw)


def post_raw(api: Api, text: str, **kw: Any) -> httpx.Response:
    """Send the JSON text as written, so numbers reach the server digit for digit."""
    return api.post(
        "/api/opportunity", content=text, headers={"Content-Type": "application/json"}, **kw
    )


def created(response: httpx.Response) -> dict[str, Any]:
    data = ok_data(response, CREATED)
    assert list(data) == ["id", "opportunity"]
    record: dict[str, Any] = data["opportunity"]
    assert data["id"] == record["id"]
    assert list(record) == OPPORTUNITY_KEYS
    return record


def invalid(response: httpx.Response, *fields: str) -> dict[str, Any]:
    """A 422 VALIDATION_ERROR whose data.errors name exactly these fields (in any order)."""
    body = error(response, 422, "VALIDATION_ERROR")
    assert sorted(error_fields(body)) == sorted(fields), body
    return body


def bad_request(response: httpx.Response) -> dict[str, Any]:
    return error(response, 400, "BAD_REQUEST")


# --- shape and defaults -----------------------------------------------------------------------


def test_create_answers_id_and_opportunity_with_two_p(api: Api) -> None:
    response = post(api, {"name": "Deal", "amount": 100})
    data = ok_data(response, CREATED)
    assert list(data) == ["id", "opportunity"]
    assert "oportunity" not in data
    record = data["opportunity"]
    assert data["id"] == record["id"]
    assert isinstance(data["id"], str) and data["id"]
    assert list(record) == OPPORTUNITY_KEYS
    assert len(record) == 26


def test_create_defaults(api: Api, account: NewAccount) -> None:
    record = created(post(api, {"name": "Deal", "amount": 1500}))
    assert CODE.match(record["opportCode"])
    assert record["opportStatus"] == 1
    assert record["winLossStatus"] == 0
    assert record["winLossDate"] is None
    assert record["finalAmount"] == 1500
    assert TIMESTAMP.match(record["creationDate"])
    assert record["creationTypeId"] == 1
    assert record["updatedDate"] is None
    assert record["deletionDate"] is None
    assert record["userDeletion"] is None
    assert record["statusId"] == 1
    assert record["files"] == []
    assert record["orderInCards"] == 0
    assert TIMESTAMP.match(record["orderInCardsLastUpdated"])
    assert record["activities"] == []
    assert record["segmentationId"] is None
    assert record["workspaceId"] == api.ws
    assert record["name"] == "Deal"
    assert record["description"] == ""
    assert record["amount"] == 1500
    assert record["userCreation"] == account.key_id
    assert record["contactId"] == ""
    assert record["expirationDate"] is None
    assert record["assignedAgentId"] is None
    assert record["stageId"] == api.stage_ids("opportunity")[0]


def test_create_time_is_now(api: Api) -> None:
    before = datetime.now(UTC)
    record = created(post(api, {"name": "Deal", "amount": 1}))
    after = datetime.now(UTC)
    when = datetime.fromisoformat(record["creationDate"].replace("Z", "+00:00"))
    assert before <= when <= after


def test_create_carries_an_etag_of_the_first_version(api: Api) -> None:
    response = post(api, {"name": "Deal", "amount": 1})
    created(response)
    assert response.headers["etag"] == '"1"'


def test_null_optional_fields_mean_their_defaults(api: Api) -> None:
    record = created(
        post(
            api,
            {
                "name": "Deal",
                "amount": 10,
                "description": None,
                "contactId": None,
                "stageId": None,
                "expirationDate": None,
                "segmentationId": None,
                "assignedComercialId": None,
                "assignedAgentId": None,
                "finalAmount": None,
                "files": None,
            },
        )
    )
    assert record["description"] == ""
    assert record["contactId"] == ""
    assert record["stageId"] == api.stage_ids("opportunity")[0]
    assert record["expirationDate"] is None
    assert record["segmentationId"] is None
    assert record["assignedAgentId"] is None
    assert record["finalAmount"] == 10
    assert record["files"] == []


def test_all_accepted_fields_are_stored(api: Api) -> None:
    contact = api.create_contact()
    agent = api.add_agent()
    segmentation = api.add_segmentation()
    stage = api.stage_ids("opportunity")[2]
    record = created(
        post(
            api,
            {
                "workspaceId": api.ws,
                "name": "Big deal",
                "amount": 2500.75,
                "description": "Two hundred seats",
                "assignedComercialId": agent["id"],
                "contactId": contact["id"],
                "stageId": stage,
                "expirationDate": "2031-06-30T12:30:00Z",
                "segmentationId": segmentation["id"],
                "finalAmount": 2000,
                "files": ["https://files.example.com/a.pdf", "quote-7"],
            },
        )
    )
    assert record["name"] == "Big deal"
    assert record["amount"] == 2500.75
    assert record["description"] == "Two hundred seats"
    assert record["assignedAgentId"] == agent["id"]
    assert record["contactId"] == contact["id"]
    assert record["stageId"] == stage
    assert record["expirationDate"] == "2031-06-30T12:30:00.000000Z"
    assert record["segmentationId"] == segmentation["id"]
    assert record["finalAmount"] == 2000
    assert record["files"] == ["https://files.example.com/a.pdf", "quote-7"]


def test_user_creation_is_the_key_that_created_it(api: Api, account: NewAccount) -> None:
    assert created(post(api, {"name": "Deal", "amount": 1}))["userCreation"] == account.key_id


def test_create_in_the_workspace_named(api: Api) -> None:
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    record = created(post(api, {"name": "Deal", "amount": 1}, workspace=second))
    assert record["workspaceId"] == second
    second_stages = [
        s["id"]
        for s in ok_data(api.get(f"/api/workspace/{second}", workspace=second))["opportunityStages"]
    ]
    assert record["stageId"] == second_stages[0]


# --- card position ----------------------------------------------------------------------------


def test_new_card_goes_to_the_end_of_its_column(api: Api) -> None:
    first, second = api.stage_ids("opportunity")[:2]
    assert [created(post(api, {"name": "D", "amount": 1}))["orderInCards"] for _ in range(3)] == [
        0,
        1,
        2,
    ]
    # Another column starts at 0 and does not disturb the first.
    assert created(post(api, {"name": "D", "amount": 1, "stageId": second}))["orderInCards"] == 0
    assert created(post(api, {"name": "D", "amount": 1, "stageId": first}))["orderInCards"] == 3


def test_new_card_goes_after_a_card_moved_to_a_high_position(api: Api) -> None:
    opp = created(post(api, {"name": "D", "amount": 1}))
    api.set_opportunity(opp["id"], orderInCards=40)
    assert created(post(api, {"name": "D", "amount": 1}))["orderInCards"] == 41


def test_a_card_at_the_last_position_leaves_its_column_usable(api: Api) -> None:
    """At 2147483647, the largest position, new and moved cards share it (max + 1 is past
    the range) instead of failing."""
    first, second = api.stage_ids("opportunity")[:2]
    opp = created(post(api, {"name": "D", "amount": 1}))
    api.set_opportunity(opp["id"], orderInCards=2**31 - 1)
    assert created(post(api, {"name": "D", "amount": 1}))["orderInCards"] == 2**31 - 1
    other = created(post(api, {"name": "D", "amount": 1, "stageId": second}))
    assert api.set_opportunity(other["id"], stageId=first)["orderInCards"] == 2**31 - 1


def test_a_new_opportunity_stage_starts_at_zero(api: Api) -> None:
    stage = api.add_stage("opportunity")
    created(post(api, {"name": "D", "amount": 1}))
    record = created(post(api, {"name": "D", "amount": 1, "stageId": stage["id"]}))
    assert record["stageId"] == stage["id"]
    assert record["orderInCards"] == 0


# --- assigned agent ---------------------------------------------------------------------------


def test_assigned_comercial_id_sets_the_assigned_agent(api: Api) -> None:
    agent = api.add_agent()
    record = created(post(api, {"name": "D", "amount": 1, "assignedComercialId": agent["id"]}))
    assert record["assignedAgentId"] == agent["id"]
    assert "assignedComercialId" not in record


def test_assigned_agent_id_is_an_alias(api: Api) -> None:
    agent = api.add_agent()
    record = created(post(api, {"name": "D", "amount": 1, "assignedAgentId": agent["id"]}))
    assert record["assignedAgentId"] == agent["id"]


def test_both_agent_names_with_the_same_agent(api: Api) -> None:
    agent = api.add_agent()
    body = {"name": "D", "amount": 1, "assignedComercialId": agent["id"]}
    record = created(post(api, {**body, "assignedAgentId": agent["id"]}))
    assert record["assignedAgentId"] == agent["id"]


@pytest.mark.parametrize("field", ["assignedComercialId", "assignedAgentId"])
def test_unknown_agent_is_422_naming_the_field(api: Api, other_api: Api, field: str) -> None:
    invalid(post(api, {"name": "D", "amount": 1, field: UNKNOWN_ID}), field)
    invalid(post(api, {"name": "D", "amount": 1, field: "agent-7"}), field)
    theirs = other_api.add_agent()
    invalid(post(api, {"name": "D", "amount": 1, field: theirs["id"]}), field)
    invalid(post(api, {"name": "D", "amount": 1, field: 12}), field)


# --- required fields --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"amount": 1}, ["name"]),
        ({"name": None, "amount": 1}, ["name"]),
        ({"name": "D"}, ["amount"]),
        ({"name": "D", "amount": None}, ["amount"]),
        ({}, ["name", "amount"]),
        ({"name": None, "amount": None}, ["name", "amount"]),
        ({"description": "only this"}, ["name", "amount"]),
    ],
)
def test_missing_or_null_required_field_is_422_naming_it(
    api: Api, body: dict[str, Any], fields: list[str]
) -> None:
    body_ = invalid(post(api, body), *fields)
    assert fields[0] in body_["message"]


def test_a_missing_field_and_a_bad_value_are_reported_together(api: Api) -> None:
    invalid(post(api, {"amount": -5}), "name", "amount")


@pytest.mark.parametrize("name", ["", "   ", 5, True, ["Deal"], {"n": 1}, "x" * 201])
def test_invalid_name_is_422(api: Api, name: Any) -> None:
    invalid(post(api, {"name": name, "amount": 1}), "name")


def test_name_of_200_characters_is_accepted(api: Api) -> None:
    assert created(post(api, {"name": "n" * 200, "amount": 1}))["name"] == "n" * 200


def test_description_limits(api: Api) -> None:
    body = {"name": "D", "amount": 1}
    assert created(post(api, {**body, "description": "d" * 10_000}))["description"] == "d" * 10_000
    invalid(post(api, {**body, "description": "d" * 10_001}), "description")
    invalid(post(api, {**body, "description": 7}), "description")


def test_values_are_stored_as_sent(api: Api) -> None:
    name = 'Ñandú "quoted" \\ <b> 日本'
    record = created(post(api, {"name": name, "amount": 1, "description": "line1\nline2"}))
    assert record["name"] == name
    assert record["description"] == "line1\nline2"


# --- money ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "rendered"),
    [
        ("2500.75", "2500.75"),
        ("0", "0"),
        ("0.0", "0"),
        ("1200.50", "1200.5"),
        ("1200.5000", "1200.5"),
        ("1.50000", "1.5"),
        ("100", "100"),
        ("100.00", "100"),
        ("0.0001", "0.0001"),
        ("12.3456", "12.3456"),
        ("999999999999.9999", "999999999999.9999"),
        ("1000000000000", "1000000000000"),
        ("1000000000000.0000", "1000000000000"),
        ("1e3", "1000"),
        ("2.5E-3", "0.0025"),
    ],
)
def test_money_is_exact_and_rendered_without_trailing_zeros(
    api: Api, sent: str, rendered: str
) -> None:
    response = post_raw(api, f'{{"name": "D", "amount": {sent}}}')
    created(response)
    assert f'"amount":{rendered},' in response.text
    assert f'"finalAmount":{rendered},' in response.text


def test_largest_amount_with_cents_comes_back_exactly(api: Api) -> None:
    response = post_raw(
        api, '{"name": "D", "amount": 999999999999.9999, "finalAmount": 123456789012.3456}'
    )
    created(response)
    assert '"amount":999999999999.9999,' in response.text
    assert '"finalAmount":123456789012.3456,' in response.text


@pytest.mark.parametrize(
    "sent",
    [
        "-1",
        "-0.01",
        "-0.0001",
        "1000000000000.0001",
        "1000000000001",
        "1e13",
        "1" + "0" * 30,
        "1e400",
        "0.00001",
        "1.23456",
        "12.00001",
        '"100"',
        '"2500.75"',
        "true",
        "false",
        "[]",
        "{}",
        "[100]",
    ],
)
@pytest.mark.parametrize("field", ["amount", "finalAmount"])
def test_invalid_money_is_422(api: Api, sent: str, field: str) -> None:
    body = {"name": '"D"', "amount": "1", field: sent}
    text = "{" + ", ".join(f'"{k}": {v}' for k, v in body.items()) + "}"
    invalid(post_raw(api, text), field)


@pytest.mark.parametrize("sent", ["NaN", "Infinity", "-Infinity"])
def test_non_json_numbers_are_rejected(api: Api, sent: str) -> None:
    bad_request(post_raw(api, f'{{"name": "D", "amount": {sent}}}'))


def test_final_amount_defaults_to_amount(api: Api) -> None:
    response = post_raw(api, '{"name": "D", "amount": 77.7}')
    assert created(response)["finalAmount"] == 77.7
    assert '"finalAmount":77.7,' in response.text


def test_final_amount_may_be_given(api: Api) -> None:
    record = created(post_raw(api, '{"name": "D", "amount": 100, "finalAmount": 0}'))
    assert record["finalAmount"] == 0
    assert record["amount"] == 100


# --- expiration date --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "stored_as"),
    [
        ("2025-01-01T10:00:00+02:00", "2025-01-01T08:00:00.000000Z"),
        ("2025-01-01T10:00:00Z", "2025-01-01T10:00:00.000000Z"),
        ("2025-01-01T10:00:00", "2025-01-01T10:00:00.000000Z"),
        ("2025-01-01T10:00:00.5Z", "2025-01-01T10:00:00.500000Z"),
        ("2025-01-01T10:00:00.123456-05:00", "2025-01-01T15:00:00.123456Z"),
        ("2025-01-01T01:30:00+05:30", "2024-12-31T20:00:00.000000Z"),
        ("2025-04-07T21:56:19.325443Z", "2025-04-07T21:56:19.325443Z"),
    ],
)
def test_expiration_date_is_normalised_to_utc(api: Api, sent: str, stored_as: str) -> None:
    record = created(post(api, {"name": "D", "amount": 1, "expirationDate": sent}))
    assert record["expirationDate"] == stored_as


@pytest.mark.parametrize(
    "sent",
    [
        "tomorrow",
        "2025-13-01T00:00:00Z",
        "2025-02-30T00:00:00Z",
        "01/02/2025",
        " ",
        1735725600,
        True,
    ],
)
def test_invalid_expiration_date_is_422(api: Api, sent: Any) -> None:
    invalid(post(api, {"name": "D", "amount": 1, "expirationDate": sent}), "expirationDate")


# --- contact ----------------------------------------------------------------------------------


def test_contact_links_the_opportunity(api: Api) -> None:
    contact = api.create_contact()
    record = created(post(api, {"name": "D", "amount": 1, "contactId": contact["id"]}))
    assert record["contactId"] == contact["id"]


def test_empty_contact_id_means_not_linked(api: Api) -> None:
    assert created(post(api, {"name": "D", "amount": 1, "contactId": ""}))["contactId"] == ""


def test_unknown_contact_is_422(api: Api) -> None:
    invalid(post(api, {"name": "D", "amount": 1, "contactId": UNKNOWN_ID}), "contactId")
    invalid(post(api, {"name": "D", "amount": 1, "contactId": "contact-1"}), "contactId")
    invalid(post(api, {"name": "D", "amount": 1, "contactId": 42}), "contactId")


def test_contact_of_another_workspace_is_422(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    invalid(post(api, {"name": "D", "amount": 1, "contactId": theirs["id"]}), "contactId")
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    mine_elsewhere = ok_data(
        api.post("/api/contact", json={"name": "Ana", "email": "ana@example.com"}, workspace=second)
    )["contact"]
    assert mine_elsewhere["workspaceId"] == second
    invalid(post(api, {"name": "D", "amount": 1, "contactId": mine_elsewhere["id"]}), "contactId")


def test_deleted_contact_is_422(api: Api, database_url: str) -> None:
    contact = api.create_contact()
    soft_delete_contact(database_url, api.ws, contact["id"])
    invalid(post(api, {"name": "D", "amount": 1, "contactId": contact["id"]}), "contactId")


# --- stage and segmentation -------------------------------------------------------------------


def test_contact_stage_is_422(api: Api) -> None:
    stage = api.stage_ids("contact")[0]
    invalid(post(api, {"name": "D", "amount": 1, "stageId": stage}), "stageId")


def test_unknown_or_foreign_stage_is_422(api: Api, other_api: Api) -> None:
    invalid(post(api, {"name": "D", "amount": 1, "stageId": UNKNOWN_ID}), "stageId")
    invalid(post(api, {"name": "D", "amount": 1, "stageId": "stage-1"}), "stageId")
    invalid(post(api, {"name": "D", "amount": 1, "stageId": " "}), "stageId")
    invalid(post(api, {"name": "D", "amount": 1, "stageId": 3}), "stageId")
    theirs = other_api.stage_ids("opportunity")[0]
    invalid(post(api, {"name": "D", "amount": 1, "stageId": theirs}), "stageId")


def test_segmentation_must_be_of_the_workspace(api: Api, other_api: Api) -> None:
    mine = api.add_segmentation()
    assert (
        created(post(api, {"name": "D", "amount": 1, "segmentationId": mine["id"]}))[
            "segmentationId"
        ]
        == mine["id"]
    )
    theirs = other_api.add_segmentation()
    invalid(post(api, {"name": "D", "amount": 1, "segmentationId": theirs["id"]}), "segmentationId")
    invalid(post(api, {"name": "D", "amount": 1, "segmentationId": UNKNOWN_ID}), "segmentationId")


def test_every_bad_value_is_reported(api: Api) -> None:
    body = {
        "name": "",
        "amount": -1,
        "expirationDate": "soon",
        "files": "not-a-list",
        "description": 3,
    }
    invalid(post(api, body), "name", "amount", "expirationDate", "files", "description")


def test_every_bad_reference_is_reported(api: Api) -> None:
    body = {
        "name": "D",
        "amount": 1,
        "stageId": UNKNOWN_ID,
        "contactId": UNKNOWN_ID,
        "segmentationId": UNKNOWN_ID,
        "assignedComercialId": UNKNOWN_ID,
    }
    invalid(post(api, body), "stageId", "contactId", "segmentationId", "assignedComercialId")


# --- files ------------------------------------------------------------------------------------


def test_files_rules(api: Api) -> None:
    body = {"name": "D", "amount": 1}
    hundred = [f"f{i}" for i in range(100)]
    assert created(post(api, {**body, "files": hundred}))["files"] == hundred
    invalid(post(api, {**body, "files": [*hundred, "one more"]}), "files")
    invalid(post(api, {**body, "files": "a.pdf"}), "files")
    body_ = error(post(api, {**body, "files": ["a.pdf", 3]}), 422, "VALIDATION_ERROR")
    assert error_fields(body_)[0].startswith("files")


# --- body and workspace rules -----------------------------------------------------------------


@pytest.mark.parametrize(
    "key",
    [
        "opportCode",
        "statusId",
        "winLossStatus",
        "opportStatus",
        "userCreation",
        "orderInCards",
        "activities",
        "id",
        "assignedComercialName",
        "Name",
        "amout",
    ],
)
def test_unknown_body_key_is_400(api: Api, key: str) -> None:
    body = bad_request(post(api, {"name": "D", "amount": 1, key: 1}))
    assert key in body["message"]
    assert error_fields(body) == [key]


def test_unknown_key_wins_over_missing_required_fields(api: Api) -> None:
    bad_request(post(api, {"nombre": "D"}))


@pytest.mark.parametrize("text", ["[]", '"Deal"', "12", "null", "{", '{"name": "D",}'])
def test_body_that_is_not_a_json_object_is_400(api: Api, text: str) -> None:
    bad_request(post_raw(api, text))


def test_empty_body_is_400(api: Api) -> None:
    bad_request(api.post("/api/opportunity"))


def test_non_json_content_type_is_415(api: Api) -> None:
    response = api.post(
        "/api/opportunity",
        content='{"name": "D", "amount": 1}',
        headers={"Content-Type": "text/plain"},
    )
    error(response, 415, "UNSUPPORTED_MEDIA_TYPE")


def test_body_without_content_type_is_read_as_json(api: Api) -> None:
    response = api.post("/api/opportunity", content=b'{"name": "D", "amount": 1}')
    assert created(response)["name"] == "D"


def test_body_workspace_id_selects_the_workspace(api: Api) -> None:
    record = created(post(api, {"workspaceId": api.ws, "name": "D", "amount": 1}, workspace=None))
    assert record["workspaceId"] == api.ws


def test_body_workspace_id_must_equal_the_header(api: Api) -> None:
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    error(post(api, {"workspaceId": second, "name": "D", "amount": 1}), 403, "FORBIDDEN")


def test_no_workspace_is_401(api: Api) -> None:
    error(post(api, {"name": "D", "amount": 1}, workspace=None), 401, "WORKSPACE_REQUIRED")


def test_workspace_of_another_account_is_403(api: Api, other_api: Api) -> None:
    error(post(api, {"name": "D", "amount": 1}, workspace=other_api.ws), 403, "FORBIDDEN")
    error(post(api, {"name": "D", "amount": 1}, workspace=UNKNOWN_ID), 403, "FORBIDDEN")


def test_no_api_key_is_401(api: Api) -> None:
    error(post(api, {"name": "D", "amount": 1}, auth=None), 401, "UNAUTHORIZED")
    error(post(api, {"name": "D", "amount": 1}, auth="ccrm_not_a_key"), 401, "UNAUTHORIZED")


def test_an_empty_string_means_the_default_or_none(api: Api) -> None:
    """The original service's clients send `""` for "no value" (docs/api.md 5.18): a
    create's stageId takes its default, the first stage; expirationDate is none."""
    first_stage = api.stage_ids("opportunity")[0]
    created = api.create_opportunity(name="D", amount=1, stageId="", expirationDate="")
    assert created["stageId"] == first_stage and created["expirationDate"] is None
    contact = api.create_contact(name="A", email="empty-stage@example.com", stageId="")
    assert contact["stageId"] == api.stage_ids()[0]
    dated = api.create_opportunity(name="E", amount=1, expirationDate="2030-01-01T00:00:00Z")
    cleared = {"paramToUpdate": "expirationDate", "expirationDate": ""}
    assert (
        ok_data(api.update_opportunity(dated["id"], cleared))["oportunity"]["expirationDate"]
        is None
    )
    # An update cannot leave a record without a stage.
    body = {"paramToUpdate": "stageId", "stageId": ""}
    answer = error(api.update_opportunity(dated["id"], body), 422, "VALIDATION_ERROR")
    assert error_fields(answer) == ["stageId"]
