"""What an accent- and case-blind search costs on 10,000 contacts.

    python bench/search.py [--backends postgresql,sqlite] [--size 10000]

Seeds one workspace with SIZE contacts (bench/seed.py), then asks `GET /api/contact?q=…`
and `GET /api/contact/board?q=…` through the application in-process, 30 times each per
query, and prints the median milliseconds. The search folds case and accents on both
sides (db/textsearch.py): the contacts of the workspace are read through its index and
each name, last name and email is folded and compared.
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

QUERIES = ("nunez", "josé", "example.com", "zzz-no-match")
TIMES = 30


async def measure(url: str, data: seed.Seeded) -> dict[str, float]:
    app = create_app(Settings(database_url=url, rate_limit=0, access_log=False))
    headers = {"Authorization": f"Bearer {data.api_key}", "x-workspace-id": data.workspace_id}
    out: dict[str, float] = {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for path in ("/api/contact", "/api/contact/board"):
                for q in QUERIES:
                    took = []
                    for _ in range(TIMES):
                        started = time.perf_counter()
                        answer = await client.get(path, params={"q": q}, headers=headers)
                        took.append(time.perf_counter() - started)
                        answer.raise_for_status()
                    out[f"{path}?q={q}"] = round(statistics.median(took) * 1000, 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backends", default="postgresql,sqlite")
    parser.add_argument("--size", type=int, default=10_000)
    args = parser.parse_args()
    for backend in args.backends.split(","):
        url = asyncio.run(seed.fresh_database(backend, ADMIN_URL))
        data = asyncio.run(seed.seed(url, contacts_count=args.size, opportunities_count=0))
        asyncio.run(seed.analyze(url))
        for case, ms in asyncio.run(measure(url, data)).items():
            print(f"search: {backend} {case}: {ms} ms (median of {TIMES})", flush=True)


if __name__ == "__main__":
    main()
