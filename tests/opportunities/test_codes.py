"""Opportunity codes (contract B.2): `OPP-<UTC year>-<nnnn>`, per workspace, gap-free."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import httpx

from chatcrm.app import create_app
from chatcrm.config import Settings
from tests.client import Api, error, ok_data
from tests.conftest import new_account
from tests.opportunities.test_create import CODE, UNKNOWN_ID, created, post

CREATED = "Opportunity successfully created."


def code_year(record: dict[str, Any]) -> str:
    """The UTC year the record was created in, from its creationDate."""
    return str(record["creationDate"][:4])


def codes(api: Api, n: int, **kw: Any) -> list[str]:
    out = []
    for _ in range(n):
        record = created(post(api, {"name": "Deal", "amount": 1}, **kw))
        out.append(record["opportCode"])
    return out


def expected(year: str, numbers: range) -> list[str]:
    return [f"OPP-{year}-{n:04d}" for n in numbers]


def test_code_has_the_utc_year_and_a_four_digit_number(api: Api) -> None:
    before = datetime.now(UTC).year
    record = created(post(api, {"name": "Deal", "amount": 1}))
    after = datetime.now(UTC).year
    match = CODE.match(record["opportCode"])
    assert match, record["opportCode"]
    assert match.group(1) == code_year(record)
    assert before <= int(match.group(1)) <= after
    assert record["opportCode"] == f"OPP-{code_year(record)}-0001"


def test_codes_are_consecutive(api: Api) -> None:
    got = codes(api, 12)
    year = got[0][4:8]
    assert got == expected(year, range(1, 13))


def test_each_workspace_has_its_own_sequence(api: Api, other_api: Api) -> None:
    mine = codes(api, 3)
    theirs = codes(other_api, 2)
    year = mine[0][4:8]
    assert mine == expected(year, range(1, 4))
    assert theirs == expected(year, range(1, 3))
    # A second workspace of the same account starts at 0001 too, and does not move the first.
    second = ok_data(api.post("/api/workspace", json={"name": "Second"}))["id"]
    assert codes(api, 2, workspace=second) == expected(year, range(1, 3))
    assert codes(api, 1) == expected(year, range(4, 5))
    assert codes(other_api, 1) == expected(year, range(3, 4))


def test_failed_creates_do_not_consume_numbers(api: Api, other_api: Api) -> None:
    first = codes(api, 1)
    year = first[0][4:8]
    assert first == expected(year, range(1, 2))
    rejected = [
        ({"name": "Deal", "amount": -1}, 422, "VALIDATION_ERROR"),
        ({"name": "Deal"}, 422, "VALIDATION_ERROR"),
        ({"name": "Deal", "amount": 1.23456}, 422, "VALIDATION_ERROR"),
        ({"name": "Deal", "amount": 1, "stageId": UNKNOWN_ID}, 422, "VALIDATION_ERROR"),
        ({"name": "Deal", "amount": 1, "contactId": UNKNOWN_ID}, 422, "VALIDATION_ERROR"),
        ({"name": "Deal", "amount": 1, "assignedComercialId": UNKNOWN_ID}, 422, "VALIDATION_ERROR"),
        ({"name": "Deal", "amount": 1, "segmentationId": UNKNOWN_ID}, 422, "VALIDATION_ERROR"),
        (
            {"name": "Deal", "amount": 1, "stageId": api.stage_ids("contact")[0]},
            422,
            "VALIDATION_ERROR",
        ),
        (
            {"name": "Deal", "amount": 1, "contactId": other_api.create_contact()["id"]},
            422,
            "VALIDATION_ERROR",
        ),
        ({"name": "Deal", "amount": 1, "opportCode": "OPP-2000-0001"}, 400, "BAD_REQUEST"),
        ({"name": "Deal", "amount": 1, "workspaceId": other_api.ws}, 403, "FORBIDDEN"),
    ]
    for body, status, code in rejected:
        error(post(api, body), status, code)
    assert codes(api, 2) == expected(year, range(2, 4))


def test_a_client_cannot_choose_the_code(api: Api) -> None:
    error(
        post(api, {"name": "Deal", "amount": 1, "opportCode": "OPP-1999-0042"}), 400, "BAD_REQUEST"
    )
    body = {"paramToUpdate": "opportCode", "opportCode": "OPP-1999-0042"}
    opp = created(post(api, {"name": "Deal", "amount": 1}))
    error(api.update_opportunity(opp["id"], body), 400, "BAD_REQUEST")


def test_updates_keep_the_code(api: Api) -> None:
    opp = created(post(api, {"name": "Deal", "amount": 1}))
    updated = api.set_opportunity(opp["id"], name="Renamed", amount=5, winLossStatus=1)
    assert updated["opportCode"] == opp["opportCode"]
    assert codes(api, 1) == expected(opp["opportCode"][4:8], range(2, 3))


async def _create_concurrently(
    client: httpx.AsyncClient, key: str, workspace_id: str, n: int
) -> list[httpx.Response]:
    headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace_id}
    return list(
        await asyncio.gather(
            *(
                client.post(
                    "/api/opportunity", json={"name": f"Deal {i}", "amount": i}, headers=headers
                )
                for i in range(n)
            )
        )
    )


def _records(responses: list[httpx.Response]) -> list[dict[str, Any]]:
    out = []
    for response in responses:
        data = ok_data(response, CREATED)
        out.append(data["opportunity"])
    return out


async def test_concurrent_creates_draw_distinct_gap_free_codes(
    settings: Settings, database_url: str
) -> None:
    account = await asyncio.to_thread(new_account, database_url)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            records = _records(
                await _create_concurrently(client, account.api_key, account.workspace_id, 48)
            )
            year = records[0]["creationDate"][:4]
            got = [r["opportCode"] for r in records]
            assert len(set(got)) == 48
            assert sorted(got) == expected(year, range(1, 49))
            assert len({r["id"] for r in records}) == 48
            # Each new card took the end of the column: positions are distinct, 0..47.
            assert sorted(r["orderInCards"] for r in records) == list(range(48))
            # The sequence continues after the burst.
            after = _records(
                await _create_concurrently(client, account.api_key, account.workspace_id, 1)
            )
            assert after[0]["opportCode"] == f"OPP-{year}-0049"


async def test_concurrent_creates_in_two_workspaces_keep_separate_sequences(
    settings: Settings, database_url: str
) -> None:
    first = await asyncio.to_thread(new_account, database_url)
    second = await asyncio.to_thread(new_account, database_url)
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            mine, theirs = await asyncio.gather(
                _create_concurrently(client, first.api_key, first.workspace_id, 24),
                _create_concurrently(client, second.api_key, second.workspace_id, 24),
            )
            for responses, account in ((mine, first), (theirs, second)):
                records = _records(responses)
                assert {r["workspaceId"] for r in records} == {account.workspace_id}
                year = records[0]["creationDate"][:4]
                assert sorted(r["opportCode"] for r in records) == expected(year, range(1, 25))
