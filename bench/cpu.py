"""CPU time spent per request, read from /proc: what a process tree (the server under
test: its parent and workers) and PostgreSQL's processes (every backend) used between two
readings. On a machine whose cores the server, the database and the load generator
share, requests per second move by a quarter from one run to the next; the CPU a request
costs moves much less, so a change's effect shows in it where throughput cannot show it.
Linux only; elsewhere the readings are None."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stats() -> dict[int, tuple[str, int, float]]:
    """Every process's (name, parent pid, CPU seconds used so far)."""
    out: dict[int, tuple[str, int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # it ended meanwhile
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        fields = text[text.rindex(")") + 2 :].split()
        # After the name: state, ppid, … utime (the 12th), stime (the 13th).
        out[int(entry.name)] = (name, int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK)
    return out


@dataclass(frozen=True)
class Reading:
    server: float  # CPU seconds of the server's process tree
    database: float  # CPU seconds of every process named postgres


def read(server_pid: int) -> Reading | None:
    if not Path("/proc/self/stat").exists():
        return None
    stats = _stats()
    tree = {server_pid}
    grew = True
    while grew:  # the workers, and anything they started
        found = {pid for pid, (_, ppid, _) in stats.items() if ppid in tree} - tree
        tree |= found
        grew = bool(found)
    server = sum(stats[pid][2] for pid in tree if pid in stats)
    database = sum(cpu for name, _, cpu in stats.values() if name.startswith("postgres"))
    return Reading(server, database)


def per_request(
    before: Reading | None, after: Reading | None, requests: int
) -> tuple[float | None, float | None]:
    """(server, database) CPU µs per request between two readings."""
    if before is None or after is None or requests <= 0:
        return None, None
    return (
        round((after.server - before.server) / requests * 1e6),
        round((after.database - before.database) / requests * 1e6),
    )
