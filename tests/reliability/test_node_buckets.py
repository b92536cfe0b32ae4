"""A key's one budget across the worker processes of a SQLite node (contract I), kept in a
memory-mapped file beside the database (api/node_buckets.py): processes that open the same
file spend one bucket between them, exactly."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

from chatcrm.api.node_buckets import MAGIC, SIZE, NodeRateLimiter, buckets_file


def test_two_limiters_of_one_file_spend_one_bucket(tmp_path: Path) -> None:
    path = tmp_path / "chatcrm.db-rate"
    one, two = NodeRateLimiter(path), NodeRateLimiter(path)
    try:
        decisions = [
            (one if i % 2 else two).take_here("key-a", rate=0.001, burst=10) for i in range(14)
        ]
        assert [d.allowed for d in decisions if d] == [True] * 10 + [False] * 4
        last = decisions[9]
        assert last is not None and (last.limit, last.remaining) == (10, 0)
        # Another key has its own bucket; no rate is no limit.
        other = two.take_here("key-b", rate=0.001, burst=10)
        assert other is not None and (other.allowed, other.remaining) == (True, 9)
        assert one.take_here("key-a", rate=0, burst=10) is None
    finally:
        one.close()
        two.close()


def test_the_bucket_refills_at_its_rate_and_outlives_its_processes(tmp_path: Path) -> None:
    path = tmp_path / "db-rate"
    first = NodeRateLimiter(path)
    for _ in range(4):
        assert first.take_here("k", rate=20, burst=4).allowed  # type: ignore[union-attr]
    refused = first.take_here("k", rate=20, burst=4)
    assert refused is not None and not refused.allowed and refused.retry_after == 1
    first.close()
    time.sleep(0.12)  # 20/s: two tokens back
    again = NodeRateLimiter(path)
    try:
        allowed = [again.take_here("k", rate=20, burst=4).allowed for _ in range(3)]  # type: ignore[union-attr]
        assert allowed == [True, True, False]
    finally:
        again.close()


def test_a_file_of_another_layout_is_made_again(tmp_path: Path) -> None:
    path = tmp_path / "x.db-rate"
    path.write_bytes(b"not ours")
    limiter = NodeRateLimiter(path)
    try:
        assert path.stat().st_size == SIZE and path.read_bytes()[: len(MAGIC)] == MAGIC
        assert limiter.take_here("k", rate=1, burst=2).allowed  # type: ignore[union-attr]
    finally:
        limiter.close()
    assert buckets_file("./data/chatcrm.db") == Path("data/chatcrm.db-rate").absolute()


def _spend(path: str, count: int, out: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    limiter = NodeRateLimiter(Path(path))
    allowed = 0
    for _ in range(count):
        decision = limiter.take_here("shared", rate=0.001, burst=50)
        allowed += bool(decision and decision.allowed)
    limiter.close()
    out.put(allowed)


def test_processes_checking_at_once_never_spend_more_than_the_bucket(tmp_path: Path) -> None:
    """Four processes, 40 checks each, at the same time, of a bucket of 50: 50 allowed in
    all (each check is made under the file's lock)."""
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    path = str(tmp_path / "db-rate")
    workers = [context.Process(target=_spend, args=(path, 40, out)) for _ in range(4)]
    for worker in workers:
        worker.start()
    allowed = [out.get(timeout=60) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
    assert sum(allowed) == 50, allowed
