"""Webhooks under truly concurrent requests (one app of its own, `asyncio.gather`): the
20-endpoint limit holds, and a delete racing tests and replays of the same endpoint
answers each of them cleanly and leaves no delivery behind."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import pytest

from chatcrm.config import Settings
from tests.client import ok_data
from tests.conftest import new_account
from tests.reliability.conftest import AsyncApi, app_client
from tests.webhooks import hooks


@pytest.fixture
async def aapi(settings: Settings, database_url: str) -> AsyncIterator[AsyncApi]:
    account = await asyncio.to_thread(new_account, database_url)
    async with app_client(settings) as client:
        yield AsyncApi(client, account)


async def test_concurrent_creates_stop_at_20(aapi: AsyncApi) -> None:
    # Literal public addresses: no resolver in the way, so the creates truly overlap in
    # the database; fewer at once than the connection pool holds, so none waits its turn.
    async def create(n: int) -> int:
        answer = await aapi.post("/api/webhook", json={"url": f"http://93.184.216.34/{n}"})
        if answer.status_code != 200:
            assert answer.json()["errorCode"] == "VALIDATION_ERROR", answer.text
        return answer.status_code

    assert {await create(n) for n in range(15)} == {200}
    answers = await asyncio.gather(*(create(n) for n in range(15, 27)))
    assert Counter(answers) == {200: 5, 422: 7}
    assert len(ok_data(await aapi.get("/api/webhook"))["data"]) == 20


async def test_a_delete_racing_tests_and_replays_leaves_nothing_behind(
    aapi: AsyncApi, database_url: str
) -> None:
    made = ok_data(await aapi.post("/api/webhook", json={"url": hooks.receiver()}))["id"]
    first = ok_data(await aapi.post(f"/api/webhook/{made}/test"))["eventId"]
    path = f"/api/webhook/{made}"
    requests = [aapi.post(f"{path}/test") for _ in range(8)]
    requests += [aapi.post(f"{path}/replay", json={"eventId": first}) for _ in range(4)]
    requests.insert(5, aapi.request("DELETE", path))
    answers = await asyncio.gather(*requests)
    for answer in answers:
        assert answer.status_code in (200, 404), answer.text
        if answer.status_code == 404:
            assert answer.json()["errorCode"] == "WEBHOOK_NOT_FOUND"
    assert answers[5].status_code == 200
    gone = await aapi.get(path)
    assert gone.status_code == 404
    rows = await asyncio.to_thread(hooks.deliveries, database_url, aapi.ws, made)
    assert rows == []
