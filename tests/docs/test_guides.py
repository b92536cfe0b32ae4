"""The README's `chatcrm` commands, docs/import.md's sample and docs/sdk.md's Python samples
run as written."""

from __future__ import annotations

import json
import os
import re
from contextlib import suppress
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests import cli_forks
from tests.conftest import new_account
from tests.docs.samples import (
    ROOT,
    Block,
    Ids,
    Service,
    blocks,
    run_shell,
    run_transcript,
    variables,
)
from tests.test_cli import chatcrm_executable

# --- README.md: the `chatcrm` commands -----------------------------------------------------------

README_COMMANDS = [
    line.split("#", 1)[0].strip()
    for b in blocks(ROOT / "README.md")
    if b.language == "sh" and "chatcrm init" in b.text
    for line in b.text.splitlines()
    if line.startswith("chatcrm ")
]


def _cli_json(cwd: Path, *args: str) -> Any:
    """What a command prints with --json (the values a README command names; the README's
    commands themselves run as typed, in bash)."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")}
    result = cli_forks.run(
        chatcrm_executable(), [*args, "--json"], environment, timeout=60, cwd=cwd
    )
    assert result.returncode == 0, result.stderr
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
    "client.messages.": "needs a channel Meta delivers to (tests/sdk/test_messages.py sends)",
    "verify_webhook(SECRET": "a receiver's own handler: tests/sdk/test_verify_webhook.py checks it",
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
