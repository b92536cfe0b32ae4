"""What one webhook delivery costs the sending process: the dispatcher's own attempt
(`webhooks/sender.py`: URL, address check, signature, POST, answer) against the same POST
made with aiohttp alone, its floor, to the same local receiver (bench/receiver.py).

    python bench/sender.py [--attempts 6000] [--concurrency 32] [--rounds 3]

Prints, per round, the process's CPU time per attempt (user + system, µs) and the attempts
per second of one process. No database: the claim and the recorded outcome are not in it.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import uvloop

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.run import start_receiver, stop
from chatcrm.webhooks import sender
from chatcrm.webhooks.claims import Claimed

SECRET = "whsec_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
BODY = b'{"type":"contact.updated","data":{"padding":"' + b"x" * 1400 + b'"}}'  # ~1.5 KB


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


async def _measure(
    name: str, one: Callable[[], Awaitable[None]], attempts: int, concurrency: int
) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def gated() -> None:
        async with gate:
            await one()

    await asyncio.gather(*(gated() for _ in range(min(500, attempts))))  # connections, caches
    cpu, wall = _cpu(), time.perf_counter()
    await asyncio.gather(*(gated() for _ in range(attempts)))
    cpu, wall = _cpu() - cpu, time.perf_counter() - wall
    print(f"{name:<28} {cpu / attempts * 1e6:8.0f} µs CPU/attempt {attempts / wall:8.0f} /s")


async def _round(url: str, attempts: int, concurrency: int) -> None:
    claimed = Claimed(
        workspace_id="ws",
        webhook_id="wh",
        event_id="evt_0123456789abcdef",
        event_type="contact.updated",
        created_at=datetime.now(UTC),
        attempt=1,
        claimed_at=datetime.now(UTC),
        url=url,
        secret=SECRET,
        previous_secret=None,
        previous_secret_expires_at=None,
        body=BODY,
    )
    client = sender.new_client(max_connections=256)

    async def dispatcher_attempt() -> None:
        outcome = await sender.attempt(client, claimed, deadline=10, allow_private=True)
        assert outcome.succeeded, outcome

    await _measure("dispatcher's attempt", dispatcher_attempt, attempts, concurrency)
    await client.close()

    session = aiohttp.ClientSession()
    headers = {
        "content-type": "application/json",
        "webhook-id": claimed.event_id,
        "webhook-timestamp": "0",
        "webhook-signature": "v1,AAAA",
    }

    async def bare_post() -> None:
        async with session.post(url, data=BODY, headers=headers) as answer:
            assert answer.status == 200
            await answer.read()

    await _measure("floor: aiohttp POST alone", bare_post, attempts, concurrency)
    await session.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--attempts", type=int, default=6000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    receiver, base = start_receiver()
    try:
        for _ in range(args.rounds):
            uvloop.run(_round(f"{base}/hook", args.attempts, args.concurrency))
    finally:
        stop(receiver)


if __name__ == "__main__":
    main()
