"""Prometheus metrics: requests and latency by route and status, database pool use.

With several worker processes (`chatcrm serve --workers N`) the client library's
multiprocess mode is used: `serve` points PROMETHEUS_MULTIPROC_DIR at a fresh directory
before the workers start, and a scrape of any worker reports the sum over all of them.
"""

from __future__ import annotations

import os
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


def set_pool(in_use: int, open_: int) -> None:
    POOL_IN_USE.set(in_use)
    POOL_SIZE.set(open_)


def render() -> tuple[bytes, str]:
    if MULTIPROCESS:
        registry = CollectorRegistry()
        prom_multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(), CONTENT_TYPE_LATEST


def process_exited(pid: int) -> None:
    if MULTIPROCESS:
        prom_multiprocess.mark_process_dead(pid)
