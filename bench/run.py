"""Load benchmark: chatcrm's hot calls against a bare-ASGI ceiling, on PostgreSQL and SQLite.

    make bench                       # or: python bench/run.py [--duration 15] [--quick]

For each backend: a fresh database seeded with 10,000 contacts and 10,000 opportunities,
`chatcrm serve --workers 2`, then wrk at each concurrency for each case; in the same run a
hello-world ASGI app on the same server with the same workers gives the ceiling, and every
case is reported as a ratio to it. Prints a table and writes bench/results/latest.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import cpu, seed

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
BIN = Path(sys.executable).parent
ADMIN_URL = os.environ.get(
    "CHATCRM_BENCH_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)

# The floors (bench/bare_query.py): bare ASGI + asyncpg, one statement, nothing else. Each
# case with a floor has it measured in the same run; `roundtrip` is measured always.
FLOORS = {
    "roundtrip": "(floor) bare ASGI+asyncpg, SELECT 1",
    "get_contact": "(floor) bare, same SELECT",
    "update_contact": "(floor) bare, UPDATE name",
    "update_contact_event": "(floor) bare, UPDATE + its event",
    "update_contact_evented": "(floor) bare, Update Contact's own statement",
    "list_first_page": "(floor) bare, same page SELECT",
}
# A limit far above what one key can send here: the limiter's statement runs on every
# request, and never refuses one.
DEFAULT_RATE_LIMIT = 1_000_000
CASES = [
    ("get_contact", "GET contact by id (random ids)"),
    ("update_contact", "Update Contact (name)"),
    ("update_opportunity", "Update Opportunity (amount)"),
    ("list_first_page", "List contacts, first page"),
    ("list_page_50", "List contacts, page 50 (token)"),
    ("search_cellphone", "searchByCellphone (random)"),
    ("create_contact", "Create Contact (one column)"),
]
# Webhooks that keep up (contract M), measured after the cases when a webhook is subscribed:
# 60 s of Update Contact at c=64, then the seconds until every delivery is made (`lag`);
# and, with the API idle, a replay of 10,000 events to one endpoint (deliveries/s).
WEBHOOK_CASES = [
    ("webhook_keep_up", "Webhooks: 60 s of Update Contact, lag"),
    ("webhook_replay", "Webhooks: replay of 10,000, deliveries/s"),
    ("webhook_replay_beside_hanging", "Webhooks: the replay again, another receiver hanging"),
]
# The third figure (D.4: first attempts are not held behind another endpoint's slow
# receiver): the same replay while an endpoint of another workspace never answers, with a
# backlog of this many first attempts beyond its window.
HANGING_BACKLOG = 100
KEEP_UP_SECONDS = 60
KEEP_UP_CONCURRENCY = 64
REPLAYED = 10_000

DONE_LUA = r"""
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'RESULT {"requests":%d,"duration_us":%d,"non_2xx":%d,"connect_errors":%d,' ..
    '"read_errors":%d,"write_errors":%d,"timeouts":%d,' ..
    '"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,"mean_ms":%.3f}\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, latency.mean / 1000))
end
"""


@dataclass
class Result:
    backend: str
    case: str
    concurrency: int
    rps: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    requests: int
    errors: int
    ratio: float | None = None
    valid: bool = True
    # Seconds after the run until its events were published and their webhook deliveries
    # made (the deliveries' lag behind the load).
    settled_s: float | None = None
    # CPU µs per request from the run's start until it settled (bench/cpu.py): the server's
    # processes (its requests and its webhook deliveries), and PostgreSQL's.
    server_cpu_us: float | None = None
    db_cpu_us: float | None = None


def lua_list(values: list[str]) -> str:
    return "{" + ",".join(json.dumps(v) for v in values) + "}"


def script(case: str, s: seed.Seeded, page_50_token: str) -> str:
    headers = (
        f'{{["Authorization"] = "Bearer {s.api_key}", ["x-workspace-id"] = "{s.workspace_id}",'
        ' ["Content-Type"] = "application/json"}'
    )
    ws = s.workspace_id
    if case == "get_contact":
        body = (
            f"local ids = {lua_list(s.contact_ids)}\n"
            f"local h = {headers}\n"
            "request = function()\n"
            '  return wrk.format("GET", "/api/contact/" .. ids[math.random(#ids)], h)\n'
            "end\n"
        )
    elif case == "update_contact":
        body = (
            f"local ids = {lua_list(s.contact_ids)}\n"
            f"local h = {headers}\n"
            "local n = 0\n"
            "request = function()\n"
            "  n = n + 1\n"
            "  local id = ids[math.random(#ids)]\n"
            f'  return wrk.format("PUT", "/api/contact?id=" .. id .. "&workspaceId={ws}", h,\n'
            '    \'{"paramToUpdate": "name", "name": "Contact renamed \' .. n .. \'"}\')\n'
            "end\n"
        )
    elif case == "update_opportunity":
        body = (
            f"local ids = {lua_list(s.opportunity_ids)}\n"
            f"local h = {headers}\n"
            "request = function()\n"
            "  local id = ids[math.random(#ids)]\n"
            "  local amount = string.format('%d.%02d',\n"
            "    math.random(100, 99999), math.random(0, 99))\n"
            '  return wrk.format("PUT", "/api/opportunity?id=" .. id, h,\n'
            '    \'{"paramToUpdate": "amount", "amount": \' .. amount .. \'}\')\n'
            "end\n"
        )
    elif case == "list_first_page":
        body = (
            f"local h = {headers}\n"
            'request = function() return wrk.format("GET", "/api/contact", h) end\n'
        )
    elif case == "list_page_50":
        body = (
            f"local h = {headers}\n"
            "request = function()\n"
            f'  return wrk.format("GET", "/api/contact?continuationToken={page_50_token}", h)\n'
            "end\n"
        )
    elif case == "search_cellphone":
        body = (
            f"local phones = {lua_list(s.phones)}\n"
            f"local h = {headers}\n"
            "request = function()\n"
            '  return wrk.format("GET", "/api/contact/searchByCellphone?cellphone=%2B" ..\n'
            "    phones[math.random(#phones)], h)\n"
            "end\n"
        )
    elif case == "create_contact":
        # Every new contact goes to the end of the workspace's first column: the creates
        # take turns on that column (docs/api.md 4.6), the worst case of one workspace.
        # A contact that is not WhatsApp's needs an e-mail, unique among live contacts:
        # the run's start, the wrk thread and a counter make it.
        body = (
            f"local h = {headers}\n"
            "local run, n = os.time(), 0\n"
            "local threads = 0\n"
            "setup = function(thread)\n"
            "  threads = threads + 1\n"
            "  thread:set('tid', threads)\n"
            "end\n"
            "request = function()\n"
            "  n = n + 1\n"
            "  local email = 'c' .. run .. '-' .. tid .. '-' .. n .. '@bench.test'\n"
            '  return wrk.format("POST", "/api/contact", h,\n'
            '    \'{"name": "Created", "platformId": 1, "email": "\' .. email .. \'"}\')\n'
            "end\n"
        )
    else:  # pragma: no cover
        raise ValueError(case)
    return body + DONE_LUA


def ensure_wrk() -> str:
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() != 0:
        sys.exit("bench: wrk is not installed; run `apt-get install wrk` as root")
    print("bench: installing wrk from Debian's packages", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(
        ["apt-get", "install", "-y", "-q", "wrk"], check=True, env=env, stdout=subprocess.DEVNULL
    )
    found = shutil.which("wrk")
    if not found:
        sys.exit("bench: could not install wrk")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_ready(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"server at {url} did not become ready")


def start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    out = log.open("wb")
    return subprocess.Popen(
        command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def run_wrk(wrk: str, url: str, lua: Path, concurrency: int, duration: int) -> dict[str, Any]:
    threads = min(2, concurrency)
    command = [
        wrk,
        f"-t{threads}",
        f"-c{concurrency}",
        f"-d{duration}s",
        "--timeout",
        "10s",
        "-s",
        str(lua),
        url,
    ]
    out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("RESULT "))
    result: dict[str, Any] = json.loads(line.removeprefix("RESULT "))
    result["rps"] = result["requests"] / (result["duration_us"] / 1e6)
    return result


def measured(backend: str, case: str, concurrency: int, r: dict[str, Any]) -> Result:
    """A wrk run as a result row; any failed request makes it invalid."""
    errors = sum(
        r[k] for k in ("non_2xx", "connect_errors", "read_errors", "write_errors", "timeouts")
    )
    return Result(
        backend=backend,
        case=case,
        concurrency=concurrency,
        rps=round(r["rps"], 1),
        p50_ms=r["p50_ms"],
        p90_ms=r["p90_ms"],
        p99_ms=r["p99_ms"],
        max_ms=r["max_ms"],
        requests=r["requests"],
        errors=errors,
        valid=errors == 0,
    )


def page_50_token(base: str, s: seed.Seeded) -> str:
    headers = {"Authorization": f"Bearer {s.api_key}", "x-workspace-id": s.workspace_id}
    token = None
    with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
        for _ in range(49):
            params = {"continuationToken": token} if token else {}
            data = client.get("/api/contact", params=params).json()["data"]
            token = data["continuationToken"]
    assert token
    return str(token)


def ceiling(wrk: str, concurrencies: list[int], duration: int, workers: int) -> dict[int, float]:
    port = free_port()
    lua = RESULTS / "hello.lua"
    lua.write_text(DONE_LUA)
    proc = start(
        [
            str(BIN / "uvicorn"),
            "hello:app",
            "--app-dir",
            str(BENCH),
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            "--no-access-log",
            "--lifespan",
            "off",
        ],
        dict(os.environ),
        RESULTS / "hello.log",
    )
    try:
        wait_ready(f"http://127.0.0.1:{port}/")
        run_wrk(wrk, f"http://127.0.0.1:{port}/", lua, 16, 2)  # warm-up
        return {
            c: run_wrk(wrk, f"http://127.0.0.1:{port}/", lua, c, duration)["rps"]
            for c in concurrencies
        }
    finally:
        stop(proc)


def bench_backend(
    wrk: str,
    backend: str,
    concurrencies: list[int],
    duration: int,
    workers: int,
    size: int,
    cases: str,
    rate_limit: float = 0,
    webhook: bool = True,
) -> tuple[list[Result], dict[str, Any]]:
    print(f"bench: {backend}: seeding {size} contacts and {size} opportunities", flush=True)
    url = asyncio.run(seed.fresh_database(backend, ADMIN_URL))
    data = asyncio.run(seed.seed(url, contacts_count=size, opportunities_count=size))
    print(f"bench: {backend}: seeded in {data.seconds:.1f} s", flush=True)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    # The benchmark is one key at full speed: unlimited, or limited above the load to
    # measure what the limiter costs.
    env = {
        **os.environ,
        "CHATCRM_RATE_LIMIT": f"{rate_limit:g}",
        "CHATCRM_WEBHOOK_ALLOW_PRIVATE": "1",  # the receiver is on 127.0.0.1
    }
    proc = start(
        [
            str(BIN / "chatcrm"),
            "serve",
            "--database-url",
            url,
            "--port",
            str(port),
            "--workers",
            str(workers),
        ],
        env,
        RESULTS / f"serve-{backend}.log",
    )
    results: list[Result] = []
    receiver = start_receiver() if webhook else None
    try:
        wait_ready(f"{base}/ready")
        settled(url)
        asyncio.run(seed.analyze(url))  # the feed positions are new since the seed's
        if receiver is not None:
            subscribe(base, data, receiver[1])
        token = page_50_token(base, data)
        for case, _ in CASES:
            if case not in cases.split(","):
                continue
            lua = RESULTS / f"{case}.lua"
            lua.write_text(script(case, data, token))
            run_wrk(wrk, base, lua, 16, 2)  # warm-up
            for c in concurrencies:
                settled(url)
                before = cpu.read(proc.pid)
                result = measured(backend, case, c, run_wrk(wrk, base, lua, c, duration))
                result.settled_s = round(settled(url), 1)
                used = cpu.per_request(before, cpu.read(proc.pid), result.requests)
                result.server_cpu_us, result.db_cpu_us = used
                results.append(result)
                print(
                    f"bench: {backend} {case} c={c}: {result.rps:.0f} req/s, "
                    f"p99 {result.p99_ms:.1f} ms, errors {result.errors}, "
                    f"deliveries done {result.settled_s} s after",
                    flush=True,
                )
        if receiver is not None and "webhooks" in cases.split(","):
            results += webhook_cases(wrk, backend, base, url, data, receiver[1], duration)
    finally:
        stop(proc)
        delivered = received(receiver[1]) if receiver is not None else None
        if receiver is not None:
            stop(receiver[0])
    if backend == "postgresql":
        for floor in FLOORS:
            if floor == "roundtrip" or any(floor.startswith(c) for c in cases.split(",")):
                results += bare_reference(wrk, data, floor, concurrencies, duration, workers)
    locked = (
        (RESULTS / f"serve-{backend}.log").read_text(errors="replace").count("database is locked")
    )
    return results, {
        "seed_seconds": round(data.seconds, 1),
        "database_is_locked": locked,
        "webhook_deliveries_received": delivered,
    }


def webhook_cases(
    wrk: str, backend: str, base: str, url: str, data: seed.Seeded, receiver: str, duration: int
) -> list[Result]:
    """The webhook figures of contracts M and D.4 (see WEBHOOK_CASES)."""
    out: list[Result] = []
    lua = RESULTS / "update_contact.lua"
    lua.write_text(script("update_contact", data, ""))
    settled(url)
    seconds = max(duration, KEEP_UP_SECONDS) if duration >= 15 else duration
    result = measured(
        backend,
        "webhook_keep_up",
        KEEP_UP_CONCURRENCY,
        run_wrk(wrk, base, lua, KEEP_UP_CONCURRENCY, seconds),
    )
    result.settled_s = round(settled(url), 1)
    out.append(result)
    print(
        f"bench: {backend} {seconds} s of updates at c={KEEP_UP_CONCURRENCY}: "
        f"{result.rps:.0f} req/s; every delivery made {result.settled_s} s after",
        flush=True,
    )
    # The replay: a second endpoint, taking the seed's contact.created events (one per
    # seeded contact), all of them queued by one request; timed from that request to the
    # last delivery received.
    headers = {"Authorization": f"Bearer {data.api_key}", "x-workspace-id": data.workspace_id}
    made = httpx.post(
        f"{base}/api/webhook",
        json={"url": f"{receiver}/replayed", "eventTypes": ["contact.created"]},
        headers=headers,
        timeout=10,
    )
    made.raise_for_status()
    webhook_id = made.json()["data"]["id"]
    out.append(_replay(backend, "webhook_replay", base, headers, webhook_id, receiver))
    # Again, beside another workspace's endpoint that never answers (`/hang`), its window
    # full and a backlog behind it.
    key = {"Authorization": f"Bearer {data.api_key}"}
    other = httpx.post(f"{base}/api/workspace", json={"name": "hanging"}, headers=key, timeout=10)
    other.raise_for_status()
    elsewhere = {**key, "x-workspace-id": other.json()["data"]["id"]}
    httpx.post(
        f"{base}/api/webhook", json={"url": f"{receiver}/hang"}, headers=elsewhere, timeout=10
    ).raise_for_status()
    contacts = [
        {"name": f"Hanging {n}", "email": f"hanging{n}@bench.example"}
        for n in range(HANGING_BACKLOG)
    ]
    httpx.post(
        f"{base}/api/contact/upsert-batch",
        json={"contacts": contacts},
        headers=elsewhere,
        timeout=60,
    ).raise_for_status()
    time.sleep(1)  # its first window is taken and hangs
    case = "webhook_replay_beside_hanging"
    out.append(_replay(backend, case, base, headers, webhook_id, receiver))
    return out


def _replay(
    backend: str, case: str, base: str, headers: dict[str, str], webhook_id: str, receiver: str
) -> Result:
    """Replay every event of the endpoint; deliveries per second until the last arrived."""
    before = received(receiver)
    started = time.monotonic()
    replay = httpx.post(
        f"{base}/api/webhook/{webhook_id}/replay",
        json={"since": "2000-01-01T00:00:00.000Z"},
        headers=headers,
        timeout=120,
    )
    replay.raise_for_status()
    queued = int(replay.json()["data"]["queued"])
    while received(receiver) - before < queued:
        if time.monotonic() - started > 600:
            raise RuntimeError("the replay was not delivered within 10 minutes")
        time.sleep(0.05)
    elapsed = time.monotonic() - started
    rate = queued / elapsed
    print(f"bench: {backend} {case} of {queued}: {elapsed:.1f} s, {rate:.0f}/s", flush=True)
    return Result(
        backend=backend,
        case=case,
        concurrency=1,
        rps=round(rate, 1),
        p50_ms=0,
        p90_ms=0,
        p99_ms=0,
        max_ms=round(elapsed * 1000, 1),
        requests=queued,
        errors=0,
    )


def settled(url: str, timeout: float = 900) -> float:
    """Wait until the server has published every event and made every webhook delivery of
    the changes so far; the seconds it took. Each run starts from there: otherwise the
    seed's events, or an earlier case's deliveries, would be worked off during it."""
    start = time.monotonic()
    while (left := asyncio.run(seed.backlog(url))) > 0:
        if time.monotonic() - start > timeout:
            raise RuntimeError(f"{left} events or deliveries still pending after {timeout:.0f} s")
        time.sleep(0.5)
    return time.monotonic() - start


def start_receiver() -> tuple[subprocess.Popen[bytes], str]:
    """bench/receiver.py on a free port: the webhook endpoint the runs are subscribed to."""
    port = free_port()
    proc = start(
        [
            str(BIN / "uvicorn"),
            "receiver:app",
            "--app-dir",
            str(BENCH),
            "--port",
            str(port),
            "--no-access-log",
            "--log-level",
            "warning",
        ],
        dict(os.environ),
        RESULTS / "receiver.log",
    )
    url = f"http://127.0.0.1:{port}"
    wait_ready(f"{url}/count")
    return proc, url


def subscribe(base: str, s: seed.Seeded, receiver: str) -> None:
    """One webhook endpoint subscribed to every event type of the workspace."""
    made = httpx.post(
        f"{base}/api/webhook",
        json={"url": f"{receiver}/hook", "eventTypes": ["*"]},
        headers={"Authorization": f"Bearer {s.api_key}", "x-workspace-id": s.workspace_id},
        timeout=10,
    )
    made.raise_for_status()


def received(receiver: str) -> int:
    return int(httpx.get(f"{receiver}/count", timeout=10).text)


def bare_reference(
    wrk: str, data: seed.Seeded, floor: str, concurrencies: list[int], duration: int, workers: int
) -> list[Result]:
    """One floor of bench/bare_query.py: the statement without chatcrm around it."""
    ids = RESULTS / "contact_ids.txt"
    ids.write_text("\n".join(data.contact_ids))
    port = free_port()
    env = {
        **os.environ,
        "CHATCRM_BARE_URL": data.database_url,
        "CHATCRM_BARE_WORKSPACE": data.workspace_id,
        "CHATCRM_BARE_IDS": str(ids),
        "CHATCRM_BARE_CASE": floor,
    }
    proc = start(
        [
            str(BIN / "uvicorn"),
            "bare_query:app",
            "--app-dir",
            str(BENCH),
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--log-level",
            "warning",
            "--no-access-log",
            "--lifespan",
            "off",
        ],
        env,
        RESULTS / "bare.log",
    )
    lua = RESULTS / "bare.lua"
    lua.write_text(DONE_LUA)
    out = []
    try:
        wait_ready(f"http://127.0.0.1:{port}/")
        run_wrk(wrk, f"http://127.0.0.1:{port}/", lua, 16, 2)
        for c in concurrencies:
            before = cpu.read(proc.pid)
            r = run_wrk(wrk, f"http://127.0.0.1:{port}/", lua, c, duration)
            out.append(measured("postgresql", f"floor_{floor}", c, r))
            used = cpu.per_request(before, cpu.read(proc.pid), r["requests"])
            out[-1].server_cpu_us, out[-1].db_cpu_us = used
            print(
                f"bench: floor {floor} c={c}: {r['rps']:.0f} req/s, p99 {r['p99_ms']:.1f} ms",
                flush=True,
            )
    finally:
        stop(proc)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=int, default=15, help="seconds per run")
    parser.add_argument("--concurrency", default="16,64")
    parser.add_argument("--backends", default="postgresql,sqlite")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--size", type=int, default=10_000, help="contacts and opportunities")
    parser.add_argument("--quick", action="store_true", help="3 s runs, 2,000 records")
    parser.add_argument("--output", default="latest.json", help="file name in bench/results/")
    parser.add_argument(
        "--cases",
        default=",".join([*(c for c, _ in CASES), "webhooks"]),
        help="comma-separated, of: %(default)s",
    )
    parser.add_argument(
        "--rate-limit",
        type=float,
        default=DEFAULT_RATE_LIMIT,
        help="CHATCRM_RATE_LIMIT of the server (0: off); by default above the load, so the "
        "limiter runs on every request and refuses none",
    )
    parser.add_argument(
        "--no-webhook",
        dest="webhook",
        action="store_false",
        help="no webhook subscribed (by default one endpoint, on a local receiver, is "
        "subscribed to every event, and delivered to while the load runs)",
    )
    args = parser.parse_args()
    if args.quick:
        args.duration, args.size = 3, 2_000
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    RESULTS.mkdir(exist_ok=True)
    wrk = ensure_wrk()

    print("bench: ceiling (bare ASGI hello world)", flush=True)
    roof = ceiling(wrk, concurrencies, args.duration, args.workers)
    all_results: list[Result] = []
    notes: dict[str, Any] = {}
    for backend in args.backends.split(","):
        results, info = bench_backend(
            wrk,
            backend,
            concurrencies,
            args.duration,
            args.workers,
            args.size,
            args.cases,
            args.rate_limit,
            args.webhook,
        )
        for r in results:
            if r.concurrency in roof and r.case not in dict(WEBHOOK_CASES):
                r.ratio = round(r.rps / roof[r.concurrency], 4)
        all_results += results
        notes[backend] = info

    report = {
        "machine": {
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
            "python": platform.python_version(),
        },
        "settings": {
            "duration_s": args.duration,
            "workers": args.workers,
            "size": args.size,
            "rate_limit": args.rate_limit,
            "webhook_subscribed": args.webhook,
        },
        "ceiling_rps": {str(c): round(v, 1) for c, v in roof.items()},
        "notes": notes,
        "results": [asdict(r) for r in all_results],
    }
    (RESULTS / args.output).write_text(json.dumps(report, indent=2) + "\n")
    print_table(report, all_results)
    print(f"written: {RESULTS / args.output}")


def print_table(report: dict[str, Any], results: list[Result]) -> None:
    labels = dict(CASES) | dict(WEBHOOK_CASES) | {f"floor_{k}": v for k, v in FLOORS.items()}
    print()
    print(
        "ceiling (bare ASGI, same server and workers): "
        + ", ".join(f"c={c}: {v:.0f} req/s" for c, v in report["ceiling_rps"].items())
    )
    print(
        f"{'backend':<11}{'case':<38}{'c':>4}{'req/s':>10}{'ratio':>8}{'p50 ms':>9}"
        f"{'p99 ms':>9}{'errors':>8}{'lag s':>7}{'srv µs':>8}{'db µs':>7}"
    )
    for r in results:
        flag = "" if r.valid else "  INVALID"
        print(
            f"{r.backend:<11}{labels[r.case]:<38}{r.concurrency:>4}{r.rps:>10.0f}"
            f"{(r.ratio or 0):>8.3f}{r.p50_ms:>9.1f}{r.p99_ms:>9.1f}{r.errors:>8}"
            f"{'' if r.settled_s is None else f'{r.settled_s:.1f}':>7}"
            f"{_blank(r.server_cpu_us):>8}{_blank(r.db_cpu_us):>7}{flag}"
        )
    settings = report["settings"]
    print(
        f"rate limit {settings['rate_limit']:g}/s per key; "
        f"webhook subscribed: {'yes' if settings['webhook_subscribed'] else 'no'}; "
        "lag: seconds after the run until its events were published and delivered; "
        "srv µs, db µs: CPU per request of the server's processes (deliveries included) "
        "and of PostgreSQL's, from the run's start until it settled"
    )
    for backend, info in report["notes"].items():
        print(
            f"{backend}: seeded in {info['seed_seconds']} s; "
            f"'database is locked' in server log: {info['database_is_locked']}; "
            f"webhook deliveries received: {info['webhook_deliveries_received']}"
        )


def _blank(value: float | None) -> str:
    return "" if value is None else f"{value:.0f}"


if __name__ == "__main__":
    main()
