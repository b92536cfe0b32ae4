"""`chatcrm serve --workers 2` on SQLite: what each worker keeps apart and what they add up.

Metrics are summed over the workers (ops/metrics.py, Prometheus's multiprocess mode), so a
scrape answered by either worker counts every request; a key's rate bucket is one for
the node, in a file the workers share (api/node_buckets.py, operations.md 4.5), so
together they allow the key's budget exactly, whichever worker a connection reaches."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.servers import Server, serve

pytestmark = pytest.mark.slow


def _fresh(method: str, url: str, **kwargs: object) -> httpx.Response:
    """One request on a connection of its own, so that either worker may accept it."""
    with httpx.Client(timeout=10) as client:
        return client.request(method, url, **kwargs)  # type: ignore[arg-type]


def _ready_requests(metrics_text: str) -> float:
    total = 0.0
    for family in text_string_to_metric_families(metrics_text):
        if family.name != "chatcrm_http_requests":
            continue
        for sample in family.samples:
            if sample.name.endswith("_total") and sample.labels.get("route") == "/ready":
                total += sample.value
    return total


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workers")


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[Server]:
    # A key gets 2 requests a second with bursts of 4, from one bucket for both workers.
    # `serve` makes its metrics folder with tempfile, so it lands in `folder`.
    environment = {"TMPDIR": str(folder), "CHATCRM_RATE_LIMIT": "2"}
    with serve(f"sqlite:///{folder / 'workers.db'}", workers=2, env=environment) as server:
        yield server


def test_a_scrape_of_either_worker_counts_the_requests_of_both(
    server: Server, folder: Path
) -> None:
    [metrics] = folder.glob("chatcrm-metrics-*")
    sent = 0
    # Until both workers have answered some (each process that counted a request has a
    # counter file of its own; the kernel hands each new connection to whichever worker
    # accepts it first, so 400 connections make missing one practically impossible).
    while sent < 20 or (sent < 400 and len(list(metrics.glob("counter_*.db"))) < 2):
        assert _fresh("GET", f"{server.base_url}/ready").status_code == 200
        sent += 1
    assert len(list(metrics.glob("counter_*.db"))) == 2, server.output()
    for _ in range(8):  # scrapes on fresh connections reach both workers too
        scrape = _fresh("GET", f"{server.base_url}/metrics")
        assert scrape.status_code == 200
        assert _ready_requests(scrape.text) == sent, scrape.text


def test_two_workers_share_a_key_s_budget_without_overshoot(server: Server) -> None:
    workspace_id, key = server.demo()
    headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace_id}
    started = time.monotonic()
    answers = [
        _fresh("GET", f"{server.base_url}/api/workspace/{workspace_id}", headers=headers)
        for _ in range(40)
    ]
    elapsed = time.monotonic() - started
    statuses = [answer.status_code for answer in answers]
    assert set(statuses) <= {200, 429}, statuses
    # One bucket for the node: the key's whole burst, whichever worker answered.
    assert {answer.headers["RateLimit-Limit"] for answer in answers} == {"4"}
    allowed = statuses.count(200)
    # The burst at least, and never more than the burst and rate over the span.
    assert 4 <= allowed <= 4 + 2 * elapsed, (allowed, elapsed)
    refused = [answer for answer in answers if answer.status_code == 429]
    assert refused and all("Retry-After" in answer.headers for answer in refused)


def test_one_connection_gets_the_key_s_whole_burst(server: Server) -> None:
    """A client sending everything over one keep-alive connection reaches one worker: it
    still has the key's whole budget (contract I), not that worker's share of it."""
    workspace_id, key = server.demo()
    headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace_id}
    time.sleep(2.5)  # the bucket full again after the other test: 2/s, bursts of 4
    with httpx.Client(timeout=10, headers=headers) as client:
        statuses = [
            client.get(f"{server.base_url}/api/workspace/{workspace_id}").status_code
            for _ in range(6)
        ]
    assert statuses[:4] == [200] * 4, statuses
    assert 429 in statuses[4:], statuses


def _pool_open(metrics_text: str) -> float:
    for family in text_string_to_metric_families(metrics_text):
        if family.name == "chatcrm_db_pool_connections_open":
            return sum(sample.value for sample in family.samples)
    raise AssertionError(metrics_text)


def _live_pids(metrics: Path) -> set[int]:
    return {int(p.stem.rsplit("_", 1)[-1]) for p in metrics.glob("gauge_live*_*.db")}


def test_a_killed_worker_s_gauges_leave_the_sum(tmp_path: Path) -> None:
    """A worker killed (out of memory, say) never marked itself dead: its pool gauges were
    added to the live workers' at every scrape, for good (operations.md 4.9)."""
    environment = {"TMPDIR": str(tmp_path)}
    with serve(f"sqlite:///{tmp_path / 'killed.db'}", workers=2, env=environment) as server:
        [metrics] = tmp_path.glob("chatcrm-metrics-*")
        deadline = time.monotonic() + 30
        while len(_live_pids(metrics)) < 2:  # each worker sets its gauges once a second
            assert time.monotonic() < deadline, server.output()
            _fresh("GET", f"{server.base_url}/ready")
            time.sleep(0.2)
        victim = min(_live_pids(metrics))
        os.kill(victim, signal.SIGKILL)
        while len(_live_pids(metrics) - {victim}) < 2:  # the supervisor starts another
            assert time.monotonic() < deadline, server.output()
            time.sleep(0.2)
        scrape = _fresh("GET", f"{server.base_url}/metrics")
        assert scrape.status_code == 200
        assert victim not in _live_pids(metrics), server.output()
        _pool_open(scrape.text)  # still reported, now over the two live workers only
