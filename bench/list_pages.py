"""Keyset paging costs the same per page at the end of a list as at its start.

    python bench/list_pages.py [--backends postgresql,sqlite] [--size 10000]

Seeds one workspace with SIZE contacts, then walks `GET /api/contact` page by page with
continuation tokens (20 per page) through the application in-process, timing every page.
Prints the median time of the first and the last 25 pages and their ratio: with OFFSET
the last pages would cost hundreds of times the first; with the keyset, about the same.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import seed
from bench.run import ADMIN_URL
from chatcrm.app import create_app
from chatcrm.config import Settings

EDGE = 25


async def walk(url: str, data: seed.Seeded) -> list[float]:
    app = create_app(Settings(database_url=url, rate_limit=0, access_log=False))
    headers = {"Authorization": f"Bearer {data.api_key}", "x-workspace-id": data.workspace_id}
    times: list[float] = []
    seen = 0
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            token = None
            while True:
                params = {"continuationToken": token} if token else {}
                started = time.perf_counter()
                response = await client.get("/api/contact", params=params, headers=headers)
                times.append(time.perf_counter() - started)
                body = response.json()["data"]
                seen += len(body["data"])
                token = body["continuationToken"]
                if token is None:
                    break
    assert seen == len(data.contact_ids), (seen, len(data.contact_ids))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", default="postgresql,sqlite")
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args()
    for backend in args.backends.split(","):
        url = asyncio.run(seed.fresh_database(backend, ADMIN_URL))
        data = asyncio.run(seed.seed(url, contacts_count=args.size, opportunities_count=0))
        times = asyncio.run(walk(url, data))
        first = statistics.median(times[:EDGE]) * 1000
        last = statistics.median(times[-EDGE:]) * 1000
        print(
            f"{backend}: {len(times)} pages of 20 for {args.size} contacts; median per page: "
            f"first {EDGE} {first:.2f} ms, last {EDGE} {last:.2f} ms, "
            f"last/first {last / first:.2f}"
        )


if __name__ == "__main__":
    main()
