"""Dispatch in real processes: `chatcrm dispatch` and the dispatcher inside `chatcrm serve`,
SIGKILLed with deliveries committed, leased or mid-attempt; nothing is lost."""

from __future__ import annotations

import signal
import subprocess
import time
from typing import Any

import pytest

from chatcrm.db.database import Database
from chatcrm.webhooks.dispatcher import SHUTDOWN_GRACE_SECONDS
from tests.servers import serve
from tests.test_cli import chatcrm_executable
from tests.webhooks import rows
from tests.webhooks.processes import LOCAL, dispatch, environment, with_db
from tests.webhooks.receiver import Receiver, Reply

pytestmark = pytest.mark.slow


def _endpoint_with_delivery(
    database_url: str, workspace: str, url: str
) -> tuple[rows.Endpoint, str]:
    async def work(db: Database) -> tuple[rows.Endpoint, str]:
        endpoint = await rows.add_webhook(db, workspace, url)
        return endpoint, await rows.new_delivery(db, endpoint)

    return with_db(database_url, work)


def _delivery(database_url: str, endpoint: rows.Endpoint, event_id: str) -> dict[str, object]:
    async def work(db: Database) -> dict[str, object]:
        return await rows.delivery(db, endpoint, event_id)

    return with_db(database_url, work)


def test_a_dispatcher_killed_mid_attempt_leaves_the_delivery_to_another_after_its_lease(
    dispatch_url: str, sync_workspace: str, receiver: Receiver
) -> None:
    # The first attempt never gets its answer: the process is killed while waiting.
    receiver.script("/crash", Reply(200, delay=60))
    endpoint, event_id = _endpoint_with_delivery(
        dispatch_url, sync_workspace, receiver.url("/crash")
    )
    # Lease = timeout 3 s + connect timeout 1 s + margin 5 s = 9 s.
    env = {
        **LOCAL,
        "CHATCRM_WEBHOOK_TIMEOUT": "3",
        "CHATCRM_DB_CONNECT_TIMEOUT": "1",
        "CHATCRM_WEBHOOK_RETRY_SCHEDULE": "600",
    }
    with dispatch(dispatch_url, env) as first:
        [crashed] = receiver.wait_for(1, "/crash", timeout=30)
        first.kill()
    with dispatch(dispatch_url, env) as second:
        _, retried = receiver.wait_for(2, "/crash", timeout=30)
        deadline = time.monotonic() + 10
        while _delivery(dispatch_url, endpoint, event_id)["status"] != "succeeded":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        # The outcome is stored before the attempt's log line is written: wait for it too.
        while not _attempt_lines(second.log_lines(), event_id):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        lines = second.log_lines()
    # Not before the lease ran out: a live dispatcher would still have been waiting.
    assert retried.at - crashed.at >= 9 - 0.5, retried.at - crashed.at
    assert retried.headers["webhook-id"] == crashed.headers["webhook-id"] == event_id
    assert retried.body == crashed.body
    row = _delivery(dispatch_url, endpoint, event_id)
    assert (row["status"], row["attempts"]) == ("succeeded", 2)
    # One JSON log line per attempt, as the service logs.
    # (Other tests' deliveries in the shared database may be sent too: only this one's.)
    [attempt] = _attempt_lines(lines, event_id)
    assert attempt["event_id"] == event_id
    assert attempt["result"] == "succeeded"
    assert attempt["attempt"] == 2
    assert attempt["response_status"] == 200
    assert len(receiver.requests("/crash")) == 2


def test_deliveries_committed_before_a_serve_process_was_killed_are_sent_by_the_next(
    dispatch_url: str, sync_workspace: str, receiver: Receiver
) -> None:
    env = {**LOCAL, "CHATCRM_WEBHOOK_RETRY_SCHEDULE": "600"}
    with serve(dispatch_url, env={**env, "CHATCRM_DISPATCH": "0"}) as server:
        endpoint, event_id = _endpoint_with_delivery(
            dispatch_url, sync_workspace, receiver.url("/later")
        )
        time.sleep(1.5)  # CHATCRM_DISPATCH=0: this one sends nothing
        assert receiver.requests() == []
        server.process.send_signal(signal.SIGKILL)
        server.process.wait(timeout=10)
    with serve(dispatch_url, env=env) as server:
        [got] = receiver.wait_for(1, "/later", timeout=10)
        # A routine attempt's line waits in the log buffer for up to half a second (logs.py).
        deadline = time.monotonic() + 5
        while '"msg":"webhook attempt"' not in (output := server.output()):
            assert time.monotonic() < deadline, output
            time.sleep(0.1)
    assert got.headers["webhook-id"] == event_id
    assert _delivery(dispatch_url, endpoint, event_id)["status"] == "succeeded"
    assert '"msg":"webhook attempt"' in output
    assert len(receiver.requests("/later")) == 1


def test_dispatch_stops_cleanly_on_sigterm(dispatch_url: str) -> None:
    with dispatch(dispatch_url, LOCAL) as process:
        deadline = time.monotonic() + 30
        while not any(
            line.get("msg") == "webhook dispatcher started" for line in process.log_lines()
        ):
            assert time.monotonic() < deadline, process.stderr
            time.sleep(0.1)
        started = time.monotonic()
        process.popen.send_signal(signal.SIGTERM)
        assert process.popen.wait(timeout=10) == 0
        # No attempt was under way: the stop waits out no grace. (Shutting the pool and
        # the interpreter down took 3.01 s on Citus on the slowest test machine.)
        assert time.monotonic() - started < SHUTDOWN_GRACE_SECONDS
    assert process.logged("webhook dispatcher stopped")


@pytest.mark.parametrize("command", ["dispatch", "serve"])
def test_a_malformed_retry_schedule_stops_the_start_with_one_line(
    dispatch_url: str, command: str
) -> None:
    done = subprocess.run(
        [chatcrm_executable(), command, "--database-url", dispatch_url],
        capture_output=True,
        text=True,
        timeout=60,
        env=environment({"CHATCRM_WEBHOOK_RETRY_SCHEDULE": "5,5m,30"}),
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr.strip() == (
        "chatcrm: error: CHATCRM_WEBHOOK_RETRY_SCHEDULE must be comma-separated seconds, "
        "like 5,300,1800; '5m' is not a number"
    )


def _attempt_lines(lines: list[dict[str, Any]], event_id: str) -> list[dict[str, Any]]:
    return [
        line
        for line in lines
        if line.get("msg") == "webhook attempt" and line.get("event_id") == event_id
    ]
