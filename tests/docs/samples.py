"""What the documentation tests share: its fenced blocks, the answers they show, a fresh
`chatcrm serve` on SQLite (what `make run` starts) and the records each sample names.

A sample followed by the answer it shows must get that answer: the same `success`, `code`,
`errorCode` and message (ids, dates and numbers aside). A transcript (`$ command` then its
output) must print what it shows, the ids it printed earlier standing for the documented
ones."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.servers import Server
from tests.test_cli import chatcrm_executable

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
# What differs from one run to the next: ids, keys, event ids, dates, numbers.
VOLATILE = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|ccrm_[A-Za-z0-9_-]+|evt_[0-9a-f]{32}|whsec_[A-Za-z0-9+/=]+"
    r"|\d{4}-\d{2}-\d{2}T[0-9:.]+Z|\d+(?:\.\d+)?"
)
# Samples that cannot run as written here, and why.


@dataclass
class Block:
    path: Path
    line: int
    language: str
    text: str
    answer: str | None  # the block right after it, when it shows what this one prints

    @property
    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def blocks(path: Path) -> list[Block]:
    source = path.read_text()
    found = list(FENCE.finditer(source))
    out = []
    for i, match in enumerate(found):
        # What it prints: the blocks right after it (headers, then a body), up to a sample.
        answer, end, j = None, match.end(), i + 1
        while j < len(found) and found[j].start() == end and found[j].group(1) != "sh":
            answer = (answer or "") + found[j].group(2)
            end, j = found[j].end(), j + 1
        line = source.count("\n", 0, match.start()) + 1
        out.append(Block(path, line, match.group(1), match.group(2), answer))
    return out


# Where the documentation leaves keys out of a shown answer.
ELIDED = ((",…,", ","), (",…}", "}"), ("{…,", "{"), (",…]", "]"), ("[…,", "["))


def envelopes(text: str) -> list[dict[str, Any]]:
    """The JSON envelopes in a text (an answer, or what curl printed), in order."""
    for elided, kept in ELIDED:
        text = text.replace(elided, kept)
    decoder = json.JSONDecoder()
    out = []
    index = 0
    while (start := text.find("{", index)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            index = start + 1
            continue
        if isinstance(value, dict) and "success" in value:
            out.append(value)
        index = end
    return out


def gist(envelope: dict[str, Any]) -> tuple[Any, ...]:
    message = VOLATILE.sub("…", str(envelope.get("message")))
    return envelope.get("success"), envelope.get("code"), envelope.get("errorCode"), message


# --- the server and the records each sample names ---------------------------------------------


@dataclass
class Service:
    server: Server
    workspace_id: str
    api_key: str
    folder: Path

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        headers = {"Authorization": f"Bearer {self.api_key}", "x-workspace-id": self.workspace_id}
        answer = httpx.request(
            method, self.server.base_url + path, headers=headers, timeout=30, **kwargs
        )
        assert answer.status_code == 200, (method, path, answer.text)
        return answer.json()["data"]


_counter = iter(range(1, 1_000_000))


def variables(service: Service, sample: str) -> dict[str, str]:
    """A fresh record for each variable the sample names (so that a sample that deletes
    its contact leaves the next one another)."""
    n = next(_counter)
    values = {"BASE": service.server.base_url, "KEY": service.api_key, "WS": service.workspace_id}
    workspace = service.call("GET", f"/api/workspace/{service.workspace_id}")
    setup = f"/api/workspace/{service.workspace_id}"
    if not workspace["agents"]:
        service.call("POST", f"{setup}/agents", json={"name": "Rosa", "email": "rosa@example.com"})
        service.call("POST", f"{setup}/tags", json={"name": "Lead"})
        service.call("POST", f"{setup}/tags", json={"name": "VIP", "color": "#ff0000"})
        service.call("POST", f"{setup}/segmentations", json={"name": "Retail"})
        workspace = service.call("GET", setup)
    tags = {tag["name"]: tag["id"] for tag in workspace["tags"]}
    values["AGENT_ID"] = workspace["agents"][0]["id"]
    values.update(LEAD_TAG_ID=tags["Lead"], VIP_TAG_ID=tags["VIP"], TAG_ID=tags["VIP"])
    values["SEGMENTATION_ID"] = workspace["segmentations"][0]["id"]
    contact = service.call(
        "POST",
        "/api/contact",
        json={
            "name": f"Sample {n}",
            "email": f"sample{n}@example.com",
            "internalWhatsappNumber": f"51900{n:06d}",
            "assignedAgentId": values["AGENT_ID"],
            "variables": [{"name": "plan", "value": "gold"}],
            "tags": [tags["VIP"]],
        },
    )
    values["CONTACT_ID"] = contact_id = contact["contact"]["id"]
    stages = workspace["opportunityStages" if "/api/opportunity" in sample else "contactStages"]
    values["STAGE_ID"] = stages[-1]["id"]
    if "$DUPLICATE_ID" in sample:
        duplicate = service.call(
            "POST", "/api/contact", json={"name": "Again", "email": f"again{n}@example.com"}
        )
        values["DUPLICATE_ID"] = duplicate["contact"]["id"]
    if 'If-Match: "3"' in sample:  # the contact at its third version
        for name in ("Second", "Third"):
            service.call(
                "PUT",
                "/api/contact",
                params={"id": contact_id, "workspaceId": values["WS"]},
                json={"name": name},
            )
    if "$OPPORTUNITY_ID" in sample:
        opportunity = service.call(
            "POST", "/api/opportunity", json={"name": f"Deal {n}", "amount": 100}
        )
        values["OPPORTUNITY_ID"] = opportunity["opportunity"]["id"]
    for kind in ("contact", "opportunity"):
        if f"/api/{kind}/${kind.upper()}_ID/restore" in sample:  # a deleted record
            service.call("DELETE", f"/api/{kind}/{values[kind.upper() + '_ID']}")
    if "$HOOK_ID" in sample:
        values.update(_webhook(service, deliveries="deliveries" in sample or "$EVENT_ID" in sample))
    if "$CHANNEL_ID" in sample or "/messages -H" in sample:
        values.update(_channel(service))
        # The contact wrote within 24 h: a reply may be text.
        service.call(
            "POST",
            f"/api/contact/{contact_id}/messages/record",
            json={"direction": "in", "text": "Hi, is the blue one in stock?"},
        )
    if '"phoneNumberId": "106540352242922"' in sample:  # the sample that creates it
        for channel in service.call("GET", "/api/channel")["data"]:
            service.call("DELETE", f"/api/channel/{channel['id']}")
    if "$MESSAGE_ID" in sample:
        recorded = service.call(
            "POST",
            f"/api/contact/{contact_id}/messages/record",
            json={"direction": "in", "text": "Hola"},
        )
        values["MESSAGE_ID"] = recorded["id"]
    return values


def _webhook(service: Service, *, deliveries: bool) -> dict[str, str]:
    """A new endpoint; with `deliveries`, two of them queued and the token of the second."""
    hook = service.call("POST", "/api/webhook", json={"url": "https://hooks.example.com/sample"})
    values = {"HOOK_ID": hook["id"]}
    if deliveries:
        service.call(
            "POST",
            "/api/contact",
            json={"name": "Queued", "email": f"q{next(_counter)}@example.com"},
        )
        service.call("POST", f"/api/webhook/{hook['id']}/test")
        # The contact's delivery is queued by the publisher, after its commit: wait for it
        # (on a loaded machine the first page held only the test's, and no token).
        deadline = time.monotonic() + 10
        while True:
            first = service.call(
                "GET", f"/api/webhook/{hook['id']}/deliveries", params={"pageSize": 1}
            )
            if first["continuationToken"] or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        values["TOKEN"] = first["continuationToken"]
        values["EVENT_ID"] = first["data"][0]["eventId"]
    return values


# The channel docs/api.md 11.10 creates (Meta's phone number id is unique on a server).
CHANNEL = {
    "type": "whatsapp",
    "name": "Sales line",
    "phoneNumberId": "106540352242922",
    "accessToken": "EAAG-sample",
    "appSecret": "3f9c0a5d2b7e4f1a8c6d0e9b2a4f7c1d",
}


def _channel(service: Service) -> dict[str, str]:
    """The workspace's channel, made when it has none (a sample may have deleted it)."""
    channels = service.call("GET", "/api/channel")
    listed = channels["data"]
    if not listed:
        listed = [service.call("POST", "/api/channel", json=CHANNEL)["channel"]]
    return {"CHANNEL_ID": listed[0]["id"], "APP_SECRET": CHANNEL["appSecret"]}


def run_shell(
    block: Block, values: dict[str, str], cwd: Path, *, merged: bool = False
) -> subprocess.CompletedProcess[str]:
    """The sample in bash; `merged`: stderr into stdout, in the order written (a terminal's)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")}
    environment.update(values)
    environment["PATH"] = f"{Path(chatcrm_executable()).parent}{os.pathsep}{environment['PATH']}"
    return subprocess.run(
        ["bash", "-c", block.text],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merged else subprocess.PIPE,
        text=True,
        timeout=60,
        env=environment,
        cwd=cwd,
        check=False,
    )


# --- transcripts: `$ command`, then what it prints ------------------------------------------------


def transcript(text: str) -> list[tuple[str, str]]:
    """(command, the output shown after it) pairs of a `$ …` block."""
    pairs: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            command = line[2:]
            while command.endswith("\\") and i + 1 < len(lines):
                i += 1
                command = command[:-1].rstrip() + " " + lines[i].strip()
            pairs.append((command, []))
        elif pairs and line.strip():
            pairs[-1][1].append(line)
        i += 1
    return [(command, "\n".join(shown)) for command, shown in pairs]


class Ids:
    """The ids and keys a transcript shows, each standing for the one this run printed."""

    def __init__(self) -> None:
        self.actual: dict[str, str] = {}

    def apply(self, text: str) -> str:
        for shown, actual in self.actual.items():
            text = text.replace(shown, actual)
        return text

    def match(self, shown: str, printed: str) -> bool:
        """Does `printed` read as `shown`, its ids aside? Learns the ids it shows."""
        skeleton = VOLATILE.sub("\0", shown)
        if skeleton != VOLATILE.sub("\0", printed):
            return False
        for a, b in zip(VOLATILE.findall(shown), VOLATILE.findall(printed), strict=True):
            if len(a) < 20:  # a count or an exit status: as shown
                if a != b:
                    return False
            elif self.actual.setdefault(a, b) != b:  # an id, a key, a date: the same each time
                return False
        return True


def run_transcript(block: Block, values: dict[str, str], cwd: Path, ids: Ids) -> None:
    for command, shown in transcript(block.text):
        sample = Block(block.path, block.line, "sh", ids.apply(command), None)
        printed = run_shell(sample, values, cwd, merged=True).stdout.strip()
        assert ids.match(shown, printed), (block.where, command, shown, printed)
