"""Prometheus metrics: requests and latency by route and status, database pool use.

With several worker processes (`chatcrm serve --workers N`) the client library's
multiprocess mode is used: `serve` points PROMETHEUS_MULTIPROC_DIR at a fresh directory
before the workers start, and a scrape of any worker reports the sum over all of them.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from prometheus_client import multiprocess as prom_multiprocess

MULTIPROCESS = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))

REQUESTS = Counter(
    "chatcrm_http_requests_total",
    "HTTP requests answered, by method, route template and status.",
    ["method", "route", "status"],
)
LATENCY = Histogram(
    "chatcrm_http_request_duration_seconds",
    "Time from request to response, by method and route template.",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
POOL_IN_USE = Gauge(
    "chatcrm_db_pool_connections_in_use",
    "Database connections checked out of the pool.",
    multiprocess_mode="livesum",
)
POOL_SIZE = Gauge(
    "chatcrm_db_pool_connections_open",
    "Database connections open in the pool (in use or idle).",
    multiprocess_mode="livesum",
)


# Label children looked up once per (method, route, status): labels() costs microseconds.
_children: dict[tuple[str, str, int], tuple[Any, Any]] = {}


def observe(method: str, route: str, status: int, seconds: float) -> None:
    key = (method, route, status)
    child = _children.get(key)
    if child is None:
        child = (REQUESTS.labels(method, route, str(status)), LATENCY.labels(method, route))
        if len(_children) < 10_000:  # routes are templates, so this stays small
            _children[key] = child
    child[0].inc()
    child[1].observe(seconds)


PoolStats = Callable[[], tuple[int, int]]  # (connections in use, connections open)
# Often enough for a scrape of another worker (multiprocess mode reads each process's
# last values); the scraped process sets its own at the scrape.
POOL_EVERY_SECONDS = 1.0


def set_pool(stats: PoolStats) -> None:
    in_use, open_ = stats()
    POOL_IN_USE.set(in_use)
    POOL_SIZE.set(open_)


async def pool_forever(stats: PoolStats) -> None:
    """Keep this process's pool gauges current, off the requests' path (counting the
    pool's open connections walks all of its slots: about 10 µs a request)."""
    while True:
        set_pool(stats)
        await asyncio.sleep(POOL_EVERY_SECONDS)


def _forget_dead_workers() -> None:
    """A worker killed (out of memory, SIGKILL) never marks itself dead: its pool gauges
    would be added to the live workers' for good (operations.md 4.9: summed over live
    workers). Each process whose live gauges' file is there but that no longer runs is
    marked dead at a scrape (its counters stay: what it answered was answered)."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if not folder:
        return
    pids: set[int] = set()
    for path in Path(folder).glob("gauge_live*_*.db"):
        number = path.stem.rsplit("_", 1)[-1]
        if number.isdigit():
            pids.add(int(number))
    for pid in pids:
        try:
            os.kill(pid, 0)  # no signal sent: whether the process exists
        except ProcessLookupError:
            prom_multiprocess.mark_process_dead(pid)
        except PermissionError:
            pass  # another user's process of that number: alive


def render() -> tuple[bytes, str]:
    if MULTIPROCESS:
        _forget_dead_workers()
        registry = CollectorRegistry()
        prom_multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST


def process_exited(pid: int) -> None:
    if MULTIPROCESS:
        prom_multiprocess.mark_process_dead(pid)
