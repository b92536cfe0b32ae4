"""`chatcrm serve` leaves no log line behind when it stops: the request lines it buffers and
uvicorn's shutdown lines all reach stderr, whichever signal stops it and however many
worker processes it runs (logs.py, BufferedStderrHandler)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
import uuid
from contextlib import suppress
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.servers import START_TIMEOUT, free_port
from tests.test_cli import chatcrm_executable

pytestmark = pytest.mark.slow


def _collect(stream: Any, sink: list[str]) -> None:
    for line in iter(stream.readline, ""):
        sink.append(line)
    stream.close()


def _started(lines: list[str]) -> int:
    return sum("Application startup complete." in line for line in lines)


@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_the_last_request_and_shutdown_lines_reach_stderr(
    tmp_path: Path, workers: int, signum: signal.Signals
) -> None:
    port = free_port()
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")}
    metrics = tmp_path / "tmp"
    metrics.mkdir()
    environment["TMPDIR"] = str(metrics)  # where `serve` makes its metrics folder
    process = subprocess.Popen(
        [
            chatcrm_executable(),
            "serve",
            "--port",
            str(port),
            "--workers",
            str(workers),
            "--database-url",
            f"sqlite:///{tmp_path / 'logs.db'}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
        start_new_session=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=_collect, args=(process.stderr, lines), daemon=True)
    reader.start()
    request_id = f"last-{uuid.uuid4().hex}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while _started(lines) < workers:  # every worker, so that every worker must stop
            assert process.poll() is None, "".join(lines)
            assert time.monotonic() < deadline, "".join(lines)
            time.sleep(0.1)
        response = httpx.get(
            f"http://127.0.0.1:{port}/health", headers={"X-Request-Id": request_id}, timeout=10
        )
        assert response.status_code == 200
        # At once: the request line is still in the buffer (flushed every 0.5 s).
        if signum == signal.SIGINT:
            os.killpg(process.pid, signum)  # Ctrl+C reaches the whole process group
        else:
            process.send_signal(signum)  # as a supervisor stops the service
        process.wait(timeout=30)
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        reader.join(timeout=10)

    records = [json.loads(line) for line in lines]  # every line is one JSON object
    messages = [record["msg"] for record in records]
    assert any(
        record["logger"] == "chatcrm.request" and record.get("request_id") == request_id
        for record in records
    ), messages
    started = [m.split("[")[1].rstrip("]") for m in messages if m.startswith("Started server")]
    assert len(started) == workers, messages
    # The first start's migrations are one line, not alembic's 35 around the demo's.
    assert not [r for r in records if r["logger"].startswith("alembic")], messages
    [migrated] = [r["msg"] for r in records if r["logger"] == "chatcrm.migrate"]
    assert migrated.startswith("database migrated from an empty database to revision ")
    for pid in started:
        assert f"Finished server process [{pid}]" in messages, messages
    # The metrics folder is removed however the service was stopped (docs/operations.md
    # 1.2): with one worker, SIGTERM used to end the process before it was.
    assert list(metrics.iterdir()) == []
    # A stop asked for is a success, however asked (a service manager reads 143 as failed).
    assert process.returncode == 0, process.returncode
    # The very last line of the run is uvicorn's last word.
    if workers == 1:
        assert messages[-1] == f"Finished server process [{started[0]}]", messages
    else:
        assert messages[-1].startswith("Stopping parent process"), messages


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stop_ends_a_long_poll_at_once(tmp_path: Path, workers: int) -> None:
    """A feed read waiting for events answers what it has (an empty page) when the server
    is asked to stop, instead of holding the stop for its whole `wait`."""
    from tests.servers import serve

    with serve(f"sqlite:///{tmp_path / 'poll.db'}", workers=workers) as server:
        workspace, key = server.demo()
        headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace}
        answers: list[httpx.Response] = []

        def poll() -> None:
            url = f"{server.base_url}/api/events"
            answers.append(
                httpx.get(url, params={"after": "end", "wait": "30"}, headers=headers, timeout=40)
            )

        poller = threading.Thread(target=poll)
        asked = time.monotonic()
        poller.start()
        time.sleep(2)  # the read is waiting by now
        assert answers == []
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=25)
        poller.join(timeout=5)
        # Well before the 30 s the read would otherwise have waited.
        assert time.monotonic() - asked < 20
        assert server.process.returncode == 0, server.output()
    (answer,) = answers
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"]["events"] == []
