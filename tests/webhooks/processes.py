"""`chatcrm dispatch` processes for tests, and the rows they work on, from sync tests."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chatcrm.config import Settings
from chatcrm.db.database import Database
from tests.test_cli import chatcrm_executable

T = TypeVar("T")

# Env of a dispatcher that can reach the receiver on 127.0.0.1.
LOCAL = {"CHATCRM_WEBHOOK_ALLOW_PRIVATE": "1", "CHATCRM_LOG_LEVEL": "info"}


def with_db(database_url: str, work: Callable[[Database], Coroutine[Any, Any, T]]) -> T:
    """Run `work(db)` on a database handle of its own, from a test without an event loop."""

    async def run() -> T:
        db = Database(Settings(database_url=database_url))
        try:
            return await work(db)
        finally:
            await db.dispose()

    return asyncio.run(run())


@dataclass
class Process:
    popen: subprocess.Popen[str]
    stderr: list[str] = field(default_factory=list)

    def log_lines(self) -> list[dict[str, Any]]:
        """The JSON log lines written so far."""
        out = []
        for line in list(self.stderr):
            with suppress(ValueError):
                out.append(json.loads(line))
        return out

    def logged(self, message: str) -> bool:
        return any(line.get("msg") == message for line in self.log_lines())

    def kill(self) -> None:
        with suppress(ProcessLookupError):
            os.killpg(self.popen.pid, signal.SIGKILL)
        self.popen.wait(timeout=10)


def environment(env: dict[str, str]) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")}
    out.update(env)
    return out


@contextmanager
def dispatch(database_url: str, env: dict[str, str]) -> Iterator[Process]:
    """`chatcrm dispatch` until the block ends (SIGTERM, then SIGKILL if need be)."""
    popen = subprocess.Popen(
        [chatcrm_executable(), "dispatch", "--database-url", database_url],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(env),
        start_new_session=True,
    )
    process = Process(popen)
    stream = popen.stderr
    assert stream is not None
    reader = threading.Thread(
        target=lambda: process.stderr.extend(iter(stream.readline, "")), daemon=True
    )
    reader.start()
    try:
        yield process
    finally:
        if popen.poll() is None:
            popen.send_signal(signal.SIGTERM)
            with suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=20)
        process.kill()
        reader.join(timeout=5)
