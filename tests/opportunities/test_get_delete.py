"""Get opportunity and Delete opportunity (contract B.3): shape, ETag, 404s, soft delete."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.config import Settings
from chatcrm.db.engine import standalone_engine
from chatcrm.opportunities.table import opportunities
from tests.client import Api, error, ok_data

OBTAINED = "Successfully obtained list."
DELETED = "Opportunity successfully deleted."
OPPORTUNITY_KEYS = [
    "id", "opportCode", "opportStatus", "winLossStatus", "winLossDate", "finalAmount",
    "creationDate", "creationTypeId", "updatedDate", "deletionDate", "userDeletion",
    "statusId", "files", "orderInCards", "orderInCardsLastUpdated", "activities",
    "segmentationId", "workspaceId", "name", "description", "amount", "userCreation",
    "contactId", "expirationDate", "assignedAgentId", "stageId",
]  # fmt: skip
UNKNOWN_ID = "01a214de-0000-7000-8000-000000000000"
T = TypeVar("T")


def get(api: Api, opportunity_id: str, **kw: Any) -> httpx.Response:
    return api.get(f"/api/opportunity/{opportunity_id}", **kw)


def delete(api: Api, opportunity_id: str, **kw: Any) -> httpx.Response:
    return api.delete(f"/api/opportunity/{opportunity_id}", **kw)


def fetched(response: httpx.Response, opportunity_id: str) -> dict[str, Any]:
    data = ok_data(response, OBTAINED)
    assert list(data) == ["opportunityId", "data"]
    assert data["opportunityId"] == opportunity_id
    assert len(data["data"]) == 1
    record: dict[str, Any] = data["data"][0]
    assert list(record) == OPPORTUNITY_KEYS
    return record


def deleted(response: httpx.Response, opportunity_id: str) -> None:
    assert ok_data(response, DELETED) == {"id": opportunity_id}


def not_found(response: httpx.Response) -> None:
    error(response, 404, "OPPORTUNITY_NOT_FOUND")


def second_workspace(api: Api) -> Api:
    data = ok_data(api.post("/api/workspace", json={"name": "Second"}))
    return Api(api.http, dataclasses.replace(api.account, workspace_id=data["id"]))


def run_db(database_url: str, work: Callable[[AsyncConnection], Awaitable[T]]) -> T:
    async def run() -> T:
        engine = standalone_engine(database_url, Settings(database_url=database_url))
        try:
            async with engine.begin() as conn:
                return await work(conn)
        finally:
            await engine.dispose()

    return asyncio.run(run())


def stored_row(database_url: str, workspace_id: str, opportunity_id: str) -> Any:
    async def work(conn: AsyncConnection) -> Any:
        stmt = select(opportunities).where(
            opportunities.c.workspace_id == workspace_id, opportunities.c.id == opportunity_id
        )
        return (await conn.execute(stmt)).mappings().first()

    return run_db(database_url, work)


# --- get --------------------------------------------------------------------------------------


def test_get_answers_the_opportunity(api: Api) -> None:
    contact = api.create_contact()
    created = api.create_opportunity(
        name="Deal", description="Yearly", amount=2500.75, contactId=contact["id"]
    )
    record = fetched(get(api, created["id"]), created["id"])
    assert record == created
    assert record["name"] == "Deal" and record["amount"] == 2500.75
    assert record["contactId"] == contact["id"]
    assert record["workspaceId"] == api.ws
    assert record["statusId"] == 1 and record["deletionDate"] is None


def test_get_carries_the_etag_of_its_version(api: Api) -> None:
    created = api.post("/api/opportunity", json={"name": "Deal", "amount": 1})
    opportunity_id = created.json()["data"]["id"]
    response = get(api, opportunity_id)
    assert response.headers["etag"] == '"1"'
    assert response.headers["etag"] == created.headers["etag"]
    updated = api.update_opportunity(opportunity_id, {"paramToUpdate": "name", "name": "B"})
    assert updated.headers["etag"] == '"2"'
    again = get(api, opportunity_id)
    assert again.headers["etag"] == '"2"'
    assert fetched(again, opportunity_id)["name"] == "B"


def test_get_with_the_workspace_in_the_query(api: Api) -> None:
    created = api.create_opportunity()
    response = get(api, created["id"], params={"workspaceId": api.ws}, workspace=None)
    assert fetched(response, created["id"]) == created
    both = get(api, created["id"], params={"workspaceId": api.ws})
    assert fetched(both, created["id"]) == created


@pytest.mark.parametrize("opportunity_id", [UNKNOWN_ID, "not-an-id", "0", "OPP-2025-0001"])
def test_get_unknown_is_404(api: Api, opportunity_id: str) -> None:
    api.create_opportunity()
    not_found(get(api, opportunity_id))


def test_get_by_code_is_404(api: Api) -> None:
    created = api.create_opportunity()
    not_found(get(api, created["opportCode"]))


def test_get_another_workspaces_opportunity_is_404(api: Api, other_api: Api) -> None:
    theirs = other_api.create_opportunity()
    siblings = second_workspace(api).create_opportunity()
    not_found(get(api, theirs["id"]))
    not_found(get(api, siblings["id"]))


def test_get_workspace_rules(api: Api, other_api: Api) -> None:
    created = api.create_opportunity()
    theirs = other_api.create_opportunity()
    sibling = second_workspace(api)
    error(get(api, created["id"], params={"workspaceId": sibling.ws}), 403, "FORBIDDEN")
    error(get(api, theirs["id"], workspace=other_api.ws), 403, "FORBIDDEN")
    error(get(api, created["id"], workspace=None), 401, "WORKSPACE_REQUIRED")
    error(get(api, created["id"], auth=None), 401, "UNAUTHORIZED")


# --- delete -----------------------------------------------------------------------------------


def test_delete_answers_the_id(api: Api) -> None:
    created = api.create_opportunity()
    deleted(delete(api, created["id"]), created["id"])


def test_a_deleted_opportunity_leaves_every_read(api: Api) -> None:
    kept = api.create_opportunity(name="Kept")
    gone = api.create_opportunity(name="Gone")
    deleted(delete(api, gone["id"]), gone["id"])
    not_found(get(api, gone["id"]))
    listed = ok_data(api.get("/api/opportunity"))["data"]
    assert [o["id"] for o in listed] == [kept["id"]]
    assert ok_data(api.get("/api/opportunity", params={"q": "gone"}))["data"] == []
    code = ok_data(api.get("/api/opportunity", params={"q": gone["opportCode"]}))
    assert code["data"] == []
    fetched(get(api, kept["id"]), kept["id"])


def test_a_deleted_opportunity_cannot_be_updated(api: Api) -> None:
    created = api.create_opportunity()
    deleted(delete(api, created["id"]), created["id"])
    not_found(api.update_opportunity(created["id"], {"paramToUpdate": "name", "name": "Back"}))


def test_a_deleted_opportunity_takes_no_activity(api: Api) -> None:
    created = api.create_opportunity()
    deleted(delete(api, created["id"]), created["id"])
    response = api.post(
        f"/api/opportunity/{created['id']}/agent/activities",
        json={"content": "x", "categoryType": "Calls"},
    )
    not_found(response)


def test_a_second_delete_is_404(api: Api) -> None:
    created = api.create_opportunity()
    deleted(delete(api, created["id"]), created["id"])
    not_found(delete(api, created["id"]))


def test_a_deleted_opportunity_is_kept_in_the_database(api: Api, database_url: str) -> None:
    created = api.create_opportunity(name="Kept row", amount=10)
    before = datetime.now(UTC)
    deleted(delete(api, created["id"]), created["id"])
    after = datetime.now(UTC)
    row = stored_row(database_url, api.ws, created["id"])
    assert row is not None
    assert row["name"] == "Kept row"
    assert row["code"] == created["opportCode"]
    assert row["deleted_at"] is not None
    assert before <= row["deleted_at"] <= after
    assert row["deleted_by"] == api.account.key_id
    assert row["status_id"] == 2
    assert row["version"] == 2


def test_a_deleted_opportunitys_code_is_not_reused(api: Api) -> None:
    first = api.create_opportunity()
    second = api.create_opportunity()
    deleted(delete(api, second["id"]), second["id"])
    third = api.create_opportunity()
    assert third["opportCode"] not in (first["opportCode"], second["opportCode"])
    assert int(third["opportCode"][-4:]) == int(second["opportCode"][-4:]) + 1


@pytest.mark.parametrize("opportunity_id", [UNKNOWN_ID, "not-an-id"])
def test_delete_unknown_is_404(api: Api, opportunity_id: str) -> None:
    not_found(delete(api, opportunity_id))


def test_delete_another_workspaces_opportunity_is_404_and_it_stays(
    api: Api, other_api: Api
) -> None:
    theirs = other_api.create_opportunity()
    sibling = second_workspace(api)
    siblings = sibling.create_opportunity()
    not_found(delete(api, theirs["id"]))
    not_found(delete(api, siblings["id"]))
    fetched(get(other_api, theirs["id"]), theirs["id"])
    fetched(get(sibling, siblings["id"]), siblings["id"])


def test_delete_with_the_workspace_in_the_query(api: Api) -> None:
    created = api.create_opportunity()
    response = delete(api, created["id"], params={"workspaceId": api.ws}, workspace=None)
    deleted(response, created["id"])
    not_found(get(api, created["id"]))


def test_delete_workspace_rules(api: Api, other_api: Api) -> None:
    created = api.create_opportunity()
    theirs = other_api.create_opportunity()
    sibling = second_workspace(api)
    error(delete(api, created["id"], params={"workspaceId": sibling.ws}), 403, "FORBIDDEN")
    error(delete(api, theirs["id"], workspace=other_api.ws), 403, "FORBIDDEN")
    error(delete(api, created["id"], workspace=None), 401, "WORKSPACE_REQUIRED")
    error(delete(api, created["id"], auth=None), 401, "UNAUTHORIZED")
    fetched(get(api, created["id"]), created["id"])
    fetched(get(other_api, theirs["id"]), theirs["id"])


def test_delete_with_a_stale_if_match_is_412_and_changes_nothing(api: Api) -> None:
    created = api.create_opportunity()
    api.set_opportunity(created["id"], name="v2")
    error(delete(api, created["id"], headers={"If-Match": '"1"'}), 412, "PRECONDITION_FAILED")
    response = get(api, created["id"])
    assert fetched(response, created["id"])["name"] == "v2"
    assert response.headers["etag"] == '"2"'


@pytest.mark.parametrize("if_match", ['"2"', "*", '"1", "2"'])
def test_delete_with_a_matching_if_match(api: Api, if_match: str) -> None:
    created = api.create_opportunity()
    api.set_opportunity(created["id"], name="v2")
    deleted(delete(api, created["id"], headers={"If-Match": if_match}), created["id"])
    not_found(get(api, created["id"]))


def test_delete_keeps_the_linked_contact(api: Api) -> None:
    contact = api.create_contact()
    created = api.create_opportunity(contactId=contact["id"])
    deleted(delete(api, created["id"]), created["id"])
    ok_data(api.get_contact(contact["id"]))
