"""The documentation runs: every shell sample of docs/api.md and the README, the import
sample of docs/import.md and the SDK samples of docs/sdk.md, run as written against a fresh
`chatcrm serve` on SQLite (what `make run` starts), with the variables they name (`$BASE`,
`$KEY`, `$WS`, `$CONTACT_ID`…) set to records made for each sample.

A sample followed by the answer it shows must get that answer: the same `success`, `code`,
`errorCode` and message (ids, dates and numbers aside). A transcript (`$ command` then its
output) must print what it shows, the ids it printed earlier standing for the documented
ones. A sample that cannot run here says why in SKIPPED."""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import new_account
from tests.servers import Server, serve
from tests.test_cli import chatcrm_executable

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)
# What differs from one run to the next: ids, keys, event ids, dates, numbers.
VOLATILE = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|ccrm_[A-Za-z0-9_-]+|evt_[0-9a-f]{32}|whsec_[A-Za-z0-9+/=]+"
    r"|\d{4}-\d{2}-\d{2}T[0-9:.]+Z|\d+(?:\.\d+)?"
)
# Samples that cannot run as written here, and why.
SKIPPED = {
    "/retry": "needs a message the channel failed to send (tests/conversations/test_sending.py)",
    "/media": "needs a photo received from Meta (tests/conversations/test_media.py)",
    "while true": "follows the feed forever",
    "openssl dgst": "signs with the channel's secret; tests/conversations check Meta's calls",
}


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


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("make-run")
    with serve(f"sqlite:///{folder / 'chatcrm.db'}") as server:
        workspace_id, api_key = server.demo()
        yield Service(server, workspace_id, api_key, folder)


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
        first = service.call("GET", f"/api/webhook/{hook['id']}/deliveries", params={"pageSize": 1})
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


# --- docs/api.md ---------------------------------------------------------------------------------

API_SAMPLES = [
    b
    for b in blocks(ROOT / "docs" / "api.md")
    if b.language == "sh" and not b.text.lstrip().startswith(("BASE=", "$ "))
]


@pytest.mark.parametrize("block", API_SAMPLES, ids=[b.where for b in API_SAMPLES])
def test_each_curl_sample_of_the_api_reference_answers_as_shown(
    service: Service, block: Block
) -> None:
    for text, why in SKIPPED.items():
        if text in block.text:
            pytest.skip(why)
    result = run_shell(block, variables(service, block.text), service.folder)
    assert result.returncode == 0, (block.where, result.stdout, result.stderr)
    shown = envelopes(block.answer or "")
    if not shown and (block.answer or "").startswith("HTTP/"):  # headers only: the same status
        assert result.stdout.split("\n", 1)[0].split()[1:2] == block.answer.split()[1:2]
        return
    got = envelopes(result.stdout)
    assert got or "jq" in block.text, (block.where, result.stdout, result.stderr)
    if not shown:  # a sample that shows no answer succeeds
        assert all(e["success"] for e in got), (block.where, result.stdout)
    # The blocks after a sample may go on with other answers (an error, a later call):
    # the sample's own answers come first.
    for expected, actual in zip(shown, got, strict=False):
        assert gist(actual) == gist(expected), (block.where, result.stdout)


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


TRANSCRIPTS = [
    b for b in blocks(ROOT / "docs" / "api.md") if b.language == "sh" and b.text.startswith("$ ")
]


@pytest.mark.parametrize("block", TRANSCRIPTS, ids=[b.where for b in TRANSCRIPTS])
def test_each_command_line_transcript_prints_what_it_shows(service: Service, block: Block) -> None:
    values = {"BASE": service.server.base_url, "KEY": service.api_key, "WS": service.workspace_id}
    run_transcript(block, values, service.folder, Ids())


# --- README.md: the `chatcrm` commands -----------------------------------------------------------

README_COMMANDS = [
    line.split("#", 1)[0].strip()
    for b in blocks(ROOT / "README.md")
    if b.language == "sh" and "chatcrm init" in b.text
    for line in b.text.splitlines()
    if line.startswith("chatcrm ")
]


def _cli_json(cwd: Path, *args: str) -> Any:
    result = subprocess.run(
        [chatcrm_executable(), *args, "--json"],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")},
    )
    return json.loads(result.stdout)


@pytest.mark.parametrize("command", README_COMMANDS)
def test_each_command_of_the_readme_runs(service: Service, command: str) -> None:
    if "citus" in command:
        pytest.skip("needs a Citus coordinator: tests/db/test_citus_distribute.py runs it")
    # `[--account ACCOUNT_ID]`: the optional part given; placeholders: this run's values.
    text = re.sub(r"\bKEY\b", service.api_key, command.replace("[", "").replace("]", ""))
    if "ACCOUNT_ID" in text or "KEY_ID" in text:
        account = _cli_json(service.folder, "accounts", "list")[0]["accountId"]
        text = text.replace("ACCOUNT_ID", account)
    if "KEY_ID" in text:  # a key of its own: one command revokes it
        key_id = _cli_json(service.folder, "keys", "create", "--account", account)["keyId"]
        text = text.replace("KEY_ID", key_id)
    result = run_shell(Block(ROOT / "README.md", 0, "sh", text, None), {}, service.folder)
    assert result.returncode == 0, (command, result.stdout, result.stderr)
    assert result.stdout.strip() or "revoke" in command or "limit" in command, command


# --- docs/import.md: the sample file, imported as shown -------------------------------------------


def test_the_import_sample_imports_its_three_rows(service: Service, tmp_path: Path) -> None:
    doc = blocks(ROOT / "docs" / "import.md")
    [sample] = [b for b in doc if b.language == "csv"]
    [shown] = [b for b in doc if b.text.startswith("$ chatcrm import contacts contacts.csv")]
    (tmp_path / "contacts.csv").write_text(sample.text)
    # A workspace of its own, with its default stages: no contact of the other samples in it.
    workspace = service.call("POST", "/api/workspace", json={"name": "Import sample"})["id"]
    ids = Ids()
    ids.actual.update(
        {
            "http://127.0.0.1:8000": service.server.base_url,
            "ccrm_…": service.api_key,
            "0193…": workspace,
        }
    )
    run_transcript(shown, {}, tmp_path, ids)


# --- docs/sdk.md: the Python samples --------------------------------------------------------------

SDK_SAMPLES = [b for b in blocks(ROOT / "docs" / "sdk.md") if b.language == "python"]
SDK_SKIPPED = {
    "client.messages.": "needs a channel Meta delivers to (tests/sdk/test_live.py sends)",
    "verify_webhook(SECRET": "a receiver's handler: tests/webhooks/test_docs.py runs verify",
}


class _Enough(Exception):
    """Ends a sample that would go on forever (the event stream)."""


def _handle(event: Any) -> None:
    raise _Enough


@pytest.mark.parametrize("block", SDK_SAMPLES, ids=[b.where for b in SDK_SAMPLES])
def test_each_sdk_sample_runs(service: Service, block: Block) -> None:
    from chatcrm_client import Client

    for text, why in SDK_SKIPPED.items():
        if text in block.text:
            pytest.skip(why)
    if "channels.create" in block.text:  # Meta's number of the sample: free it
        for channel in service.call("GET", "/api/channel")["data"]:
            service.call("DELETE", f"/api/channel/{channel['id']}")
    # An account of its own, with one workspace, as `make run`'s demo account.
    made = new_account(f"sqlite:///{service.folder / 'chatcrm.db'}")
    own = replace(service, api_key=made.api_key, workspace_id=made.workspace_id)
    values = variables(own, "$OPPORTUNITY_ID $DUPLICATE_ID")
    code = (
        block.text.replace("http://127.0.0.1:8000", service.server.base_url)
        .replace('"ccrm_…"', repr(own.api_key))
        .replace('"01a2170f-…"', repr(own.workspace_id))
        # The async sample follows the event stream forever: 3 s of it.
        .replace("asyncio.run(main())", "asyncio.run(asyncio.wait_for(main(), 3))")
    )
    with Client(service.server.base_url, own.api_key, workspace_id=own.workspace_id) as c:
        namespace: dict[str, Any] = {
            "client": c,
            "workspace_id": own.workspace_id,
            "contact_id": values["CONTACT_ID"],
            "stage_id": values["STAGE_ID"],
            "tag_id": values["TAG_ID"],
            "primary_id": values["CONTACT_ID"],
            "duplicate_id": values["DUPLICATE_ID"],
            "handle": _handle,
        }
        with suppress(_Enough, TimeoutError):
            exec(compile(code, block.where, "exec"), namespace)
    if "upsert_batch" in code:
        result = namespace["result"]
        assert (result.created + result.updated, result.failed) == (2, 0), result.results
