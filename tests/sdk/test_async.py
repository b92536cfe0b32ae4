"""The async client on an event loop of the test's own: calls run concurrently, and its
waits (retries, long polls) never block the loop."""

from __future__ import annotations

import asyncio
import time

import pytest

from chatcrm.provisioning import NewAccount
from chatcrm_client import AsyncClient, Contact
from tests.sdk.scripted import Answer, ScriptedServer
from tests.servers import Server

pytestmark = pytest.mark.slow


async def test_concurrent_calls_and_a_stream(sdk_server: Server, account: NewAccount) -> None:
    async with AsyncClient(sdk_server.base_url, account.api_key, account.workspace_id) as client:
        made = await asyncio.gather(
            *(client.contacts.create(name=f"C{i}", email=f"c{i}@example.com") for i in range(8))
        )
        assert all(isinstance(c, Contact) for c in made)
        listed = [c.id async for c in client.contacts.list(page_size=3)]
        assert sorted(listed) == sorted(c.id for c in made)

        events = [e async for e in client.events.list(types="contact.created")]
        stream = client.events.stream(after=events[-1].id, wait=10)
        waiting = asyncio.ensure_future(anext(stream))
        await asyncio.sleep(0.3)
        assert not waiting.done()  # held by the long poll, the loop free meanwhile
        await client.contacts.update(made[0].id, name="changed")
        arrived = await asyncio.wait_for(waiting, 10)
        assert (arrived.type, arrived.record_id) == ("contact.updated", made[0].id)
        await stream.aclose()


async def test_a_retry_wait_does_not_block_the_loop() -> None:
    scripted = ScriptedServer()
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.05)
            ticks += 1

    try:
        scripted.script(Answer(503, {"retry-after": "1"}), Answer(200, data={"data": []}))
        async with AsyncClient(scripted.url, "k", "w") as client:
            ticker = asyncio.ensure_future(tick())
            started = time.monotonic()
            assert await client.workspaces.list() == []
            ticker.cancel()
        assert time.monotonic() - started >= 0.95
        assert ticks >= 10
    finally:
        await asyncio.to_thread(scripted.close)
