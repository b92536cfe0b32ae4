"""`chatcrm serve --workers N` killed outright (SIGKILL: it cannot stop its workers) leaves
no worker behind: each stops within seconds, and the port is free for the restart."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from chatcrm.ops.orphans import stop_when_orphaned
from tests.servers import serve

pytestmark = pytest.mark.slow


def _children(pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:  # the field after the state: the parent's pid
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_workers_stop_when_serve_is_killed(tmp_path: Path) -> None:
    with serve(f"sqlite:///{tmp_path / 'orphans.db'}", workers=2) as server:
        # uvicorn's supervisor starts the workers (and, for them, a resource tracker).
        workers = {
            pid
            for pid in _children(server.process.pid)
            if b"multiprocessing.resource_tracker" not in Path(f"/proc/{pid}/cmdline").read_bytes()
        }
        assert len(workers) == 2, workers
        os.kill(server.process.pid, signal.SIGKILL)
        server.process.wait(timeout=10)
        deadline = time.monotonic() + 15
        while any(_alive(pid) for pid in workers):
            assert time.monotonic() < deadline, [pid for pid in workers if _alive(pid)]
            time.sleep(0.2)
        with pytest.raises(httpx.TransportError):
            httpx.get(f"{server.base_url}/health", timeout=2)


def _watch_after_a_while() -> None:
    time.sleep(1)  # the parent is gone before the worker starts watching it
    asyncio.run(stop_when_orphaned(every=0.1))


_START_AND_DIE = """
import multiprocessing, os, sys
from tests.test_serve_orphans import _watch_after_a_while
worker = multiprocessing.get_context("spawn").Process(target=_watch_after_a_while)
worker.start()
print(worker.pid, flush=True)
os._exit(0)
"""


def test_a_worker_whose_parent_died_while_it_started_stops_too() -> None:
    """Its parent is the one that started it, not whatever `getppid` names when it first
    looks (init, once the parent is gone)."""
    root = Path(__file__).resolve().parent.parent
    started = subprocess.run(
        [sys.executable, "-c", _START_AND_DIE], cwd=root, capture_output=True, text=True, timeout=30
    )
    worker = int(started.stdout.split()[0])
    deadline = time.monotonic() + 20
    try:
        while _alive(worker):
            assert time.monotonic() < deadline, "the worker outlived its parent"
            time.sleep(0.1)
    finally:
        if _alive(worker):
            os.kill(worker, signal.SIGKILL)
