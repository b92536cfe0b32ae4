"""What the test set-up installs on the machine (Debian's chromium, Citus) is installed
once at a time: test processes running side by side (`pytest -n`) take this lock first,
so two `apt-get` runs never fight over dpkg's, and the second finds the work done."""

from __future__ import annotations

import fcntl
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCK = Path(tempfile.gettempdir()) / "chatcrm-tests-install.lock"


@contextmanager
def installing() -> Iterator[None]:
    """Hold the machine-wide install lock for the block."""
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
