"""Update Opportunity (contract A.1, record B.2): the request rules and every updatable field."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sqlalchemy import update
from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.opportunities.table import opportunities
from tests.client import Api, error, error_fields, ok_data
from tests.opportunities.test_create import (
    OPPORTUNITY_KEYS,
    TIMESTAMP,
    UNKNOWN_ID,
    invalid,
    run_db,
    soft_delete_contact,
    stored,
)

UPDATED = "Opportunity successfully updated."
UPDATABLE = [
    "name", "description", "amount", "stageId", "assignedAgentId", "expirationDate",
    "contactId", "segmentationId", "winLossStatus", "finalAmount", "orderInCards", "files",
]  # fmt: skip


def new_opportunity(api: Api, **fields: Any) -> tuple[dict[str, Any], str]:
    """Create one; return the record and its ETag."""
    body = {"name": "Deal", "amount": 100, **fields}
    response = api.post("/api/opportunity", json=body)
    data = ok_data(response, "Opportunity successfully created.")
    return data["opportunity"], response.headers["etag"]


def updated(response: httpx.Response, opportunity_id: str) -> dict[str, Any]:
    data = ok_data(response, UPDATED)
    assert list(data) == ["id", "oportunity"]
    assert data["id"] == opportunity_id
    record: dict[str, Any] = data["oportunity"]
    assert list(record) == OPPORTUNITY_KEYS
    assert record["id"] == opportunity_id
    return record


def put(api: Api, opportunity_id: str, body: Any, **kw: Any) -> httpx.Response:
    return api.update_opportunity(opportunity_id, body, **kw)


def set_fields(api: Api, opportunity_id: str, **fields: Any) -> dict[str, Any]:
    body = {"paramToUpdate": ",".join(fields), **fields}
    return updated(put(api, opportunity_id, body), opportunity_id)


def put_raw(api: Api, opportunity_id: str, text: str) -> httpx.Response:
    return api.put(
        "/api/opportunity",
        params={"id": opportunity_id},
        content=text,
        headers={"Content-Type": "application/json"},
    )


def parse_ts(value: str) -> datetime:
    assert TIMESTAMP.match(value), value
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def bad_request(response: httpx.Response) -> dict[str, Any]:
    return error(response, 400, "BAD_REQUEST")


def soft_delete_opportunity(database_url: str, workspace_id: str, opportunity_id: str) -> None:
    """Mark an opportunity deleted as Delete opportunity does (B.3)."""

    async def work(conn: AsyncConnection) -> None:
        await conn.execute(
            update(opportunities)
            .where(
                opportunities.c.workspace_id == workspace_id,
                opportunities.c.id == opportunity_id,
            )
            .values(deleted_at=datetime.now(UTC), status_id=2)
        )

    run_db(database_url, work)


class Unchanged:
    """Asserts that a rejected update left the record (and its version) exactly as it was."""

    def __init__(self, database_url: str, api: Api, opportunity_id: str) -> None:
        self.database_url = database_url
        self.ws = api.ws
        self.id = opportunity_id
        self.before = stored(database_url, api.ws, opportunity_id)

    def check(self) -> None:
        assert stored(self.database_url, self.ws, self.id) == self.before


# --- success shape ----------------------------------------------------------------------------


def test_update_answers_id_and_oportunity_with_one_p(api: Api) -> None:
    opp, _ = new_opportunity(api)
    response = put(api, opp["id"], {"paramToUpdate": "name", "name": "Renamed"})
    data = ok_data(response, UPDATED)
    assert list(data) == ["id", "oportunity"]
    assert data["id"] == opp["id"]
    record = data["oportunity"]
    assert list(record) == OPPORTUNITY_KEYS
    assert record["name"] == "Renamed"


def test_update_keeps_every_other_field(api: Api) -> None:
    opp, _ = new_opportunity(api, description="Keep me", files=["a.pdf"])
    record = set_fields(api, opp["id"], name="Renamed")
    changed = {"name", "updatedDate"}
    assert {k: v for k, v in record.items() if k not in changed} == {
        k: v for k, v in opp.items() if k not in changed
    }


def test_update_is_stored(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    record = set_fields(api, opp["id"], name="Stored", amount=12.5)
    assert stored(database_url, api.ws, opp["id"]) == (record, 2)


def test_update_returns_the_new_etag(api: Api) -> None:
    opp, tag = new_opportunity(api)
    assert tag == '"1"'
    response = put(api, opp["id"], {"paramToUpdate": "name", "name": "A"})
    updated(response, opp["id"])
    assert response.headers["etag"] == '"2"'
    response = put(api, opp["id"], {"paramToUpdate": "name", "name": "B"})
    assert response.headers["etag"] == '"3"'


# --- workspace, id and auth -------------------------------------------------------------------


def test_header_is_required(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    body = {"paramToUpdate": "name", "name": "X"}
    error(put(api, opp["id"], body, workspace=None), 401, "WORKSPACE_REQUIRED")
    # The query workspaceId does not replace the required header.
    response = put(
        api, opp["id"], body, workspace=None, params={"id": opp["id"], "workspaceId": api.ws}
    )
    error(response, 401, "WORKSPACE_REQUIRED")
    response = put(api, opp["id"], body, headers={"x-workspace-id": ""})
    error(response, 401, "WORKSPACE_REQUIRED")
    unchanged.check()


def test_query_id_is_required(api: Api) -> None:
    body = {"paramToUpdate": "name", "name": "X"}
    body_ = bad_request(put(api, "", body, params={}))
    assert "id" in error_fields(body_)
    bad_request(put(api, "", body, params={"id": ""}))
    bad_request(put(api, "", body, params={"workspaceId": api.ws}))


def test_missing_id_is_400_even_with_a_body_id(api: Api) -> None:
    opp, _ = new_opportunity(api)
    bad_request(
        put(api, opp["id"], {"paramToUpdate": "name", "name": "X", "id": opp["id"]}, params={})
    )


def test_query_workspace_id_equal_to_the_header(api: Api) -> None:
    opp, _ = new_opportunity(api)
    response = put(
        api,
        opp["id"],
        {"paramToUpdate": "name", "name": "X"},
        params={"id": opp["id"], "workspaceId": api.ws},
    )
    assert updated(response, opp["id"])["name"] == "X"


def test_query_workspace_id_other_than_the_header_is_403(
    api: Api, other_api: Api, database_url: str
) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    body = {"paramToUpdate": "name", "name": "X"}
    for other in (second, other_api.ws, UNKNOWN_ID):
        error(
            put(api, opp["id"], body, params={"id": opp["id"], "workspaceId": other}),
            403,
            "FORBIDDEN",
        )
    unchanged.check()


def test_body_workspace_id(api: Api, other_api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    record = updated(
        put(api, opp["id"], {"paramToUpdate": "name", "name": "X", "workspaceId": api.ws}),
        opp["id"],
    )
    assert record["name"] == "X"
    unchanged = Unchanged(database_url, api, opp["id"])
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    for other in (second, other_api.ws):
        body = {"paramToUpdate": "name", "name": "Y", "workspaceId": other}
        error(put(api, opp["id"], body), 403, "FORBIDDEN")
    unchanged.check()


def test_workspace_the_key_cannot_use_is_403(api: Api, other_api: Api) -> None:
    opp, _ = new_opportunity(api)
    body = {"paramToUpdate": "name", "name": "X"}
    error(put(api, opp["id"], body, workspace=other_api.ws), 403, "FORBIDDEN")
    error(put(api, opp["id"], body, workspace=UNKNOWN_ID), 403, "FORBIDDEN")
    error(put(api, opp["id"], body, workspace="not-a-workspace"), 403, "FORBIDDEN")


def test_api_key_is_required(api: Api) -> None:
    opp, _ = new_opportunity(api)
    body = {"paramToUpdate": "name", "name": "X"}
    error(put(api, opp["id"], body, auth=None), 401, "UNAUTHORIZED")
    error(put(api, opp["id"], body, auth="ccrm_forged"), 401, "UNAUTHORIZED")


def test_unknown_id_is_404(api: Api) -> None:
    body = {"paramToUpdate": "name", "name": "X"}
    for unknown in (UNKNOWN_ID, "not-an-id", "42"):
        body_ = error(put(api, unknown, body), 404, "OPPORTUNITY_NOT_FOUND")
        assert unknown in body_["message"]


def test_opportunity_of_another_workspace_is_404(
    api: Api, other_api: Api, database_url: str
) -> None:
    theirs, _ = new_opportunity(other_api)
    unchanged = Unchanged(database_url, other_api, theirs["id"])
    error(
        put(api, theirs["id"], {"paramToUpdate": "name", "name": "X"}), 404, "OPPORTUNITY_NOT_FOUND"
    )
    # A workspace of the same account does not see it either.
    mine_elsewhere, _ = new_opportunity(api)
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    error(
        put(api, mine_elsewhere["id"], {"paramToUpdate": "name", "name": "X"}, workspace=second),
        404,
        "OPPORTUNITY_NOT_FOUND",
    )
    unchanged.check()


def test_body_id(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    record = updated(
        put(api, opp["id"], {"paramToUpdate": "name", "name": "X", "id": opp["id"]}), opp["id"]
    )
    assert record["name"] == "X"
    other, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    unchanged_other = Unchanged(database_url, api, other["id"])
    body_ = bad_request(
        put(api, opp["id"], {"paramToUpdate": "name", "name": "Y", "id": other["id"]})
    )
    assert error_fields(body_) == ["id"]
    unchanged.check()
    unchanged_other.check()


# --- structural errors (400) ------------------------------------------------------------------


def test_a_body_naming_no_field_is_400(api: Api, database_url: str) -> None:
    # Without paramToUpdate the body's keys name the fields (contract E.1): none is a 400.
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    body_ = bad_request(put(api, opp["id"], {}))
    assert "paramToUpdate" in body_["message"]
    bad_request(put(api, opp["id"], {"id": opp["id"]}))
    unchanged.check()


@pytest.mark.parametrize("param", [None, 5, True, ["name"], {"name": 1}, "", " ", ",", "name,"])
def test_param_to_update_must_name_fields_in_a_string(
    api: Api, database_url: str, param: Any
) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    bad_request(put(api, opp["id"], {"paramToUpdate": param, "name": "X"}))
    unchanged.check()


def test_named_field_missing_from_the_body_is_400(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    body_ = bad_request(put(api, opp["id"], {"paramToUpdate": "name"}))
    assert "name" in body_["message"]
    body_ = bad_request(put(api, opp["id"], {"paramToUpdate": "name,amount", "name": "X"}))
    assert "amount" in body_["message"]
    assert error_fields(body_) == ["amount"]
    unchanged.check()


@pytest.mark.parametrize(
    "field", ["foo", "Name", "assignedComercialID", "code", "contact", "variables"]
)
def test_unknown_field_is_400_listing_the_updatable_ones(
    api: Api, database_url: str, field: str
) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    body_ = bad_request(put(api, opp["id"], {"paramToUpdate": field, field: "x"}))
    assert field in body_["message"]
    for name in UPDATABLE:
        assert name in body_["message"], name
    assert error_fields(body_) == [field]
    unchanged.check()


@pytest.mark.parametrize(
    "field",
    [
        "id",
        "opportCode",
        "opportStatus",
        "winLossDate",
        "creationDate",
        "creationTypeId",
        "updatedDate",
        "deletionDate",
        "userDeletion",
        "statusId",
        "orderInCardsLastUpdated",
        "activities",
        "workspaceId",
        "userCreation",
    ],
)
def test_read_only_field_is_400_saying_so(api: Api, database_url: str, field: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    value = opp[field] if field in ("id", "workspaceId") else "x"
    body_ = bad_request(put(api, opp["id"], {"paramToUpdate": field, field: value}))
    assert "read-only" in body_["message"]
    assert field in body_["message"]
    for name in UPDATABLE:
        assert name in body_["message"], name
    unchanged.check()


def test_read_only_field_among_updatable_ones_rejects_all(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    body = {"paramToUpdate": "name,statusId", "name": "X", "statusId": 2}
    body_ = bad_request(put(api, opp["id"], body))
    assert "read-only" in body_["message"]
    unchanged.check()


@pytest.mark.parametrize("extra", ["amount", "foo", "opportCode", "paramToUpdates", "ID"])
def test_extra_body_key_is_400(api: Api, database_url: str, extra: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    body_ = bad_request(put(api, opp["id"], {"paramToUpdate": "name", "name": "X", extra: 5}))
    assert extra in body_["message"]
    assert error_fields(body_) == [extra]
    unchanged.check()


@pytest.mark.parametrize(
    "text", ["[]", '["name"]', '"name"', "7", "null", "{", '{"paramToUpdate": "name",}']
)
def test_body_that_is_not_a_json_object_is_400(api: Api, database_url: str, text: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    bad_request(put_raw(api, opp["id"], text))
    unchanged.check()


def test_empty_body_is_400(api: Api) -> None:
    opp, _ = new_opportunity(api)
    bad_request(api.put("/api/opportunity", params={"id": opp["id"]}))


def test_non_json_content_type_is_415(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    response = api.put(
        "/api/opportunity",
        params={"id": opp["id"]},
        content='{"paramToUpdate": "name", "name": "X"}',
        headers={"Content-Type": "text/plain"},
    )
    error(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    unchanged.check()


def test_structural_errors_come_before_the_record_lookup(api: Api) -> None:
    bad_request(put(api, UNKNOWN_ID, {}))
    bad_request(put(api, UNKNOWN_ID, {"paramToUpdate": "foo", "foo": 1}))
    bad_request(put(api, UNKNOWN_ID, {"paramToUpdate": "opportCode", "opportCode": "x"}))
    bad_request(put(api, UNKNOWN_ID, {"paramToUpdate": "name", "name": "X", "extra": 1}))
    # ... and value errors too.
    invalid(put(api, UNKNOWN_ID, {"paramToUpdate": "amount", "amount": -1}), "amount")
    # A well-formed update of an unknown id is the 404.
    error(
        put(api, UNKNOWN_ID, {"paramToUpdate": "amount", "amount": 1}), 404, "OPPORTUNITY_NOT_FOUND"
    )


def test_workspace_errors_come_before_the_missing_id(api: Api) -> None:
    body = {"paramToUpdate": "name", "name": "X"}
    error(put(api, "", body, params={}, workspace=None), 401, "WORKSPACE_REQUIRED")
    error(put(api, "", body, params={"workspaceId": UNKNOWN_ID}), 403, "FORBIDDEN")


# --- name and description ---------------------------------------------------------------------


def test_name(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    assert set_fields(api, opp["id"], name="n" * 200)["name"] == "n" * 200
    unchanged = Unchanged(database_url, api, opp["id"])
    for bad in ("", "  ", None, 5, True, ["x"], "n" * 201):
        invalid(put(api, opp["id"], {"paramToUpdate": "name", "name": bad}), "name")
    unchanged.check()


def test_description(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api, description="Old")
    assert set_fields(api, opp["id"], description="New text")["description"] == "New text"
    assert set_fields(api, opp["id"], description="")["description"] == ""
    assert set_fields(api, opp["id"], description="d" * 10_000)["description"] == "d" * 10_000
    unchanged = Unchanged(database_url, api, opp["id"])
    for bad in ("d" * 10_001, 5, False, ["x"]):
        invalid(
            put(api, opp["id"], {"paramToUpdate": "description", "description": bad}), "description"
        )
    unchanged.check()


# --- money ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("sent", "rendered"),
    [
        ("2500.75", "2500.75"),
        ("0", "0"),
        ("1200.50", "1200.5"),
        ("1.50000", "1.5"),
        ("999999999999.9999", "999999999999.9999"),
        ("1000000000000", "1000000000000"),
        ("0.0001", "0.0001"),
    ],
)
@pytest.mark.parametrize("field", ["amount", "finalAmount"])
def test_money_update_is_exact(api: Api, field: str, sent: str, rendered: str) -> None:
    opp, _ = new_opportunity(api)
    response = put_raw(api, opp["id"], f'{{"paramToUpdate": "{field}", "{field}": {sent}}}')
    updated(response, opp["id"])
    assert f'"{field}":{rendered},' in response.text


@pytest.mark.parametrize(
    "sent",
    [
        "-1",
        "-0.0001",
        "1000000000000.0001",
        "1e13",
        "1" + "0" * 30,
        "0.00001",
        "1.23456",
        '"100"',
        "true",
        "null",
        "[]",
    ],
)
@pytest.mark.parametrize("field", ["amount", "finalAmount"])
def test_invalid_money_update_is_422(api: Api, database_url: str, field: str, sent: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    invalid(put_raw(api, opp["id"], f'{{"paramToUpdate": "{field}", "{field}": {sent}}}'), field)
    unchanged.check()


def test_final_amount_follows_amount_until_set(api: Api) -> None:
    opp, _ = new_opportunity(api, amount=100)
    assert opp["finalAmount"] == 100
    record = set_fields(api, opp["id"], amount=250.5)
    assert record["amount"] == 250.5 and record["finalAmount"] == 250.5
    record = set_fields(api, opp["id"], amount=300)
    assert record["finalAmount"] == 300
    record = set_fields(api, opp["id"], finalAmount=280)
    assert record["amount"] == 300 and record["finalAmount"] == 280
    record = set_fields(api, opp["id"], amount=500)
    assert record["amount"] == 500 and record["finalAmount"] == 280


def test_final_amount_set_to_the_amount_still_stops_following(api: Api) -> None:
    opp, _ = new_opportunity(api, amount=100)
    set_fields(api, opp["id"], finalAmount=100)
    record = set_fields(api, opp["id"], amount=900)
    assert record["amount"] == 900 and record["finalAmount"] == 100


def test_final_amount_given_at_create_does_not_follow(api: Api) -> None:
    opp, _ = new_opportunity(api, amount=100, finalAmount=90)
    record = set_fields(api, opp["id"], amount=120)
    assert record["amount"] == 120 and record["finalAmount"] == 90


def test_amount_and_final_amount_together(api: Api) -> None:
    opp, _ = new_opportunity(api, amount=100)
    record = set_fields(api, opp["id"], amount=200, finalAmount=150)
    assert record["amount"] == 200 and record["finalAmount"] == 150
    record = set_fields(api, opp["id"], amount=300)
    assert record["finalAmount"] == 150


def test_the_event_says_final_amount_changed_only_when_it_followed(api: Api) -> None:
    """D.1's `changed` on every backend alike: an amount equal to a finalAmount set apart
    does not make it follow (the stored flag tells, not the values)."""

    def last_changed(opportunity_id: str) -> list[str]:
        page = ok_data(api.get(f"/api/opportunity/{opportunity_id}/history"))
        changed: list[str] = page["events"][-1]["changed"]
        return changed

    apart, _ = new_opportunity(api, amount=5, finalAmount=7)
    set_fields(api, apart["id"], amount=7)
    assert "finalAmount" not in last_changed(apart["id"])
    named, _ = new_opportunity(api, amount=5)
    set_fields(api, named["id"], finalAmount=5)
    set_fields(api, named["id"], amount=5)
    assert "finalAmount" not in last_changed(named["id"])
    following, _ = new_opportunity(api, amount=5)
    set_fields(api, following["id"], amount=6)
    assert "finalAmount" in last_changed(following["id"])


def test_a_rejected_final_amount_does_not_stop_following(api: Api) -> None:
    opp, _ = new_opportunity(api, amount=100)
    invalid(put(api, opp["id"], {"paramToUpdate": "finalAmount", "finalAmount": -1}), "finalAmount")
    assert set_fields(api, opp["id"], amount=400)["finalAmount"] == 400


# --- stage and card position ------------------------------------------------------------------


def test_stage_change_moves_the_card_to_the_end_of_the_new_column(
    api: Api, database_url: str
) -> None:
    first, second = api.stage_ids("opportunity")[:2]
    a, _ = new_opportunity(api)
    b, _ = new_opportunity(api)
    c, _ = new_opportunity(api)
    assert [a["orderInCards"], b["orderInCards"], c["orderInCards"]] == [0, 1, 2]
    x, _ = new_opportunity(api, stageId=second)
    y, _ = new_opportunity(api, stageId=second)
    assert [x["orderInCards"], y["orderInCards"]] == [0, 1]
    moved = set_fields(api, a["id"], stageId=second)
    assert moved["stageId"] == second
    assert moved["orderInCards"] == 2
    assert parse_ts(moved["orderInCardsLastUpdated"]) > parse_ts(a["orderInCardsLastUpdated"])
    # Other cards are not renumbered.
    assert stored(database_url, api.ws, b["id"])[0]["orderInCards"] == 1
    assert stored(database_url, api.ws, c["id"])[0]["orderInCards"] == 2
    # Back to the first column: the end of it.
    assert set_fields(api, a["id"], stageId=first)["orderInCards"] == 3


def test_moving_into_an_empty_column_is_position_zero(api: Api) -> None:
    stage = api.add_stage("opportunity")
    opp, _ = new_opportunity(api)
    new_opportunity(api)
    moved = set_fields(api, opp["id"], stageId=stage["id"])
    assert moved["stageId"] == stage["id"] and moved["orderInCards"] == 0


def test_same_stage_keeps_the_position(api: Api) -> None:
    first = api.stage_ids("opportunity")[0]
    opp, _ = new_opportunity(api)
    new_opportunity(api)
    record = set_fields(api, opp["id"], stageId=first)
    assert record["orderInCards"] == 0
    assert record["orderInCardsLastUpdated"] == opp["orderInCardsLastUpdated"]


def test_stage_and_order_together_take_the_order_given(api: Api) -> None:
    second = api.stage_ids("opportunity")[1]
    new_opportunity(api, stageId=second)
    opp, _ = new_opportunity(api)
    record = set_fields(api, opp["id"], stageId=second, orderInCards=7)
    assert record["stageId"] == second and record["orderInCards"] == 7


def test_invalid_stage_is_422(api: Api, other_api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    bad_values = [
        api.stage_ids("contact")[0],
        other_api.stage_ids("opportunity")[1],
        UNKNOWN_ID,
        "stage-2",
        "",
        None,
        7,
    ]
    for bad in bad_values:
        invalid(put(api, opp["id"], {"paramToUpdate": "stageId", "stageId": bad}), "stageId")
    unchanged.check()


def test_order_in_cards(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    record = set_fields(api, opp["id"], orderInCards=5)
    assert record["orderInCards"] == 5
    assert parse_ts(record["orderInCardsLastUpdated"]) > parse_ts(opp["orderInCardsLastUpdated"])
    assert set_fields(api, opp["id"], orderInCards=0)["orderInCards"] == 0
    unchanged = Unchanged(database_url, api, opp["id"])
    for bad in (-1, "1", 1.5, True, None, [1], 2**31, 10**20):
        invalid(
            put(api, opp["id"], {"paramToUpdate": "orderInCards", "orderInCards": bad}),
            "orderInCards",
        )
    unchanged.check()


def test_other_fields_leave_the_card_position_time_alone(api: Api) -> None:
    opp, _ = new_opportunity(api)
    record = set_fields(api, opp["id"], name="X", amount=3, description="d")
    assert record["orderInCardsLastUpdated"] == opp["orderInCardsLastUpdated"]


# --- references -------------------------------------------------------------------------------


def test_assigned_agent(api: Api, other_api: Api, database_url: str) -> None:
    agent = api.add_agent()
    opp, _ = new_opportunity(api)
    assert set_fields(api, opp["id"], assignedAgentId=agent["id"])["assignedAgentId"] == agent["id"]
    unchanged = Unchanged(database_url, api, opp["id"])
    for bad in (UNKNOWN_ID, "agent-1", other_api.add_agent()["id"], 3):
        body = {"paramToUpdate": "assignedAgentId", "assignedAgentId": bad}
        invalid(put(api, opp["id"], body), "assignedAgentId")
    unchanged.check()
    assert set_fields(api, opp["id"], assignedAgentId=None)["assignedAgentId"] is None


def test_segmentation(api: Api, other_api: Api, database_url: str) -> None:
    segmentation = api.add_segmentation()
    opp, _ = new_opportunity(api)
    record = set_fields(api, opp["id"], segmentationId=segmentation["id"])
    assert record["segmentationId"] == segmentation["id"]
    unchanged = Unchanged(database_url, api, opp["id"])
    for bad in (UNKNOWN_ID, "seg-1", other_api.add_segmentation()["id"], 3):
        body = {"paramToUpdate": "segmentationId", "segmentationId": bad}
        invalid(put(api, opp["id"], body), "segmentationId")
    unchanged.check()
    assert set_fields(api, opp["id"], segmentationId=None)["segmentationId"] is None


def test_contact_links_and_unlinks(api: Api) -> None:
    contact = api.create_contact()
    other = api.create_contact()
    opp, _ = new_opportunity(api)
    assert set_fields(api, opp["id"], contactId=contact["id"])["contactId"] == contact["id"]
    assert set_fields(api, opp["id"], contactId=other["id"])["contactId"] == other["id"]
    assert set_fields(api, opp["id"], contactId="")["contactId"] == ""
    set_fields(api, opp["id"], contactId=contact["id"])
    assert set_fields(api, opp["id"], contactId=None)["contactId"] == ""


def test_invalid_contact_is_422(api: Api, other_api: Api, database_url: str) -> None:
    contact = api.create_contact()
    opp, _ = new_opportunity(api, contactId=contact["id"])
    gone = api.create_contact()
    soft_delete_contact(database_url, api.ws, gone["id"])
    unchanged = Unchanged(database_url, api, opp["id"])
    for bad in (UNKNOWN_ID, "contact-1", other_api.create_contact()["id"], gone["id"], 12, True):
        invalid(put(api, opp["id"], {"paramToUpdate": "contactId", "contactId": bad}), "contactId")
    unchanged.check()


def test_expiration_date(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    cases = [
        ("2025-01-01T10:00:00+02:00", "2025-01-01T08:00:00.000000Z"),
        ("2025-01-01T10:00:00Z", "2025-01-01T10:00:00.000000Z"),
        ("2025-01-01T10:00:00", "2025-01-01T10:00:00.000000Z"),
        ("2030-06-15T23:59:59.999999-03:00", "2030-06-16T02:59:59.999999Z"),
        ("9999-12-31T23:59:59.999999Z", "9999-12-31T23:59:59.999999Z"),
        ("1970-01-01T00:00:00Z", "1970-01-01T00:00:00.000000Z"),
    ]
    for sent, stored_as in cases:
        assert set_fields(api, opp["id"], expirationDate=sent)["expirationDate"] == stored_as
    unchanged = Unchanged(database_url, api, opp["id"])
    bad_values = (
        "next week",
        "2025-02-30T00:00:00Z",
        "2025-01-01T25:00:00Z",
        "9999-12-31T23:00:00-05:00",
        " ",
        1735725600,
        False,
    )
    for bad in bad_values:
        body = {"paramToUpdate": "expirationDate", "expirationDate": bad}
        invalid(put(api, opp["id"], body), "expirationDate")
    unchanged.check()
    assert set_fields(api, opp["id"], expirationDate=None)["expirationDate"] is None
    set_fields(api, opp["id"], expirationDate="2030-01-01")
    # `""` is none, as the original service's clients send it (docs/api.md 5.18).
    assert set_fields(api, opp["id"], expirationDate="")["expirationDate"] is None


def test_files(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    files = ["https://files.example.com/q.pdf", "ref-2"]
    assert set_fields(api, opp["id"], files=files)["files"] == files
    hundred = [f"f{i}" for i in range(100)]
    assert set_fields(api, opp["id"], files=hundred)["files"] == hundred
    assert set_fields(api, opp["id"], files=[])["files"] == []
    unchanged = Unchanged(database_url, api, opp["id"])
    for bad in ("a.pdf", [*hundred, "x"], [1], [""], None, {"a": 1}):
        response = put(api, opp["id"], {"paramToUpdate": "files", "files": bad})
        body_ = error(response, 422, "VALIDATION_ERROR")
        assert error_fields(body_)[0].startswith("files")
    unchanged.check()


# --- win / loss -------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [1, 2])
def test_win_or_loss_closes_the_opportunity(api: Api, status: int) -> None:
    opp, _ = new_opportunity(api)
    before = datetime.now(UTC)
    record = set_fields(api, opp["id"], winLossStatus=status)
    after = datetime.now(UTC)
    assert record["winLossStatus"] == status
    assert record["opportStatus"] == 2
    assert record["winLossDate"] is not None
    assert before <= parse_ts(record["winLossDate"]) <= after


def test_reopening_clears_the_win_loss_date(api: Api) -> None:
    opp, _ = new_opportunity(api)
    won = set_fields(api, opp["id"], winLossStatus=1)
    lost = set_fields(api, opp["id"], winLossStatus=2)
    assert lost["winLossStatus"] == 2 and lost["opportStatus"] == 2
    assert parse_ts(lost["winLossDate"]) > parse_ts(won["winLossDate"])
    reopened = set_fields(api, opp["id"], winLossStatus=0)
    assert reopened["winLossStatus"] == 0
    assert reopened["winLossDate"] is None
    assert reopened["opportStatus"] == 1


def test_other_updates_keep_the_win_loss_date(api: Api) -> None:
    opp, _ = new_opportunity(api)
    won = set_fields(api, opp["id"], winLossStatus=1)
    record = set_fields(api, opp["id"], name="Renamed")
    assert record["winLossDate"] == won["winLossDate"]
    assert record["opportStatus"] == 2 and record["winLossStatus"] == 1


@pytest.mark.parametrize("bad", [3, -1, "1", True, False, None, 1.5, "won", [1]])
def test_invalid_win_loss_status_is_422(api: Api, database_url: str, bad: Any) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    invalid(
        put(api, opp["id"], {"paramToUpdate": "winLossStatus", "winLossStatus": bad}),
        "winLossStatus",
    )
    unchanged.check()


# --- updatedDate ------------------------------------------------------------------------------


def test_updated_date_is_the_time_of_the_last_change(api: Api) -> None:
    opp, _ = new_opportunity(api)
    assert opp["updatedDate"] is None
    before = datetime.now(UTC)
    first = set_fields(api, opp["id"], name="One")
    after = datetime.now(UTC)
    first_at = parse_ts(first["updatedDate"])
    assert before <= first_at <= after
    assert first_at >= parse_ts(opp["creationDate"])
    second = set_fields(api, opp["id"], amount=3)
    assert parse_ts(second["updatedDate"]) > first_at
    third = set_fields(api, opp["id"], description="x")
    assert parse_ts(third["updatedDate"]) > parse_ts(second["updatedDate"])
    assert third["creationDate"] == opp["creationDate"]


def test_rejected_update_does_not_touch_updated_date(api: Api) -> None:
    opp, _ = new_opportunity(api)
    invalid(put(api, opp["id"], {"paramToUpdate": "amount", "amount": -3}), "amount")
    record = set_fields(api, opp["id"], name="X")
    assert record["amount"] == 100
    assert record["updatedDate"] is not None


# --- several fields ---------------------------------------------------------------------------


def test_several_fields_at_once(api: Api) -> None:
    agent = api.add_agent()
    second = api.stage_ids("opportunity")[1]
    opp, _ = new_opportunity(api)
    body = {
        "paramToUpdate": "name,amount,description,stageId,assignedAgentId,winLossStatus",
        "name": "Many",
        "amount": 42.42,
        "description": "all at once",
        "stageId": second,
        "assignedAgentId": agent["id"],
        "winLossStatus": 1,
    }
    record = updated(put(api, opp["id"], body), opp["id"])
    assert record["name"] == "Many"
    assert record["amount"] == 42.42 and record["finalAmount"] == 42.42
    assert record["description"] == "all at once"
    assert record["stageId"] == second and record["orderInCards"] == 0
    assert record["assignedAgentId"] == agent["id"]
    assert record["winLossStatus"] == 1 and record["opportStatus"] == 2


def test_name_and_amount(api: Api) -> None:
    opp, _ = new_opportunity(api)
    record = updated(
        put(api, opp["id"], {"paramToUpdate": "name,amount", "name": "N", "amount": 7}), opp["id"]
    )
    assert record["name"] == "N" and record["amount"] == 7


def test_one_bad_value_rejects_the_whole_update(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    body = {"paramToUpdate": "name,amount", "name": "Good", "amount": -1}
    invalid(put(api, opp["id"], body), "amount")
    body = {"paramToUpdate": "name,stageId", "name": "Good", "stageId": UNKNOWN_ID}
    invalid(put(api, opp["id"], body), "stageId")
    unchanged.check()


def test_every_bad_value_is_reported(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    body = {
        "paramToUpdate": "name,amount,winLossStatus,expirationDate,orderInCards",
        "name": "",
        "amount": "1",
        "winLossStatus": 9,
        "expirationDate": "never",
        "orderInCards": -2,
    }
    invalid(
        put(api, opp["id"], body),
        "name",
        "amount",
        "winLossStatus",
        "expirationDate",
        "orderInCards",
    )
    unchanged.check()


def test_every_bad_reference_is_reported(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    unchanged = Unchanged(database_url, api, opp["id"])
    body = {
        "paramToUpdate": "stageId,assignedAgentId,contactId,segmentationId",
        "stageId": UNKNOWN_ID,
        "assignedAgentId": UNKNOWN_ID,
        "contactId": UNKNOWN_ID,
        "segmentationId": UNKNOWN_ID,
    }
    invalid(put(api, opp["id"], body), "stageId", "assignedAgentId", "contactId", "segmentationId")
    unchanged.check()


# --- ETag / If-Match ---------------------------------------------------------------------


def test_if_match_with_the_current_etag_applies(api: Api) -> None:
    opp, tag = new_opportunity(api)
    response = put(
        api, opp["id"], {"paramToUpdate": "name", "name": "X"}, headers={"If-Match": tag}
    )
    assert updated(response, opp["id"])["name"] == "X"
    new_tag = response.headers["etag"]
    assert new_tag != tag
    response = put(
        api, opp["id"], {"paramToUpdate": "name", "name": "Y"}, headers={"If-Match": new_tag}
    )
    assert updated(response, opp["id"])["name"] == "Y"


def test_if_match_compares_tags_strongly_not_as_numbers(api: Api) -> None:
    """`"01"` is not the tag `"1"` (contract C: a strong tag)."""
    opp = api.create_opportunity()
    tag = api.get(f"/api/opportunity/{opp['id']}").headers["etag"]
    padded = f'"0{tag.strip(chr(34))}"'
    response = put(
        api, opp["id"], {"paramToUpdate": "name", "name": "X"}, headers={"If-Match": padded}
    )
    error(response, 412, "PRECONDITION_FAILED")


def test_stale_if_match_is_412_and_changes_nothing(api: Api, database_url: str) -> None:
    opp, tag = new_opportunity(api)
    set_fields(api, opp["id"], name="Changed meanwhile")
    unchanged = Unchanged(database_url, api, opp["id"])
    for stale in (tag, '"99"', 'W/"2"', "2", "garbage", '"2147483648"', '"99999999999999999999"'):
        response = put(
            api, opp["id"], {"paramToUpdate": "name", "name": "Lost"}, headers={"If-Match": stale}
        )
        error(response, 412, "PRECONDITION_FAILED")
    unchanged.check()


def test_if_match_star_matches_any_version(api: Api) -> None:
    opp, _ = new_opportunity(api)
    set_fields(api, opp["id"], name="A")
    response = put(
        api, opp["id"], {"paramToUpdate": "name", "name": "B"}, headers={"If-Match": "*"}
    )
    assert updated(response, opp["id"])["name"] == "B"


def test_if_match_on_an_unknown_id_is_404(api: Api) -> None:
    response = put(
        api, UNKNOWN_ID, {"paramToUpdate": "name", "name": "B"}, headers={"If-Match": '"1"'}
    )
    error(response, 404, "OPPORTUNITY_NOT_FOUND")


def test_a_rejected_update_keeps_the_version(api: Api) -> None:
    opp, tag = new_opportunity(api)
    invalid(put(api, opp["id"], {"paramToUpdate": "amount", "amount": -1}), "amount")
    bad_request(put(api, opp["id"], {"paramToUpdate": "statusId", "statusId": 2}))
    response = put(
        api, opp["id"], {"paramToUpdate": "name", "name": "Z"}, headers={"If-Match": tag}
    )
    assert updated(response, opp["id"])["name"] == "Z"


# --- deleted records --------------------------------------------------------------------------


def test_deleted_opportunity_is_404(api: Api, database_url: str) -> None:
    opp, _ = new_opportunity(api)
    soft_delete_opportunity(database_url, api.ws, opp["id"])
    error(put(api, opp["id"], {"paramToUpdate": "name", "name": "X"}), 404, "OPPORTUNITY_NOT_FOUND")


def test_linked_contact_that_is_deleted_later_still_renders(api: Api, database_url: str) -> None:
    contact = api.create_contact()
    opp, _ = new_opportunity(api, contactId=contact["id"])
    soft_delete_contact(database_url, api.ws, contact["id"])
    record = set_fields(api, opp["id"], name="After the contact left")
    assert record["contactId"] == contact["id"]
