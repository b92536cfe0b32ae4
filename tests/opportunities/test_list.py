"""List opportunities (contract B.3 "as List contacts", part C filters and page size)."""

from __future__ import annotations

import dataclasses
import os
import random
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from chatcrm.core.pagination import Position, TokenCodec
from chatcrm.opportunities.listing import FILTERS
from chatcrm.records.listing import read_filters
from tests.client import Api, error, error_fields, ok_data

LISTED = "List obtained successfully."
PAGE_KEYS = ["workspaceId", "continuationToken", "data"]
OPPORTUNITY_KEYS = [
    "id", "opportCode", "opportStatus", "winLossStatus", "winLossDate", "finalAmount",
    "creationDate", "creationTypeId", "updatedDate", "deletionDate", "userDeletion",
    "statusId", "files", "orderInCards", "orderInCardsLastUpdated", "activities",
    "segmentationId", "workspaceId", "name", "description", "amount", "userCreation",
    "contactId", "expirationDate", "assignedAgentId", "stageId",
]  # fmt: skip
UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"


# --- helpers -------------------------------------------------------------------------------


def list_opportunities(api: Api, **params: Any) -> httpx.Response:
    return api.get("/api/opportunity", params=params)


def page(api: Api, **params: Any) -> dict[str, Any]:
    data: dict[str, Any] = ok_data(list_opportunities(api, **params), LISTED)
    assert list(data) == PAGE_KEYS
    assert data["workspaceId"] == api.ws
    for record in data["data"]:
        assert list(record) == OPPORTUNITY_KEYS
        assert record["workspaceId"] == api.ws
    return data


def all_pages(
    api: Api, page_size: int | None = None, between: Any = None, **filters: Any
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    token: str | None = None
    for n in range(1000):
        params = dict(filters)
        if page_size is not None:
            params["pageSize"] = page_size
        if token is not None:
            params["continuationToken"] = token
        data = page(api, **params)
        records += data["data"]
        token = data["continuationToken"]
        if token is None:
            return records
        assert data["data"], "a token must not lead to an empty page"
        if between is not None:
            between(n)
    raise AssertionError("the list never ended")


def ids(records: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in records]


def newest_first(records: list[dict[str, Any]]) -> list[str]:
    return ids(sorted(records, key=lambda r: (r["creationDate"], r["id"]), reverse=True))


def make(api: Api, count: int, **fields: Any) -> list[dict[str, Any]]:
    return [api.create_opportunity(**fields) for _ in range(count)]


def reversed_ids(records: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in reversed(records)]


def second_workspace(api: Api) -> Api:
    data = ok_data(api.post("/api/workspace", json={"name": "Second"}))
    return Api(api.http, dataclasses.replace(api.account, workspace_id=data["id"]))


def token_of(api: Api, count: int = 3, **filters: Any) -> str:
    make(api, count)
    token = page(api, pageSize=1, **filters)["continuationToken"]
    assert isinstance(token, str) and token
    return token


def invalid_token(response: httpx.Response) -> None:
    error(response, 400, "INVALID_CONTINUATION_TOKEN")


def invalid_value(response: httpx.Response, field: str) -> None:
    body = error(response, 422, "VALIDATION_ERROR")
    assert error_fields(body) == [field], body


def delete(api: Api, opportunity_id: str) -> None:
    ok_data(api.delete(f"/api/opportunity/{opportunity_id}"), "Opportunity successfully deleted.")


# --- shape and order -----------------------------------------------------------------------


def test_an_empty_workspace_lists_nothing(api: Api) -> None:
    assert page(api) == {"workspaceId": api.ws, "continuationToken": None, "data": []}


def test_records_are_full_opportunities_equal_to_get(api: Api) -> None:
    contact = api.create_contact()
    agent = api.add_agent()
    created = api.create_opportunity(
        name="Big deal",
        description="Annual plan",
        amount=1200.50,
        contactId=contact["id"],
        assignedComercialId=agent["id"],
        files=["https://files.example.com/a.pdf"],
    )
    opportunity_id = created["id"]
    ok_data(
        api.post(
            f"/api/opportunity/{opportunity_id}/agent/activities",
            json={"content": "Called", "categoryType": "Calls"},
        )
    )
    [listed] = page(api)["data"]
    single = ok_data(api.get(f"/api/opportunity/{opportunity_id}"))["data"][0]
    assert listed == single
    assert listed["amount"] == 1200.5
    assert listed["contactId"] == contact["id"]
    assert listed["assignedAgentId"] == agent["id"]
    assert [a["content"] for a in listed["activities"]] == ["Called"]


def test_newest_first_by_creation_date_then_id(api: Api) -> None:
    created = make(api, 6)
    records = page(api)["data"]
    assert ids(records) == reversed_ids(created)
    assert ids(records) == newest_first(records)


def test_default_page_size_is_20(api: Api) -> None:
    created = make(api, 21)
    first = page(api)
    assert len(first["data"]) == 20 and first["continuationToken"]
    second = page(api, continuationToken=first["continuationToken"])
    assert ids(second["data"]) == [created[0]["id"]]
    assert second["continuationToken"] is None


def test_token_is_null_when_the_last_page_is_exactly_full(api: Api) -> None:
    created = make(api, 40)
    first = page(api, pageSize=20)
    second = page(api, pageSize=20, continuationToken=first["continuationToken"])
    assert len(second["data"]) == 20
    assert second["continuationToken"] is None
    assert ids(first["data"]) + ids(second["data"]) == reversed_ids(created)
    only = page(api, pageSize=40)
    assert len(only["data"]) == 40 and only["continuationToken"] is None


@pytest.mark.parametrize("size", [1, 4, 9, 100])
def test_paging_returns_every_record_once_in_order(api: Api, size: int) -> None:
    created = make(api, 9)
    assert ids(all_pages(api, size)) == reversed_ids(created)


def test_page_size_may_change_from_page_to_page(api: Api) -> None:
    created = make(api, 8)
    expected = reversed_ids(created)
    first = page(api, pageSize=5)
    second = page(api, pageSize=1, continuationToken=first["continuationToken"])
    third = page(api, pageSize=50, continuationToken=second["continuationToken"])
    assert ids(first["data"]) == expected[:5]
    assert ids(second["data"]) == expected[5:6]
    assert ids(third["data"]) == expected[6:]


@pytest.mark.parametrize("size", ["0", "101", "abc", "-1", "1.5", "+3", "²"])
def test_page_size_out_of_range_or_not_an_integer_is_422(api: Api, size: str) -> None:
    invalid_value(list_opportunities(api, pageSize=size), "pageSize")


def test_deleted_opportunities_are_not_listed(api: Api) -> None:
    kept, gone = make(api, 2)
    delete(api, gone["id"])
    assert ids(all_pages(api)) == [kept["id"]]
    assert all_pages(api, q=gone["opportCode"]) == []


# --- continuation tokens ---------------------------------------------------------------------


@pytest.mark.parametrize("garbage", ["abc", "a.b", ".", "null", "x" * 2000, "eyJ9.eyJ9"])
def test_a_garbage_token_is_400(api: Api, garbage: str) -> None:
    make(api, 2)
    invalid_token(list_opportunities(api, continuationToken=garbage))


def test_a_truncated_or_altered_token_is_400(api: Api) -> None:
    token = token_of(api)
    for cut in (1, len(token) // 2, len(token) - 1):
        invalid_token(list_opportunities(api, continuationToken=token[:cut]))
    for i in (0, 3, len(token) // 2, len(token) - 3):
        flipped = token[:i] + ("A" if token[i] != "A" else "B") + token[i + 1 :]
        invalid_token(list_opportunities(api, continuationToken=flipped))


def test_a_token_signed_with_another_key_is_400(api: Api) -> None:
    created = make(api, 3)
    forged = TokenCodec(os.urandom(32)).encode(
        scope=f"opportunities:{api.ws}",
        digest=read_filters(FILTERS, {}, "sqlite")[0].digest,
        position=Position(created_at=datetime.now(UTC), id=created[-1]["id"]),
    )
    invalid_token(list_opportunities(api, continuationToken=forged))


def test_a_contacts_token_is_400_on_opportunities(api: Api) -> None:
    for _ in range(3):
        api.create_contact()
    token = ok_data(api.get("/api/contact", params={"pageSize": 1}))["continuationToken"]
    assert token
    make(api, 3)
    invalid_token(list_opportunities(api, continuationToken=token))


def test_a_token_of_another_workspace_is_400(api: Api, other_api: Api) -> None:
    sibling = second_workspace(api)
    sibling_token = token_of(sibling)
    other_token = token_of(other_api)
    make(api, 3)
    invalid_token(list_opportunities(api, continuationToken=sibling_token))
    invalid_token(list_opportunities(api, continuationToken=other_token))
    assert page(sibling, continuationToken=sibling_token)["data"]


def test_a_token_is_bound_to_its_filters(api: Api) -> None:
    contact = api.create_contact()
    agent = api.add_agent()["id"]
    stage = api.stage_ids("opportunity")[0]
    make(api, 3, name="Deal x", contactId=contact["id"], assignedAgentId=agent)
    filter_sets: list[dict[str, str]] = [
        {"q": "deal"},
        {"stageId": stage},
        {"assignedAgentId": agent},
        {"contactId": contact["id"]},
        {"winLossStatus": "0"},
        {"updatedSince": "2020-01-01T00:00:00Z"},
        {"q": "deal", "winLossStatus": "0"},
    ]
    for filters in filter_sets:
        token = page(api, pageSize=1, **filters)["continuationToken"]
        assert token, filters
        invalid_token(list_opportunities(api, continuationToken=token))
        for other in filter_sets:
            if other != filters:
                invalid_token(list_opportunities(api, continuationToken=token, **other))
        # With its own filters, and another page size, it goes on.
        rest = page(api, pageSize=5, continuationToken=token, **filters)
        assert len(rest["data"]) == 2


def test_a_token_keeps_its_filters_across_pages(api: Api) -> None:
    contact = api.create_contact()
    created = [api.create_opportunity(contactId=contact["id"] if i % 3 else "") for i in range(10)]
    expected = [o["id"] for o in reversed(created) if o["contactId"] == contact["id"]]
    records = all_pages(api, 2, contactId=contact["id"])
    assert ids(records) == expected


# --- query parameters -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["tag", "isSolved", "foo", "pagesize", "winlossstatus", "assignedComercialId", "code"]
)
def test_an_unknown_query_parameter_is_400(api: Api, name: str) -> None:
    body = error(list_opportunities(api, **{name: "1"}), 400, "BAD_REQUEST")
    assert error_fields(body) == [name]


def test_empty_parameter_values_count_as_absent(api: Api) -> None:
    created = make(api, 3)
    query = (
        "q=&stageId=&assignedAgentId=&contactId=&winLossStatus=&updatedSince="
        "&pageSize=&continuationToken=&workspaceId="
    )
    data = ok_data(api.get(f"/api/opportunity?{query}"), LISTED)
    assert ids(data["data"]) == reversed_ids(created)


# --- workspace rules and isolation ----------------------------------------------------------


def test_workspace_rules(api: Api, other_api: Api) -> None:
    created = api.create_opportunity()
    by_query = api.get("/api/opportunity", params={"workspaceId": api.ws}, workspace=None)
    assert ids(ok_data(by_query, LISTED)["data"]) == [created["id"]]
    sibling = second_workspace(api)
    error(list_opportunities(api, workspaceId=sibling.ws), 403, "FORBIDDEN")
    error(api.get("/api/opportunity", workspace=other_api.ws), 403, "FORBIDDEN")
    error(api.get("/api/opportunity", workspace=None), 401, "WORKSPACE_REQUIRED")
    error(api.get("/api/opportunity", auth=None), 401, "UNAUTHORIZED")


def test_other_workspaces_records_are_never_listed(api: Api, other_api: Api) -> None:
    mine = api.create_opportunity(name="Deal")
    other_api.create_opportunity(name="Deal")
    second_workspace(api).create_opportunity(name="Deal")
    assert ids(all_pages(api)) == [mine["id"]]
    assert ids(all_pages(api, q="deal")) == [mine["id"]]


# --- filters ----------------------------------------------------------------------------------


def test_q_searches_name_description_and_code_case_insensitively(api: Api) -> None:
    by_name = api.create_opportunity(name="Renewal ACME", description="")
    by_description = api.create_opportunity(name="Deal", description="for acme corp")
    api.create_opportunity(name="Deal", description="other")
    for q in ("acme", "ACME", "Acme", "cMe"):
        assert set(ids(all_pages(api, q=q))) == {by_name["id"], by_description["id"]}, q
    code = by_description["opportCode"]
    assert ids(all_pages(api, q=code)) == [by_description["id"]]
    assert ids(all_pages(api, q=code.lower())) == [by_description["id"]]
    assert ids(all_pages(api, q="opp-")) == newest_first(all_pages(api))
    assert all_pages(api, q="nothing like it") == []


def test_q_on_code_number(api: Api) -> None:
    created = make(api, 3, name="Deal", description="")
    third = created[2]
    assert third["opportCode"].endswith("-0003")
    assert ids(all_pages(api, q="-0003")) == [third["id"]]


def test_q_wildcards_are_literal(api: Api) -> None:
    percent = api.create_opportunity(name="10% discount")
    underscore = api.create_opportunity(name="plan_b")
    api.create_opportunity(name="planxb 10 discount")
    assert ids(all_pages(api, q="%")) == [percent["id"]]
    assert ids(all_pages(api, q="0% d")) == [percent["id"]]
    assert ids(all_pages(api, q="n_b")) == [underscore["id"]]


def test_q_does_not_search_the_contact(api: Api) -> None:
    contact = api.create_contact(name="Zacarias")
    api.create_opportunity(name="Deal", contactId=contact["id"])
    assert all_pages(api, q="zacarias") == []


def test_filter_by_stage(api: Api) -> None:
    first, second = api.stage_ids("opportunity")[:2]
    in_first = api.create_opportunity()
    in_second = api.create_opportunity(stageId=second)
    moved = api.create_opportunity()
    api.set_opportunity(moved["id"], stageId=second)
    assert ids(all_pages(api, stageId=first)) == [in_first["id"]]
    assert ids(all_pages(api, stageId=second)) == [moved["id"], in_second["id"]]


def test_filter_by_assigned_agent(api: Api) -> None:
    agent, other = api.add_agent()["id"], api.add_agent()["id"]
    via_comercial = api.create_opportunity(assignedComercialId=agent)
    via_alias = api.create_opportunity(assignedAgentId=agent)
    api.create_opportunity(assignedAgentId=other)
    api.create_opportunity()
    assigned_later = api.create_opportunity()
    api.set_opportunity(assigned_later["id"], assignedAgentId=agent)
    assert ids(all_pages(api, assignedAgentId=agent)) == [
        assigned_later["id"],
        via_alias["id"],
        via_comercial["id"],
    ]


def test_filter_by_contact(api: Api) -> None:
    ana, bea = api.create_contact(), api.create_contact()
    for_ana = api.create_opportunity(contactId=ana["id"])
    api.create_opportunity(contactId=bea["id"])
    api.create_opportunity()
    relinked = api.create_opportunity(contactId=bea["id"])
    api.set_opportunity(relinked["id"], contactId=ana["id"])
    assert ids(all_pages(api, contactId=ana["id"])) == [relinked["id"], for_ana["id"]]
    assert all_pages(api, contactId=UNKNOWN_ID) == []


@pytest.mark.parametrize("status", [0, 1, 2])
def test_filter_by_win_loss_status(api: Api, status: int) -> None:
    records = {s: api.create_opportunity(name=f"s{s}") for s in (0, 1, 2)}
    for s in (1, 2):
        api.set_opportunity(records[s]["id"], winLossStatus=s)
    reopened = api.create_opportunity()
    api.set_opportunity(reopened["id"], winLossStatus=1)
    api.set_opportunity(reopened["id"], winLossStatus=0)
    expected = [records[status]["id"]]
    if status == 0:
        expected = [reopened["id"], records[0]["id"]]
    found = all_pages(api, winLossStatus=str(status))
    assert ids(found) == expected
    assert all(r["winLossStatus"] == status for r in found)


@pytest.mark.parametrize("value", ["3", "-1", "a", "1.0", "true", "01x", "²"])
def test_win_loss_status_other_values_are_422(api: Api, value: str) -> None:
    invalid_value(list_opportunities(api, winLossStatus=value), "winLossStatus")


def test_filter_by_updated_since(api: Api) -> None:
    untouched = api.create_opportunity()
    updated = api.create_opportunity()
    with_activity = api.create_opportunity()
    time.sleep(0.002)
    marker = api.create_opportunity()
    since = marker["creationDate"]
    time.sleep(0.002)
    changed = api.set_opportunity(updated["id"], name="Changed")
    ok_data(
        api.post(
            f"/api/opportunity/{with_activity['id']}/agent/activities",
            json={"content": "x", "categoryType": "Email"},
        )
    )
    found = all_pages(api, updatedSince=since)
    assert set(ids(found)) == {marker["id"], updated["id"], with_activity["id"]}
    assert untouched["id"] not in ids(found)
    assert ids(found) == newest_first(found)
    after = datetime.fromisoformat(changed["updatedDate"]) + timedelta(microseconds=1)
    assert updated["id"] not in ids(all_pages(api, updatedSince=after.isoformat()))
    exactly = all_pages(api, updatedSince=changed["updatedDate"])
    assert updated["id"] in ids(exactly)


@pytest.mark.parametrize("value", ["soon", "2025-02-30", "12:00", "2025/01/01"])
def test_updated_since_not_iso_8601_is_422(api: Api, value: str) -> None:
    invalid_value(list_opportunities(api, updatedSince=value), "updatedSince")


def test_filters_combine_with_and(api: Api) -> None:
    contact = api.create_contact()
    agent = api.add_agent()["id"]
    stage = api.stage_ids("opportunity")[1]
    full = {"contactId": contact["id"], "assignedAgentId": agent, "stageId": stage}
    target = api.create_opportunity(name="Target deal", **full)
    api.set_opportunity(target["id"], winLossStatus=2)
    api.create_opportunity(name="Target deal", **full)
    api.create_opportunity(name="Other", **full)
    api.create_opportunity(name="Target deal", contactId=contact["id"], stageId=stage)
    filters = {"q": "target", **full}
    assert len(all_pages(api, **filters)) == 2
    assert ids(all_pages(api, winLossStatus="2", **filters)) == [target["id"]]


# --- writes while paging --------------------------------------------------------------------------


def test_writes_between_pages_neither_duplicate_nor_lose_opportunities(api: Api) -> None:
    rng = random.Random(99)
    stages = api.stage_ids("opportunity")
    before = make(api, 30)
    existing = [o["id"] for o in before]
    new_ids: set[str] = set()

    def write(n: int) -> None:
        new_ids.add(api.create_opportunity(name=f"During {n}")["id"])
        for target in rng.sample(existing, 2):
            api.set_opportunity(target, name=f"Renamed {n}", stageId=rng.choice(stages))
        ok_data(
            api.post(
                f"/api/opportunity/{rng.choice(existing)}/agent/activities",
                json={"content": f"page {n}", "categoryType": "Meeting"},
            )
        )
        api.set_opportunity(rng.choice(existing), winLossStatus=rng.choice([0, 1, 2]))

    records = all_pages(api, 4, between=write)
    got = ids(records)
    assert len(got) == len(set(got)), "an opportunity was listed twice"
    assert got == reversed_ids(before)
    assert not new_ids & set(got)
