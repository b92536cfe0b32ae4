"""Import and export benchmark: a generated contacts CSV imported into a fresh workspace of
a `chatcrm serve`, then exported, on PostgreSQL and SQLite. Prints rows/s and the
importer's peak memory (RSS); never asserts.

    python bench/transfer.py [--rows 100000] [--backends postgresql,sqlite] [--workers 2]

Goals: import ≥ 2,000 rows/s on PostgreSQL, ≥ 1,000 rows/s on SQLite.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import seed
from bench.run import ADMIN_URL, BIN, RESULTS, free_port, start, stop, wait_ready
from chatcrm.config import Settings
from chatcrm.db.database import Database
from chatcrm.provisioning import NewAccount, init_account


def generate(path: Path, rows: int) -> None:
    """Contacts with a phone, an email, a variable and (one in three) a tag."""
    with path.open("w", encoding="utf-8", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(["name", "lastname", "email", "phone", "tags", "var:city", "isRead"])
        for i in range(rows):
            out.writerow(
                [
                    f"Contact {i}",
                    f"Lastname {i % 997}",
                    f"contact{i}@example.com",
                    f"51{900000000 + i}",
                    "VIP" if i % 3 == 0 else "",
                    ("Lima", "Cusco", "Arequipa")[i % 3],
                    "true" if i % 2 else "false",
                ]
            )


async def _account(url: str) -> NewAccount:
    db = Database(Settings(database_url=url))
    try:
        async with db.transaction() as conn:
            return await init_account(conn, workspace_name="Import benchmark")
    finally:
        await db.dispose()


def _timed(command: list[str]) -> tuple[float, int, int]:
    """(seconds, exit status, peak RSS in KiB) of one command, measured on its own."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, process.returncode, usage.ru_maxrss


class AutoAnalyze:
    """PostgreSQL here runs without autovacuum: this stands in for its auto-analyze, which
    takes a table's statistics again once a tenth of it changed (every few seconds while a
    table doubles). Without statistics the planner thinks a workspace holds a handful of
    contacts, and sorts all of them for each list page instead of walking the list index."""

    def __init__(self, url: str, every: float = 5.0) -> None:
        self.url, self.every = url, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            asyncio.run(seed.analyze(self.url))

    def __enter__(self) -> AutoAnalyze:
        if self.url.startswith("postgresql"):
            self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        if self.url.startswith("postgresql"):
            asyncio.run(seed.analyze(self.url))  # after the import, as autovacuum would


def bench_backend(backend: str, rows: int, workers: int, source: Path) -> dict[str, float]:
    url = asyncio.run(seed.fresh_database(backend, ADMIN_URL))
    account = asyncio.run(_account(url))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "CHATCRM_RATE_LIMIT": "0", "CHATCRM_ACCESS_LOG": "false"}
    command = [str(BIN / "chatcrm"), "serve", "--database-url", url, "--port", str(port)]
    proc = start([*command, "--workers", str(workers)], env, RESULTS / f"transfer-{backend}.log")
    try:
        wait_ready(f"{base}/ready")
        headers = {"Authorization": f"Bearer {account.api_key}"}
        httpx.post(
            f"{base}/api/workspace/{account.workspace_id}/tags",
            json={"name": "VIP"},
            headers=headers,
        ).raise_for_status()
        server = ["--url", base, "--api-key", account.api_key]
        server += ["--workspace", account.workspace_id]
        cli = str(BIN / "chatcrm")
        with AutoAnalyze(url):
            seconds, status, rss = _timed([cli, "import", "contacts", str(source), *server])
        print(f"bench: {backend}: import {rows} rows in {seconds:.1f} s (exit {status})")
        exported = RESULTS / f"transfer-export-{backend}.csv"
        export_seconds, _, _ = _timed([cli, "export", "contacts", "-o", str(exported), *server])
        with exported.open(encoding="utf-8", newline="") as handle:
            count = sum(1 for _ in csv.reader(handle)) - 1
        exported.unlink()
    finally:
        stop(proc)
    return {
        "import_rows_per_s": rows / seconds,
        "import_peak_rss_mib": rss / 1024,
        "export_rows": count,
        "export_rows_per_s": count / export_seconds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--backends", default="postgresql,sqlite")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    source = RESULTS / "transfer-contacts.csv"
    generate(source, args.rows)
    print(f"bench: {args.rows} rows, {source.stat().st_size / 2**20:.1f} MiB")
    figures = {}
    try:
        for backend in args.backends.split(","):
            figures[backend] = bench_backend(backend, args.rows, args.workers, source)
    finally:
        source.unlink()
    print(f"\n{'backend':<12}{'import rows/s':>15}{'import peak RSS':>18}{'export rows/s':>15}")
    for backend, f in figures.items():
        print(
            f"{backend:<12}{f['import_rows_per_s']:>15,.0f}"
            f"{f['import_peak_rss_mib']:>14,.0f} MiB{f['export_rows_per_s']:>15,.0f}"
        )


if __name__ == "__main__":
    main()
