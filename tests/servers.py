"""Real `chatcrm serve` processes for tests that speak to the service over a socket."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import httpx

from tests.test_cli import chatcrm_executable

START_TIMEOUT = 90.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Server:
    process: subprocess.Popen[str]
    base_url: str
    stdout: list[str] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)

    def output(self) -> str:
        return "".join(self.stdout) + "\n--- stderr ---\n" + "".join(self.stderr)

    def demo(self) -> tuple[str, str]:
        """(workspace id, API key) announced on stdout."""
        text = "".join(self.stdout)
        workspace = re.search(r"^\s*workspace:\s*(\S+)\s*$", text, re.MULTILINE)
        key = re.search(r"^\s*API key:\s*(ccrm_\S+)\s*$", text, re.MULTILINE)
        assert workspace and key, self.output()
        return workspace.group(1), key.group(1)


def _drain(stream: Any, sink: list[str]) -> None:
    for line in iter(stream.readline, ""):
        sink.append(line)
    stream.close()


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)
    # The worker processes are in the session this test started; leave none behind.
    with suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


@contextmanager
def serve(
    database_url: str, *, workers: int = 1, env: dict[str, str] | None = None
) -> Iterator[Server]:
    with serve_nodes(database_url, 1, workers=workers, env=env) as [server]:
        yield server


@contextmanager
def serve_nodes(
    database_url: str, count: int, *, workers: int = 1, env: dict[str, str] | None = None
) -> Iterator[list[Server]]:
    """`count` servers on one database, started together: a start is mostly the imports
    of its processes, which then overlap (and the nodes migrate at once, as nodes do)."""
    started: list[tuple[Server, list[threading.Thread]]] = []
    try:
        for _ in range(count):
            started.append(_start(database_url, workers, env))
        for server, _readers in started:
            _wait_until_up(server)
        yield [server for server, _readers in started]
    finally:
        for server, readers in started:
            _stop(server.process)
            for reader in readers:
                reader.join(timeout=5)


def _start(
    database_url: str, workers: int, env: dict[str, str] | None
) -> tuple[Server, list[threading.Thread]]:
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")}
    environment.update(env or {})
    process = subprocess.Popen(
        [
            chatcrm_executable(),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--database-url",
            database_url,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        start_new_session=True,
    )
    server = Server(process, f"http://127.0.0.1:{port}")
    readers = [
        threading.Thread(target=_drain, args=(process.stdout, server.stdout), daemon=True),
        threading.Thread(target=_drain, args=(process.stderr, server.stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    return server, readers


def _wait_until_up(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while True:
        assert server.process.poll() is None, f"the server exited early:\n{server.output()}"
        assert time.monotonic() < deadline, f"the server did not start:\n{server.output()}"
        try:
            if httpx.get(f"{server.base_url}/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
