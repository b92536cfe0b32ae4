"""chatcrm's own CPU per request, in-process: the ASGI app called directly, no server and
no load generator, beside the floor's app (bench/bare_query.py) measured the same way.

    .venv/bin/python bench/in_process.py [--rounds 15] [--per-round 400] [--size 2000]
                                         [--loop uvloop|asyncio]

Under load, one run on two shared cores moves by ±10-15 % from the next, so a change of
20 µs in a request of 300 cannot be seen there. Here each request is sent alone to the
app (PostgreSQL at CHATCRM_BENCH_POSTGRES_URL, a fresh `chatcrm_bench` database seeded
like `make bench`'s), and the process's CPU time is read around rounds of requests; the
cases are alternated round by round, and each is reported as its least round, so that
what the machine does meanwhile weighs on none more than on another. The service runs as
under `make bench`: the shared rate limiter on (above the load), the access line written
(to /dev/null here), the metrics kept; no webhook is subscribed.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import uvloop

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH.parent))
# The metrics as `serve` keeps them (in shared memory), chosen when they are imported.
os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="chatcrm-bench-"))
from bench import seed  # noqa: E402
from bench.run import ADMIN_URL, DEFAULT_RATE_LIMIT  # noqa: E402
from chatcrm import logs  # noqa: E402
from chatcrm.app import create_app  # noqa: E402
from chatcrm.config import Settings  # noqa: E402

Request = tuple[dict[str, Any], bytes]
App = Callable[..., Any]


def _scope(method: str, path: str, headers: list[tuple[bytes, bytes]], query: bytes = b""):
    return {
        "type": "http",
        "http_version": "1.1",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "scheme": "http",
        "query_string": query,
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "extensions": {},
        "state": {},
    }


async def _call(app: App, request: Request) -> int:
    scope, body = request
    scope["app"] = app
    answer: list[dict[str, Any]] = []
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:  # nothing more: a request never reads twice here
            await asyncio.Event().wait()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        answer.append(message)

    await app(scope, receive, send)
    return int(answer[0]["status"])


async def _measure(
    cases: dict[str, tuple[App, Callable[[], Request]]], rounds: int, per_round: int
) -> dict[str, float]:
    best = dict.fromkeys(cases, float("inf"))
    for name, (app, make) in cases.items():  # warm: statements prepared, caches filled
        for _ in range(100):
            status = await _call(app, make())
            if status != 200:
                raise SystemExit(f"{name}: answered {status}")
    for _ in range(rounds):
        for name, (app, make) in cases.items():
            requests = [make() for _ in range(per_round)]
            started = time.process_time()
            for request in requests:
                await _call(app, request)
            best[name] = min(best[name], (time.process_time() - started) / per_round * 1e6)
    return best


@contextmanager
def _stderr_to_null() -> Any:
    """The access lines go where a server's would, a file descriptor: here, nowhere."""
    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        for handler in logging.getLogger().handlers:  # the buffered lines go there too
            handler.flush()
        os.dup2(saved, 2)
        os.close(null)
        os.close(saved)


async def main(args: argparse.Namespace) -> None:
    url = await seed.fresh_database("postgresql", ADMIN_URL)
    data = await seed.seed(url, contacts_count=args.size, opportunities_count=args.size)
    ids_file = Path(tempfile.mkdtemp(prefix="chatcrm-bench-")) / "ids.txt"
    ids_file.write_text("\n".join(data.contact_ids))
    os.environ.update(
        CHATCRM_BARE_URL=url,
        CHATCRM_BARE_WORKSPACE=data.workspace_id,
        CHATCRM_BARE_IDS=str(ids_file),
        CHATCRM_BARE_CASE="get_contact",
    )
    sys.path.insert(0, str(BENCH))
    import bare_query  # reads the environment above when imported

    logs.configure("info", json=True)
    app = create_app(
        Settings(database_url=url, rate_limit=DEFAULT_RATE_LIMIT, dispatch=False, workers=2)
    )
    headers = [
        (b"host", b"bench"),
        (b"authorization", f"Bearer {data.api_key}".encode()),
        (b"x-workspace-id", data.workspace_id.encode()),
    ]
    ws = data.workspace_id.encode()

    def get_contact() -> Request:
        return _scope("GET", f"/api/contact/{random.choice(data.contact_ids)}", headers), b""

    def update_contact() -> Request:
        body = orjson.dumps({"paramToUpdate": "name", "name": f"N{random.random()}"})
        query = b"id=" + random.choice(data.contact_ids).encode() + b"&workspaceId=" + ws
        more = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        return _scope("PUT", "/api/contact", headers + more, query), body

    def list_first_page() -> Request:
        return _scope("GET", "/api/contact", headers), b""

    def floor() -> Request:
        return _scope("GET", "/get_contact", []), b""

    def page_floor() -> Request:
        return _scope("GET", "/list_first_page", []), b""

    def update_floor() -> Request:
        return _scope("GET", "/update_contact_evented", []), b""

    cases = {
        "GET contact by id": (app, get_contact),
        "Update Contact (name)": (app, update_contact),
        "List contacts, first page": (app, list_first_page),
        "(floor) bare, same SELECT": (bare_query.app, floor),
        "(floor) bare, same page": (bare_query.app, page_floor),
        "(floor) bare, same UPDATE": (bare_query.app, update_floor),
    }
    with _stderr_to_null():
        async with app.router.lifespan_context(app):
            best = await _measure(cases, args.rounds, args.per_round)
    print(f"in-process CPU per request, least of {args.rounds} rounds of {args.per_round}:")
    for name, micros in best.items():
        print(f"  {name:28} {micros:7.1f} µs")
    floor_us = best["(floor) bare, same SELECT"]
    print(f"  GET over its floor: {best['GET contact by id'] - floor_us:.1f} µs")
    update_us = best["(floor) bare, same UPDATE"]
    print(f"  Update Contact over its floor: {best['Update Contact (name)'] - update_us:.1f} µs")
    page_us = best["(floor) bare, same page"]
    print(f"  first page over its floor: {best['List contacts, first page'] - page_us:.1f} µs")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--per-round", type=int, default=400)
    parser.add_argument("--size", type=int, default=2000, help="contacts and opportunities")
    parser.add_argument(
        "--loop", choices=("uvloop", "asyncio"), default="uvloop", help="as `serve` runs on"
    )
    arguments = parser.parse_args()
    # `serve` runs on uvloop (uvicorn's choice when it is installed, as with
    # uvicorn[standard]): the event loop's own cost per turn is part of every request.
    factory = uvloop.new_event_loop if arguments.loop == "uvloop" else asyncio.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(main(arguments))
