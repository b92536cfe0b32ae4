"""docs/webhooks.md: its Python and Node verification snippets, run as written against
deliveries the dispatcher really sent (also during a rotation), accept them and refuse
tampered ones; the settings it lists are the settings there are."""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.webhooks.dispatcher import Dispatcher
from tests.webhooks import rows
from tests.webhooks.receiver import Received, Receiver

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"
BLOCK = re.compile(r"^```(\w+)\n(.*?)^```", re.MULTILINE | re.DOTALL)
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def snippet(language: str) -> str:
    [code] = [c for lang, c in BLOCK.findall(DOC.read_text()) if lang == language]
    return code


def python_verify() -> Callable[..., bool]:
    namespace: dict[str, Any] = {}
    exec(compile(snippet("python"), str(DOC), "exec"), namespace)
    verify: Callable[..., bool] = namespace["verify"]
    return verify


# Feeds the documented function cases on stdin, one JSON object per line, and prints its
# answers: {"secret", "headers", "body" (base64)} -> true/false.
NODE_HARNESS = """
const lines = require("node:fs").readFileSync(0, "utf8").trim().split("\\n");
for (const line of lines) {
  const c = JSON.parse(line);
  console.log(JSON.stringify(verify(c.secret, c.headers, Buffer.from(c.body, "base64"))));
}
"""


def node_verify(cases: list[tuple[str, dict[str, str], bytes]]) -> list[bool]:
    node = shutil.which("node")
    if node is None:
        if IN_CI:
            pytest.fail("node is not installed; CI must run the documented Node snippet")
        pytest.skip("node is not installed")
    stdin = "\n".join(
        json.dumps({"secret": s, "headers": h, "body": base64.b64encode(b).decode()})
        for s, h, b in cases
    )
    done = subprocess.run(
        [node, "-e", snippet("js") + NODE_HARNESS],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


Case = tuple[str, dict[str, str], bytes, bool]


def cases(got: Received, good: list[str], wrong: str) -> list[Case]:
    """(secret, headers, body, expected) for a real delivery: each good secret accepts it;
    a wrong secret, a changed body or id, an old timestamp are refused."""
    headers = got.headers
    old_ts = str(int(headers["webhook-timestamp"]) - 3600)
    tampered = got.body.replace(b'"recordVersion":3', b'"recordVersion":4')
    assert tampered != got.body
    return [
        *((secret, headers, got.body, True) for secret in good),
        (wrong, headers, got.body, False),
        (good[0], headers, tampered, False),
        (good[0], {**headers, "webhook-id": "evt_other"}, got.body, False),
        (good[0], {**headers, "webhook-timestamp": old_ts}, got.body, False),
    ]


async def test_both_documented_snippets_verify_real_deliveries(
    db: Database,
    workspace: str,
    receiver: Receiver,
    dispatcher_for: Callable[..., Dispatcher],
) -> None:
    plain = await rows.add_webhook(db, workspace, receiver.url("/plain"))
    old = rows.new_secret()
    rotating = await rows.add_webhook(
        db,
        workspace,
        receiver.url("/rotating"),
        previous_secret=old,
        previous_expires_at=utcnow() + timedelta(hours=24),
    )
    await rows.new_delivery(db, plain)
    await rows.new_delivery(db, rotating)
    assert await dispatcher_for().run_once() == 2
    [got_plain] = receiver.requests("/plain")
    [got_rotating] = receiver.requests("/rotating")
    assert len(got_rotating.headers["webhook-signature"].split(" ")) == 2

    all_cases = [
        *cases(got_plain, [plain.secret], rows.new_secret()),
        # During a rotation a receiver with either secret accepts the delivery.
        *cases(got_rotating, [rotating.secret, old], plain.secret),
    ]
    verify = python_verify()
    assert [verify(s, h, b) for s, h, b, _ in all_cases] == [e for *_, e in all_cases]
    assert node_verify([(s, h, b) for s, h, b, _ in all_cases]) == [e for *_, e in all_cases]


def test_the_documented_settings_are_the_settings() -> None:
    text = DOC.read_text()
    documented = set(re.findall(r"^\| `(CHATCRM_[A-Z_]+)` \|", text, re.MULTILINE))
    fields = Settings.model_fields
    ours = {f"CHATCRM_{name.upper()}" for name in fields if name.startswith("webhook_")}
    assert ours | {"CHATCRM_DISPATCH", "CHATCRM_EVENT_RETENTION_DAYS"} == documented
    defaults = Settings()
    assert f"| `{defaults.webhook_retry_schedule}` |" in text
    # Each documented default is the code's.
    for name in ("disable_after", "max_in_flight", "max_in_flight_total"):
        value = getattr(defaults, f"webhook_{name}")
        assert f"| `CHATCRM_WEBHOOK_{name.upper()}` | `{value}` |" in text, name
