"""A key's one rate budget shared by the worker processes of one SQLite node (contract I:
"one budget per key across every process").

PostgreSQL keeps each key's bucket in the database (auth/budgets.py). On SQLite a check
written to the database would take its one write lock and, by default, an fsync: more
than a whole GET (operations.md 4.5). The processes of a SQLite node share one machine, so
their buckets live in a small memory-mapped file beside the database (`<file>-rate`, as
SQLite keeps `<file>-wal` and `<file>-shm` there), each check made under an exclusive
`flock` of that file: a few microseconds, and the workers together spend exactly the
key's budget, whichever of them a connection reaches.

The file: a header, then `SLOTS` slots of (the key id's digest, tokens, the time of the
last check), a key found by its digest over `PROBE` slots from the one it hashes to. A key
that finds neither its slot nor a free one takes the slot checked longest ago among them:
that key starts full again (with more keys in use at once than slots, a key may then get
up to one burst more). The buckets outlive a restart, as they do in PostgreSQL.
"""

from __future__ import annotations

import fcntl
import hashlib
import math
import mmap
import os
import struct
import time
from pathlib import Path

from chatcrm.api.ratelimit import Decision, LocalLimiter

MAGIC = b"chatcrm-rate-v1\n"  # the header's first 16 bytes
SLOTS = 16_384
PROBE = 16
_HEADER = 64
_SLOT = struct.Struct("<16sdd")  # digest, tokens, at (epoch seconds)
_FREE = bytes(16)
SIZE = _HEADER + SLOTS * _SLOT.size


def buckets_file(database_path: str) -> Path:
    """Where the buckets of the node serving this SQLite file live."""
    path = Path(database_path).expanduser().absolute()
    return path.with_name(path.name + "-rate")


class NodeRateLimiter(LocalLimiter):
    """One bucket per key for every process of the node that opens the same file."""

    def __init__(self, path: Path) -> None:
        """Opens (creating when missing) the file: OSError when it cannot be."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                # Made, or made again when it is not ours (another size, another layout):
                # every key then starts full.
                if os.fstat(fd).st_size != SIZE or os.pread(fd, len(MAGIC), 0) != MAGIC:
                    os.ftruncate(fd, 0)
                    os.ftruncate(fd, SIZE)
                    os.pwrite(fd, MAGIC, 0)
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
            self._map = mmap.mmap(fd, SIZE)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def take_here(self, key_id: str, *, rate: float, burst: float) -> Decision | None:
        if rate <= 0:
            return None
        capacity = max(1.0, burst)
        digest = hashlib.blake2b(key_id.encode(), digest_size=16).digest()
        start = int.from_bytes(digest[:4], "little") % SLOTS
        now = time.time()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            offset = self._slot(digest, start)
            found, tokens, at = _SLOT.unpack_from(self._map, offset)
            if found != digest:
                tokens, at = capacity, now
            # A clock set back refills nothing, and the time kept never moves back.
            tokens = min(capacity, tokens + max(0.0, now - at) * rate)
            allowed = tokens >= 1.0
            if allowed:
                tokens -= 1.0
            _SLOT.pack_into(self._map, offset, digest, tokens, max(at, now))
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        return Decision.of(allowed=allowed, tokens=tokens, capacity=capacity, rate=rate)

    def _slot(self, digest: bytes, start: int) -> int:
        """The offset of the key's slot: its own, a free one, or the one checked longest
        ago among those probed."""
        oldest, oldest_at = 0, math.inf
        for i in range(PROBE):
            offset = _HEADER + ((start + i) % SLOTS) * _SLOT.size
            found, _, at = _SLOT.unpack_from(self._map, offset)
            if found in (digest, _FREE):
                return offset
            if at < oldest_at:
                oldest, oldest_at = offset, at
        return oldest

    def close(self) -> None:
        self._map.close()
        os.close(self._fd)
