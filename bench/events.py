"""Events and webhooks benchmark (PostgreSQL): Update Contact with and without a webhook
subscribed, webhook deliveries per second to a local receiver answering 200, and events
feed reads per second.

    python bench/events.py [--duration 15] [--concurrency 64] [--dispatchers 2]

Everything runs on this machine: PostgreSQL, `chatcrm serve --workers 2`, wrk, the
receiver (bench/receiver.py, uvicorn, one worker) and the dispatchers. Prints a table and
writes bench/results/events.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from sqlalchemy.engine import make_url

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import seed
from bench.run import (
    ADMIN_URL,
    BENCH,
    BIN,
    DONE_LUA,
    RESULTS,
    ensure_wrk,
    free_port,
    lua_list,
    measured,
    run_wrk,
    script,
    start,
    stop,
    wait_ready,
)


def serve(url: str, port: int, *, dispatch: bool, log: str) -> Any:
    env = {
        **os.environ,
        "CHATCRM_RATE_LIMIT": "0",
        "CHATCRM_WEBHOOK_ALLOW_PRIVATE": "1",  # the receiver is on 127.0.0.1
        "CHATCRM_DISPATCH": "1" if dispatch else "0",
        "CHATCRM_ACCESS_LOG": "false",
    }
    command = [str(BIN / "chatcrm"), "serve", "--database-url", url, "--port", str(port)]
    proc = start([*command, "--workers", "2"], env, RESULTS / log)
    wait_ready(f"http://127.0.0.1:{port}/ready")
    return proc


async def scalar(url: str, sql: str) -> int:
    u = make_url(url)
    conn = await asyncpg.connect(
        host=u.host, port=u.port, user=u.username, password=u.password, database=u.database
    )
    try:
        return int(await conn.fetchval(sql))
    finally:
        await conn.close()


def received(receiver: str) -> int:
    return int(httpx.get(f"{receiver}/count", timeout=5).text)


def wait_until(check: Any, timeout: float) -> float:
    """Seconds until check() is true (polled every 50 ms)."""
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            raise RuntimeError("timed out")
        time.sleep(0.05)
    return time.monotonic() - started


def updates(wrk: str, base: str, data: seed.Seeded, c: int, duration: int) -> dict[str, Any]:
    lua = RESULTS / "events-update.lua"
    lua.write_text(script("update_contact", data, ""))
    run_wrk(wrk, base, lua, 16, 2)  # warm-up
    return run_wrk(wrk, base, lua, c, duration)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=15)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--dispatchers", type=int, default=2, help="`chatcrm dispatch` processes")
    parser.add_argument("--size", type=int, default=2_000, help="contacts")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    wrk = ensure_wrk()
    c, duration = args.concurrency, args.duration
    rows: list[dict[str, Any]] = []

    url = asyncio.run(seed.fresh_database("postgresql", ADMIN_URL))
    data = asyncio.run(seed.seed(url, contacts_count=args.size, opportunities_count=10))
    headers = {"Authorization": f"Bearer {data.api_key}", "x-workspace-id": data.workspace_id}
    receiver_port = free_port()
    receiver = f"http://127.0.0.1:{receiver_port}"
    receiver_proc = start(
        [
            str(BIN / "uvicorn"),
            "receiver:app",
            "--app-dir",
            str(BENCH),
            "--port",
            str(receiver_port),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        dict(os.environ),
        RESULTS / "receiver.log",
    )
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _up(receiver), 30)

        # 1. Update Contact, no webhook subscribed (the outbox alone).
        proc = serve(url, port, dispatch=True, log="events-serve.log")
        r = measured(
            "postgresql", "update_contact_no_webhook", c, updates(wrk, base, data, c, duration)
        )
        rows.append({**r.__dict__, "label": "Update Contact, no webhook"})
        print(f"bench: update, no webhook: {r.rps:.0f} req/s, p99 {r.p99_ms:.1f} ms", flush=True)

        # 2. The same with a webhook subscribed to everything, delivered as it goes.
        made = httpx.post(
            f"{base}/api/webhook",
            json={"url": f"{receiver}/hook", "eventTypes": ["*"]},
            headers=headers,
            timeout=10,
        )
        assert made.status_code == 200, made.text
        r = measured(
            "postgresql", "update_contact_webhook", c, updates(wrk, base, data, c, duration)
        )
        rows.append({**r.__dict__, "label": "Update Contact, 1 webhook subscribed"})
        print(f"bench: update, 1 webhook: {r.rps:.0f} req/s, p99 {r.p99_ms:.1f} ms", flush=True)
        pending = "SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'"
        drained = wait_until(lambda: asyncio.run(scalar(url, pending)) == 0, 600)
        print(f"bench: deliveries drained {drained:.1f} s after the load", flush=True)
        stop(proc)

        # 3. Deliveries per second: a backlog queued with dispatch off, then sent by
        # `chatcrm dispatch` processes alone.
        proc = serve(url, port, dispatch=False, log="events-serve-nodispatch.log")
        updates(wrk, base, data, c, duration)
        httpx.get(f"{base}/api/events", params={"pageSize": "1"}, headers=headers, timeout=30)
        time.sleep(2)  # the publishers queue the last deliveries
        stop(proc)
        # This machine's PostgreSQL runs without autovacuum: refresh the statistics the
        # way it would have after tables grew from a few thousand rows to tens of thousands.
        asyncio.run(seed.analyze(url))
        backlog = asyncio.run(scalar(url, pending))
        start_count = received(receiver)
        dispatchers = [
            start(
                [str(BIN / "chatcrm"), "dispatch", "--database-url", url],
                {**os.environ, "CHATCRM_WEBHOOK_ALLOW_PRIVATE": "1"},
                RESULTS / f"events-dispatch-{n}.log",
            )
            for n in range(args.dispatchers)
        ]
        try:
            # Timed from the first delivery: the processes' start (imports, the migration
            # check) is not sending.
            wait_until(lambda: received(receiver) > start_count, 120)
            timed = backlog - (received(receiver) - start_count)
            seconds = wait_until(lambda: received(receiver) - start_count >= backlog, 900)
        finally:
            for d in dispatchers:
                stop(d)
        rate = timed / seconds
        rows.append(
            {
                "case": "deliveries",
                "label": f"Webhook deliveries ({args.dispatchers} dispatchers, receiver 200)",
                "rps": round(rate, 1),
                "requests": timed,
                "seconds": round(seconds, 2),
            }
        )
        print(f"bench: {timed} deliveries in {seconds:.1f} s: {rate:.0f}/s", flush=True)

        # 4. Feed reads: pages of 20 after random events.
        asyncio.run(seed.analyze(url))
        proc = serve(url, port, dispatch=False, log="events-serve-feed.log")
        ids = _event_ids(base, headers, 2000)
        lua = RESULTS / "events-feed.lua"
        lua.write_text(
            f"local ids = {lua_list(ids)}\n"
            f'local h = {{["Authorization"] = "Bearer {data.api_key}", '
            f'["x-workspace-id"] = "{data.workspace_id}"}}\n'
            "request = function()\n"
            "  local after = ids[math.random(#ids)]\n"
            '  return wrk.format("GET", "/api/events?pageSize=20&after=" .. after, h)\n'
            "end\n" + DONE_LUA
        )
        run_wrk(wrk, base, lua, 16, 2)
        r = measured("postgresql", "feed", c, run_wrk(wrk, base, lua, c, duration))
        rows.append({**r.__dict__, "label": "Events feed, page of 20 after a random event"})
        print(f"bench: feed: {r.rps:.0f} req/s, p99 {r.p99_ms:.1f} ms", flush=True)
        stop(proc)
    finally:
        stop(receiver_proc)

    report = {"machine": {"cpus": os.cpu_count()}, "concurrency": c, "results": rows}
    (RESULTS / "events.json").write_text(json.dumps(report, indent=2) + "\n")
    print()
    for row in rows:
        extra = f"  p99 {row['p99_ms']:.1f} ms" if "p99_ms" in row else ""
        print(f"{row['label']:<60} {row['rps']:>9.0f} /s{extra}")


def _up(receiver: str) -> bool:
    try:
        received(receiver)
        return True
    except httpx.HTTPError:
        return False


def _event_ids(base: str, headers: dict[str, str], count: int) -> list[str]:
    ids: list[str] = []
    after = None
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        while len(ids) < count:
            params = {"pageSize": "100", **({"after": after} if after else {})}
            page = client.get("/api/events", params=params).json()["data"]
            if not page["events"]:
                break
            ids += [e["id"] for e in page["events"]]
            after = page["next"]
    return ids


if __name__ == "__main__":
    main()
