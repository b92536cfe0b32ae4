"""One request at a time: the median time of each call on one PostgreSQL and on Citus.

    .venv/bin/python bench/latency.py [--requests 30] [--citus-url URL] [--no-citus]

Throughput under load is `bench/run.py`'s; this is what a single client waits for each
call, which on Citus includes the coordinator's planning and its round trip to a worker.
Each database is new and laid out as an operator would lay it out (`chatcrm migrate`, or
`chatcrm citus distribute` on Citus), an account is made with `chatcrm init`, and a
`chatcrm serve` process answers (rate limits, access lines and dispatch off). Citus is the
coordinator at `--citus-url` (an admin URL of a database with the extension and workers),
else a coordinator and two workers started here as the tests start them (as root,
tests/citus_cluster.py). PostgreSQL is CHATCRM_BENCH_POSTGRES_URL's server.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson
from sqlalchemy.engine import make_url

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
from tests import citus_cluster  # noqa: E402

from bench.run import ADMIN_URL, free_port  # noqa: E402

CHATCRM = Path(sys.executable).parent / "chatcrm"


def _plain(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _admin(url: str, statement: str) -> None:
    conn = await asyncpg.connect(_plain(url))
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


@contextmanager
def postgres_database(admin_url: str) -> Iterator[str]:
    name = f"chatcrm_latency_{uuid.uuid4().hex[:8]}"
    asyncio.run(_admin(admin_url, f'CREATE DATABASE "{name}"'))
    try:
        yield make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    finally:
        asyncio.run(_admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextmanager
def citus_database(url: str | None) -> Iterator[str]:
    cluster = citus_cluster.from_environment(url) if url else citus_cluster.start()
    try:
        database = cluster.create_database()
        try:
            yield database
        finally:
            cluster.drop_database(database)
    finally:
        if not url:
            cluster.stop()


def _chatcrm(*args: str, url: str) -> str:
    env = {**os.environ, "CHATCRM_DATABASE_URL": url}
    return subprocess.run(
        [str(CHATCRM), *args], env=env, check=True, capture_output=True, text=True
    ).stdout


@contextmanager
def served(url: str) -> Iterator[str]:
    port = free_port()
    env = {
        **os.environ,
        "CHATCRM_DATABASE_URL": url,
        "CHATCRM_RATE_LIMIT": "0",
        "CHATCRM_ACCESS_LOG": "false",
        "CHATCRM_DISPATCH": "0",
    }
    process = subprocess.Popen(
        [str(CHATCRM), "serve", "--port", str(port)], env=env, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/health", timeout=1)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("chatcrm serve did not start") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait()


def measure(base: str, key: str, ws: str, requests: int) -> dict[str, float]:
    """Median milliseconds of each call, each call made `requests` times after a warm-up."""
    client = httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {key}", "x-workspace-id": ws}
    )
    contacts: list[str] = []
    opportunities: list[str] = []

    def create_contact(i: int) -> httpx.Response:
        body = {"name": f"Contact {i}", "email": f"c{i}-{uuid.uuid4().hex[:6]}@example.com"}
        response = client.post("/api/contact", json=body)
        contacts.append(response.json()["data"]["id"])
        return response

    def create_opportunity(i: int) -> httpx.Response:
        body = {"name": f"Deal {i}", "amount": 100 + i, "contactId": contacts[i]}
        response = client.post("/api/opportunity", json=body)
        opportunities.append(response.json()["data"]["id"])
        return response

    def rename(i: int) -> httpx.Response:
        body = {"paramToUpdate": "name", "name": f"Renamed {i}"}
        return client.put("/api/contact", params={"id": contacts[i], "workspaceId": ws}, json=body)

    def price(i: int) -> httpx.Response:
        body = {"paramToUpdate": "amount", "amount": 200 + i}
        return client.put("/api/opportunity", params={"id": opportunities[i]}, json=body)

    calls: dict[str, Callable[[int], httpx.Response]] = {
        "Create Contact": create_contact,
        "GET contact by id": lambda i: client.get(f"/api/contact/{contacts[i]}"),
        "Update Contact (name)": rename,
        "Create Opportunity": create_opportunity,
        "GET opportunity by id": lambda i: client.get(f"/api/opportunity/{opportunities[i]}"),
        "Update Opportunity (amount)": price,
        "List contacts, first page": lambda i: client.get("/api/contact"),
    }
    out = {}
    for name, call in calls.items():
        times = []
        for i in range(2 * requests):  # the first half warms the connections and plans
            started = time.perf_counter()
            response = call(i)
            elapsed = time.perf_counter() - started
            if response.status_code >= 300:
                raise RuntimeError(f"{name}: {response.status_code} {response.text}")
            if i >= requests:
                times.append(elapsed * 1000)
        out[name] = statistics.median(times)
    return out


def run(url: str, *, citus: bool, requests: int) -> dict[str, float]:
    _chatcrm(*(("citus", "distribute") if citus else ("migrate",)), url=url)
    account: dict[str, Any] = orjson.loads(_chatcrm("init", "--json", url=url))
    with served(url) as base:
        return measure(base, account["apiKey"], account["workspaceId"], requests)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--citus-url", default=os.environ.get("CHATCRM_BENCH_CITUS_URL"))
    parser.add_argument("--no-citus", action="store_true")
    args = parser.parse_args()
    results: dict[str, dict[str, float]] = {}
    with postgres_database(ADMIN_URL) as url:
        results["PostgreSQL"] = run(url, citus=False, requests=args.requests)
    if not args.no_citus:
        with citus_database(args.citus_url) as url:
            results["Citus"] = run(url, citus=True, requests=args.requests)
    names = list(next(iter(results.values())))
    print(f"Median ms of {args.requests} requests, one at a time:")
    print(f"  {'':30}" + "".join(f"{backend:>12}" for backend in results))
    for name in names:
        print(f"  {name:30}" + "".join(f"{r[name]:12.2f}" for r in results.values()))


if __name__ == "__main__":
    main()
