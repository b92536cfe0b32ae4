"""`chatcrm accounts list`, `workspace list` and `keys list`: what an operator needs to
replace a lost key (ids, names, dates, revocation, rate limits), and never a key or its
hash. Accounts, workspaces and keys are made through the CLI itself."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import select

from chatcrm.auth.keys import parse_key
from chatcrm.config import Settings
from chatcrm.db.engine import standalone_engine
from chatcrm.db.schema import api_keys
from tests.conftest import new_account
from tests.test_cli import (
    failed_with_one_line,
    fresh_database_url,  # noqa: F401 (a fixture)
    init_json,
    one_json_object,
    run_cli,
    succeeded,
)

TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
MISSING_ID = "01a214de-0000-7000-8000-000000000000"


@dataclass
class Made:
    account_id: str
    workspace_ids: list[str]  # in creation order
    key_ids: list[str]  # first key, one limited to 5/s, one revoked
    api_keys: list[str]


def make_account(database_url: str) -> Made:
    """An account with two workspaces and three keys: the first, a limited one, a revoked
    one; all through the CLI."""
    created = init_json(database_url, "--workspace-name", "Ventas\tLima")
    account = created["accountId"]
    db = ("--database-url", database_url)
    second = one_json_object(
        run_cli("workspace", "create", "--api-key", created["apiKey"], "--name", "Soporte",
                "--json", *db)
    )  # fmt: skip
    limited = one_json_object(
        run_cli("keys", "create", "--account", account, "--rate-limit", "5", "--json", *db)
    )
    revoked = one_json_object(run_cli("keys", "create", "--account", account, "--json", *db))
    succeeded(run_cli("keys", "revoke", revoked["keyId"], *db))
    first_key_id = parse_key(created["apiKey"])
    assert first_key_id is not None
    return Made(
        account_id=account,
        workspace_ids=[created["workspaceId"], second["workspaceId"]],
        key_ids=[first_key_id[0], limited["keyId"], revoked["keyId"]],
        api_keys=[created["apiKey"], limited["apiKey"], revoked["apiKey"]],
    )


def json_array(result: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """`--json` on a list: stdout is exactly one JSON array (one line), nothing else."""
    lines = succeeded(result).strip().splitlines()
    assert len(lines) == 1, result.stdout
    value = json.loads(lines[0])
    assert isinstance(value, list)
    return value


def table(result: subprocess.CompletedProcess[str]) -> list[list[str]]:
    """The rows of a table (heading first), cells split on runs of two spaces or more."""
    return [re.split(r"\s{2,}", line.strip()) for line in succeeded(result).splitlines()]


def secret_hashes(database_url: str, account_id: str) -> list[str]:
    async def read() -> list[str]:
        engine = standalone_engine(database_url, Settings(database_url=database_url))
        try:
            async with engine.connect() as conn:
                rows = await conn.execute(
                    select(api_keys.c.secret_hash).where(api_keys.c.account_id == account_id)
                )
                return [row[0] for row in rows]
        finally:
            await engine.dispose()

    return asyncio.run(read())


def test_accounts_list(database_url: str) -> None:
    made = make_account(database_url)
    other = new_account(database_url)  # the code path of `chatcrm init`, in-process
    listed = json_array(run_cli("accounts", "list", "--json", "--database-url", database_url))
    assert all(list(item) == ["accountId", "name", "createdAt"] for item in listed)
    ids = [item["accountId"] for item in listed]
    assert ids.index(made.account_id) < ids.index(other.account_id)  # oldest first
    mine = listed[ids.index(made.account_id)]
    assert mine["name"] == "chatcrm"
    assert TIMESTAMP.match(mine["createdAt"])

    rows = table(run_cli("accounts", "list", "--database-url", database_url))
    assert rows[0] == ["ACCOUNT", "NAME", "CREATED"]
    assert [made.account_id, "chatcrm", mine["createdAt"]] in rows


def test_workspace_list(database_url: str) -> None:
    made = make_account(database_url)
    other = new_account(database_url)  # the code path of `chatcrm init`, in-process
    db = ("--database-url", database_url)
    listed = json_array(run_cli("workspace", "list", "--account", made.account_id, "--json", *db))
    assert [item["workspaceId"] for item in listed] == made.workspace_ids
    assert all(list(item) == ["workspaceId", "accountId", "name", "createdAt"] for item in listed)
    assert [item["name"] for item in listed] == ["Ventas\tLima", "Soporte"]
    assert {item["accountId"] for item in listed} == {made.account_id}
    assert all(TIMESTAMP.match(item["createdAt"]) for item in listed)

    everyone = json_array(run_cli("workspace", "list", "--json", *db))
    ids = [item["workspaceId"] for item in everyone]
    assert {*made.workspace_ids, other.workspace_id} <= set(ids)

    rows = table(run_cli("workspace", "list", "--account", made.account_id, *db))
    assert rows[0] == ["WORKSPACE", "ACCOUNT", "NAME", "CREATED"]
    # A tab in a name is shown as a space: one workspace stays one line.
    assert rows[1:] == [
        [made.workspace_ids[0], made.account_id, "Ventas Lima", listed[0]["createdAt"]],
        [made.workspace_ids[1], made.account_id, "Soporte", listed[1]["createdAt"]],
    ]


def test_keys_list_shows_no_key_material(database_url: str) -> None:
    made = make_account(database_url)
    other = new_account(database_url)  # the code path of `chatcrm init`, in-process
    db = ("--database-url", database_url)
    listed = json_array(run_cli("keys", "list", "--account", made.account_id, "--json", *db))
    assert [item["keyId"] for item in listed] == made.key_ids
    assert all(
        list(item) == ["keyId", "accountId", "createdAt", "revoked", "revokedAt", "rateLimit"]
        for item in listed
    )
    first, limited, revoked = listed
    assert {item["accountId"] for item in listed} == {made.account_id}
    assert all(TIMESTAMP.match(item["createdAt"]) for item in listed)
    assert (first["revoked"], first["revokedAt"], first["rateLimit"]) == (False, None, None)
    assert (limited["revoked"], limited["revokedAt"], limited["rateLimit"]) == (False, None, 5)
    assert type(limited["rateLimit"]) is int  # `5`, as given, not the stored float's `5.0`
    assert revoked["revoked"] is True and revoked["rateLimit"] is None
    assert TIMESTAMP.match(revoked["revokedAt"]) and revoked["revokedAt"] >= revoked["createdAt"]

    everyone = json_array(run_cli("keys", "list", "--json", *db))
    assert {*made.key_ids, other.key_id} <= {item["keyId"] for item in everyone}

    rows = table(run_cli("keys", "list", "--account", made.account_id, *db))
    assert rows[0] == ["KEY", "ACCOUNT", "CREATED", "REVOKED", "RATE LIMIT"]
    assert rows[1:] == [
        [made.key_ids[0], made.account_id, first["createdAt"], "no", "default"],
        [made.key_ids[1], made.account_id, limited["createdAt"], "no", "5/s"],
        [made.key_ids[2], made.account_id, revoked["createdAt"], revoked["revokedAt"], "default"],
    ]

    # Neither a key, nor its secret part, nor the stored hash, in any listing.
    hashes = secret_hashes(database_url, made.account_id)
    assert len(hashes) == 3
    forbidden = [*made.api_keys, *(key.split("_", 2)[2] for key in made.api_keys), *hashes]
    for command in (["accounts", "list"], ["workspace", "list"], ["keys", "list"]):
        for extra in ([], ["--json"], ["--account", made.account_id]):
            if command[0] == "accounts" and extra[:1] == ["--account"]:
                continue
            result = run_cli(*command, *extra, *db)
            output = succeeded(result) + result.stderr
            for secret in forbidden:
                assert secret not in output, (command, extra)


@pytest.mark.parametrize("command", [["workspace", "list"], ["keys", "list"], ["users", "list"]])
@pytest.mark.parametrize("account", [MISSING_ID, "nope"])
def test_listing_an_unknown_account_fails(
    database_url: str, command: list[str], account: str
) -> None:
    line = failed_with_one_line(
        run_cli(*command, "--account", account, "--json", "--database-url", database_url)
    )
    assert line == (
        f"chatcrm: error: no account with id {account!r} (`chatcrm accounts list` lists them)"
    )


def test_lists_of_a_fresh_database_are_empty(fresh_database_url: str) -> None:  # noqa: F811
    db = ("--database-url", fresh_database_url)
    # A SQLite file that does not exist is refused (tests/test_cli_database_file.py): the
    # fresh database is created by `migrate`, and is then empty.
    succeeded(run_cli("migrate", *db))
    for command in (["accounts", "list"], ["workspace", "list"], ["keys", "list"]):
        assert json_array(run_cli(*command, "--json", *db)) == []
        assert len(table(run_cli(*command, *db))) == 1  # the heading only


def test_help_names_the_list_commands() -> None:
    assert "accounts" in succeeded(run_cli("--help"))
    for group in ("accounts", "workspace", "keys"):
        assert "list" in succeeded(run_cli(group, "--help"))
