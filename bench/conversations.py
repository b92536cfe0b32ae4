"""Conversations benchmark (contract K): Meta's webhook and the channel sender, on
SQLite and PostgreSQL.

    python bench/conversations.py [--backends sqlite,postgresql] [--seconds 10]

For each backend, a fresh database and `chatcrm serve --workers 2` with a WhatsApp channel
pointed at a fake Graph API (bench/graph.py), then:
- inbound, 100 to a POST: deliveries of 100 messages from new senders (4 at once); the
  messages stored per second and the slowest POST;
- inbound, one to a POST: 16 at once for `--seconds`; messages per second;
- first attempt: with the API idle, a template queued, and the time until the fake Graph
  API has it (20 times: median and worst);
- burst: 1,000 messages queued while no sender runs, then `chatcrm dispatch` started; the
  rate at which they reach the fake Graph API.
Each stored message is a message, its event, its contact's change and event (and, for a
new sender, the contact). Prints the figures and writes bench/results/conversations.json.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import hmac
import itertools
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import seed
from bench.run import (
    ADMIN_URL,
    BIN,
    DONE_LUA,
    RESULTS,
    ensure_wrk,
    free_port,
    lua_list,
    run_wrk,
    start,
    stop,
    wait_ready,
)

APP_SECRET = "bench-app-secret"
PHONE_NUMBER_ID = "109876543210"
_numbers = itertools.count(1)


def _sender() -> str:
    return f"5198{next(_numbers):07d}"


def _delivery(messages: list[dict[str, Any]]) -> bytes:
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550000000", "phone_number_id": PHONE_NUMBER_ID},
        "contacts": [
            {"profile": {"name": f"Buyer {m['from'][-4:]}"}, "wa_id": m["from"]} for m in messages
        ],
        "messages": messages,
    }
    payload = {
        "object": "whatsapp_business_account",
        "entry": [{"id": "1", "changes": [{"field": "messages", "value": value}]}],
    }
    return json.dumps(payload).encode()


def _message(sender: str, n: int) -> dict[str, Any]:
    return {
        "from": sender,
        "id": f"wamid.bench{time.time_ns()}{n}",
        "timestamp": str(int(time.time())),
        "type": "text",
        "text": {"body": f"Is item {n} in stock?"},
    }


def _signed(body: bytes) -> dict[str, str]:
    digest = hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    return {"content-type": "application/json", "x-hub-signature-256": f"sha256={digest}"}


async def _post_all(url: str, bodies: list[bytes], concurrency: int) -> list[float]:
    """POST every body, `concurrency` at once; the seconds each took."""
    queue = list(reversed(bodies))
    took: list[float] = []
    async with httpx.AsyncClient(
        timeout=60, limits=httpx.Limits(max_connections=concurrency)
    ) as client:

        async def worker() -> None:
            while queue:
                body = queue.pop()
                started = time.perf_counter()
                answer = await client.post(url, content=body, headers=_signed(body))
                took.append(time.perf_counter() - started)
                if answer.status_code != 200:
                    raise RuntimeError(
                        f"delivery answered {answer.status_code}: {answer.text[:200]}"
                    )

        await asyncio.gather(*(worker() for _ in range(concurrency)))
    return took


def _one_a_post(path: str, senders: list[str], count: int) -> Path:
    """A wrk script POSTing `count` different deliveries of one message each, signed, in
    turn (wrk, not a Python client: httpx at c=16 tops out near 480 requests/s here, below
    what is measured). Each is sent once: a wamid sent again would be a duplicate."""
    bodies, signatures = [], []
    for i in range(count):
        body = _delivery([_message(senders[i % len(senders)], i)])
        bodies.append(body.decode())
        signatures.append(_signed(body)["x-hub-signature-256"])
    lua = RESULTS / "inbound_single.lua"
    lua.write_text(
        f"local bodies = {lua_list(bodies)}\n"
        f"local signatures = {lua_list(signatures)}\n"
        "local i = 0\n"
        "request = function()\n"
        "  i = i % #bodies + 1\n"
        '  local h = {["Content-Type"] = "application/json",'
        ' ["X-Hub-Signature-256"] = signatures[i]}\n'
        f'  return wrk.format("POST", "{path}", h, bodies[i])\n'
        "end\n" + DONE_LUA
    )
    return lua


def _stats(graph: str) -> dict[str, Any]:
    found: dict[str, Any] = httpx.get(f"{graph}/stats", timeout=10).json()
    return found


def bench_backend(backend: str, seconds: float) -> dict[str, Any]:
    url = asyncio.run(seed.fresh_database(backend, ADMIN_URL))
    data = asyncio.run(seed.seed(url, contacts_count=10, opportunities_count=0))
    graph_port, port = free_port(), free_port()
    graph = f"http://127.0.0.1:{graph_port}"
    base = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "CHATCRM_RATE_LIMIT": "0",
        "CHATCRM_WEBHOOK_ALLOW_PRIVATE": "1",
        "CHATCRM_LOG_LEVEL": "warning",
    }
    graph_proc = start(
        [
            str(BIN / "uvicorn"),
            "graph:app",
            "--app-dir",
            str(Path(__file__).parent),
            "--port",
            str(graph_port),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        dict(os.environ),
        RESULTS / "graph.log",
    )
    serve = [
        str(BIN / "chatcrm"),
        "serve",
        "--database-url",
        url,
        "--port",
        str(port),
        "--workers",
        "2",
    ]
    proc = start(serve, env, RESULTS / f"conversations-{backend}.log")
    headers = {"Authorization": f"Bearer {data.api_key}", "x-workspace-id": data.workspace_id}
    out: dict[str, Any] = {}
    try:
        wait_ready(f"{graph}/stats")
        wait_ready(f"{base}/ready")
        channel = httpx.post(
            f"{base}/api/channel",
            json={
                "type": "whatsapp",
                "name": "Bench line",
                "phoneNumberId": PHONE_NUMBER_ID,
                "accessToken": "bench-token",
                "appSecret": APP_SECRET,
                "apiBaseUrl": f"{graph}/v21.0",
            },
            headers=headers,
            timeout=10,
        ).json()["data"]["channel"]
        inbound = f"{base}/channels/whatsapp/{channel['id']}"
        # 100 to a POST from new senders (each message makes a contact), then from the
        # same senders again (each message changes its contact), then one to a POST.
        senders = [_sender() for _ in range(3000)]
        batches = [
            _delivery([_message(n, i) for i, n in enumerate(senders[k : k + 100])])
            for k in range(0, len(senders), 100)
        ]
        started = time.perf_counter()
        asyncio.run(_post_all(inbound, batches, 4))
        out["inbound_new_senders_per_s"] = round(len(senders) / (time.perf_counter() - started))
        batches = [
            _delivery([_message(n, i) for i, n in enumerate(senders[k : k + 100])])
            for k in range(0, len(senders), 100)
        ] * 2
        started = time.perf_counter()
        took = asyncio.run(_post_all(inbound, batches, 4))
        elapsed = time.perf_counter() - started
        out["inbound_batched_per_s"] = round(100 * len(batches) / elapsed)
        out["inbound_batched_post_p50_s"] = round(statistics.median(took), 3)
        out["inbound_batched_post_max_s"] = round(max(took), 3)
        alone = [_delivery([_message(n, i) for i, n in enumerate(senders[:100])]) for _ in range(5)]
        out["inbound_post_of_100_alone_max_s"] = round(
            max(asyncio.run(_post_all(inbound, alone, 1))), 3
        )
        print(
            f"bench: {backend} inbound, 100 a POST: new senders {out['inbound_new_senders_per_s']}"
            f" messages/s; known senders {out['inbound_batched_per_s']} messages/s (4 POSTs at"
            f" once: median {out['inbound_batched_post_p50_s']} s, slowest"
            f" {out['inbound_batched_post_max_s']} s; alone: slowest"
            f" {out['inbound_post_of_100_alone_max_s']} s)",
            flush=True,
        )
        # Far more deliveries than can be sent in `seconds`: none is sent twice.
        lua = _one_a_post(urlsplit(inbound).path, senders, int(seconds * 1500))
        result = run_wrk(ensure_wrk(), base, lua, 16, int(seconds))
        if result["non_2xx"]:
            raise RuntimeError(f"{result['non_2xx']} deliveries were not answered 200")
        out["inbound_single_per_s"] = round(result["rps"])
        out["inbound_single_p99_ms"] = result["p99_ms"]
        print(
            f"bench: {backend} inbound, one a POST (c=16):"
            f" {out['inbound_single_per_s']} messages/s",
            flush=True,
        )
        # First attempt after the commit, the API idle.
        contact = data.contact_ids[0]
        template = {"template": {"name": "hello", "language": "en_US", "parameters": []}}
        waits = []
        for _ in range(20):
            before = _stats(graph)["count"]
            httpx.post(
                f"{base}/api/contact/{contact}/messages", json=template, headers=headers, timeout=10
            ).raise_for_status()
            answered = time.time()
            while (s := _stats(graph))["count"] == before:
                time.sleep(0.005)
            waits.append(s["last"] - answered)
            time.sleep(0.3)
        out["first_attempt_median_s"] = round(statistics.median(waits), 3)
        out["first_attempt_max_s"] = round(max(waits), 3)
        print(
            f"bench: {backend} first attempt after the commit: median"
            f" {out['first_attempt_median_s']} s, worst {out['first_attempt_max_s']} s",
            flush=True,
        )
    finally:
        stop(proc)
    # The burst: queued while no sender runs, then one `chatcrm dispatch`.
    proc = start(
        serve, {**env, "CHATCRM_DISPATCH": "0"}, RESULTS / f"conversations-{backend}-queue.log"
    )
    try:
        wait_ready(f"{base}/ready")
        bodies = [
            json.dumps(
                {"template": {"name": "promo", "language": "es", "parameters": [str(i)]}}
            ).encode()
            for i in range(1000)
        ]

        async def queue_all() -> None:
            async with httpx.AsyncClient(
                timeout=60, headers={**headers, "content-type": "application/json"}
            ) as client:

                async def one(body: bytes) -> None:
                    (
                        await client.post(
                            f"{base}/api/contact/{data.contact_ids[1]}/messages", content=body
                        )
                    ).raise_for_status()

                for chunk in range(0, 1000, 50):
                    await asyncio.gather(*(one(b) for b in bodies[chunk : chunk + 50]))

        asyncio.run(queue_all())
    finally:
        stop(proc)
    httpx.get(f"{graph}/reset", timeout=10)
    dispatcher = start(
        [str(BIN / "chatcrm"), "dispatch", "--database-url", url],
        env,
        RESULTS / f"conversations-{backend}-dispatch.log",
    )
    try:
        deadline = time.monotonic() + 120
        while _stats(graph)["count"] < 1000 and time.monotonic() < deadline:
            time.sleep(0.1)
        s = _stats(graph)
    finally:
        stop(dispatcher)
        stop(graph_proc)
    span = (s["last"] - s["first"]) if s["first"] else float("inf")
    out["burst_reached"] = s["count"]
    out["burst_per_s"] = round(s["count"] / span) if span > 0 else None
    print(
        f"bench: {backend} burst of 1,000 queued: {s['count']} reached the Graph API at"
        f" {out['burst_per_s']}/s",
        flush=True,
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--quick", action="store_true", help="3 s of one message a POST")
    # `make bench ARGS=…` passes bench/run.py's options here too: the others are its own.
    args, _ = parser.parse_known_args()
    if args.quick:
        args.seconds = 3.0
    report = {b: bench_backend(b, args.seconds) for b in args.backends.split(",")}
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "conversations.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
