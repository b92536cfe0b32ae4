"""The command line (contract section 6), run as the installed console script."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import inspect, select, text

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.engine import standalone_engine
from chatcrm.db.schema import api_keys, metadata
from tests import cli_forks
from tests.client import error, ok_data
from tests.conftest import empty_database


def chatcrm_executable() -> str:
    beside = Path(sys.executable).parent / "chatcrm"
    if beside.exists():
        return str(beside)
    found = shutil.which("chatcrm")
    assert found, "the chatcrm console script is not installed"
    return found


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")}
    environment.update(env or {})
    return cli_forks.run(chatcrm_executable(), args, environment, timeout=120)


def succeeded(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stdout


def one_json_object(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """`--json`: stdout is exactly one JSON object (one line), nothing else."""
    out = succeeded(result)
    lines = out.strip().splitlines()
    assert len(lines) == 1, out
    value = json.loads(lines[0])
    assert isinstance(value, dict)
    return value


def failed_with_one_line(result: subprocess.CompletedProcess[str]) -> str:
    """Non-zero exit, exactly one line on stderr, no traceback, nothing on stdout."""
    assert result.returncode != 0, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].strip()
    assert result.stdout == "", result.stdout
    return lines[0]


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def init_json(database_url: str, *extra: str) -> dict[str, Any]:
    return one_json_object(run_cli("init", "--json", "--database-url", database_url, *extra))


@pytest.fixture
def fresh_database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """An empty, never migrated database of the session's backend."""
    with empty_database(backend, tmp_path) as url:
        yield url


@pytest.fixture
def uncached(settings: Settings) -> Iterator[TestClient]:
    """An app that reads keys from the database on every request (no key cache)."""
    app = create_app(settings.model_copy(update={"key_cache_ttl": 0}))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


# --- init ----------------------------------------------------------------------------


def test_init_json_prints_one_object_and_the_key_works(http: TestClient, database_url: str) -> None:
    created = init_json(database_url)
    assert list(created) == ["accountId", "workspaceId", "apiKey"]
    assert all(isinstance(v, str) and v for v in created.values())
    data = ok_data(
        http.get(f"/api/workspace/{created['workspaceId']}", headers=auth(created["apiKey"]))
    )
    assert data["id"] == created["workspaceId"]
    assert data["name"] == "My workspace"
    assert [s["order"] for s in data["contactStages"]] == [1, 2, 3, 4]
    assert [s["order"] for s in data["opportunityStages"]] == [1, 2, 3, 4]
    contact = http.post(
        "/api/contact",
        json={"name": "Ana", "email": "ana@example.com"},
        headers={**auth(created["apiKey"]), "x-workspace-id": created["workspaceId"]},
    )
    assert (
        ok_data(contact, "Contact created successfully.")["contact"]["workspaceId"]
        == (created["workspaceId"])
    )


def test_init_creates_a_new_account_each_time(http: TestClient, database_url: str) -> None:
    first = init_json(database_url)
    second = init_json(database_url)
    assert first["accountId"] != second["accountId"]
    assert first["workspaceId"] != second["workspaceId"]
    assert first["apiKey"] != second["apiKey"]
    response = http.get(f"/api/workspace/{second['workspaceId']}", headers=auth(first["apiKey"]))
    error(response, 403, "FORBIDDEN")


def test_init_workspace_name(http: TestClient, database_url: str) -> None:
    created = init_json(database_url, "--workspace-name", "Ventas Lima")
    data = ok_data(
        http.get(f"/api/workspace/{created['workspaceId']}", headers=auth(created["apiKey"]))
    )
    assert data["name"] == "Ventas Lima"


@pytest.mark.parametrize("name", ["", "   ", "x" * 201])
def test_init_rejects_a_bad_workspace_name(database_url: str, name: str) -> None:
    failed_with_one_line(
        run_cli("init", "--json", "--database-url", database_url, "--workspace-name", name)
    )


def test_init_reads_the_database_url_from_the_environment(
    http: TestClient, database_url: str
) -> None:
    created = one_json_object(run_cli("init", "--json", env={"CHATCRM_DATABASE_URL": database_url}))
    ok_data(http.get(f"/api/workspace/{created['workspaceId']}", headers=auth(created["apiKey"])))


def test_the_flag_overrides_the_environment(http: TestClient, database_url: str) -> None:
    created = one_json_object(
        run_cli(
            "init",
            "--json",
            "--database-url",
            database_url,
            env={"CHATCRM_DATABASE_URL": "mysql://ignored"},
        )
    )
    ok_data(http.get(f"/api/workspace/{created['workspaceId']}", headers=auth(created["apiKey"])))


def test_init_without_json_prints_the_key_for_a_person(http: TestClient, database_url: str) -> None:
    out = succeeded(run_cli("init", "--database-url", database_url))
    key = next(word for word in out.split() if word.startswith("ccrm_"))
    workspace_line = next(line for line in out.splitlines() if line.startswith("workspace:"))
    workspace_id = workspace_line.split(":", 1)[1].strip()
    ok_data(http.get(f"/api/workspace/{workspace_id}", headers=auth(key)))


def test_init_on_a_fresh_database_migrates_it(fresh_database_url: str) -> None:
    created = init_json(fresh_database_url)
    settings = Settings(database_url=fresh_database_url, rate_limit=0)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        ok_data(
            client.get(f"/api/workspace/{created['workspaceId']}", headers=auth(created["apiKey"]))
        )


# --- workspace create ----------------------------------------------------------------


def test_workspace_create_json(http: TestClient, database_url: str) -> None:
    created = init_json(database_url)
    result = one_json_object(
        run_cli(
            "workspace",
            "create",
            "--api-key",
            created["apiKey"],
            "--name",
            "Second office",
            "--json",
            "--database-url",
            database_url,
        )
    )
    assert list(result) == ["workspaceId"]
    workspace_id = result["workspaceId"]
    assert workspace_id != created["workspaceId"]
    data = ok_data(http.get(f"/api/workspace/{workspace_id}", headers=auth(created["apiKey"])))
    assert data["name"] == "Second office"
    assert len(data["contactStages"]) == 4 and len(data["opportunityStages"]) == 4
    # It belongs to the key's account: the same key creates records in it.
    response = http.post(
        "/api/opportunity",
        json={"name": "Deal", "amount": 10},
        headers={**auth(created["apiKey"]), "x-workspace-id": workspace_id},
    )
    assert ok_data(response)["opportunity"]["workspaceId"] == workspace_id


def test_workspace_create_default_name(http: TestClient, database_url: str) -> None:
    """Without --name, a name no other workspace of the account has (contract N): init's
    own is "My workspace"."""
    created = init_json(database_url)
    names = []
    for _ in range(2):
        result = one_json_object(
            run_cli(
                "workspace", "create", "--api-key", created["apiKey"], "--json",
                "--database-url", database_url,
            )
        )  # fmt: skip
        data = ok_data(
            http.get(f"/api/workspace/{result['workspaceId']}", headers=auth(created["apiKey"]))
        )
        names.append(data["name"])
    assert names == ["My workspace 2", "My workspace 3"]


@pytest.mark.parametrize(
    "key",
    [
        "garbage",
        "",
        "ccrm_" + "ab" * 16 + "_" + "x" * 43,  # well-formed, unknown
    ],
)
def test_workspace_create_with_a_bad_key_fails(database_url: str, key: str) -> None:
    failed_with_one_line(
        run_cli("workspace", "create", "--api-key", key, "--json", "--database-url", database_url)
    )


def test_workspace_create_with_a_wrong_secret_fails(database_url: str) -> None:
    created = init_json(database_url)
    key = created["apiKey"]
    wrong = key[:-1] + ("A" if key[-1] != "A" else "B")
    failed_with_one_line(
        run_cli("workspace", "create", "--api-key", wrong, "--json", "--database-url", database_url)
    )


# --- keys ------------------------------------------------------------------------------


def test_keys_create_json(http: TestClient, database_url: str) -> None:
    created = init_json(database_url)
    result = one_json_object(
        run_cli(
            "keys", "create", "--account", created["accountId"], "--json",
            "--database-url", database_url,
        )
    )  # fmt: skip
    assert list(result) == ["keyId", "apiKey"]
    assert result["apiKey"] != created["apiKey"]
    assert result["keyId"].replace("-", "") in result["apiKey"]
    ok_data(http.get(f"/api/workspace/{created['workspaceId']}", headers=auth(result["apiKey"])))
    # The first key still works too.
    ok_data(http.get(f"/api/workspace/{created['workspaceId']}", headers=auth(created["apiKey"])))


@pytest.mark.parametrize("rate", ["inf", "1e400", "nan", "-1", "3e11"])
def test_keys_create_refuses_a_rate_no_budget_can_hold(database_url: str, rate: str) -> None:
    """A key made with an infinite rate answered every request 500 (`keys limit` refused
    it already), and one of 3e11 on PostgreSQL (its lease past the budget's integer):
    refused in one line, no key made."""
    created = init_json(database_url)
    before = succeeded(run_cli("keys", "list", "--account", created["accountId"],
                               "--database-url", database_url))  # fmt: skip
    result = run_cli(
        "keys", "create", "--account", created["accountId"], "--rate-limit", rate,
        "--database-url", database_url,
    )  # fmt: skip
    assert result.returncode == 2, result
    assert "--rate-limit" in failed_with_one_line(result)
    after = succeeded(run_cli("keys", "list", "--account", created["accountId"],
                              "--database-url", database_url))  # fmt: skip
    assert after == before


@pytest.mark.parametrize("account", ["01a214de-0000-7000-8000-000000000000", "nope", ""])
def test_keys_create_for_an_unknown_account_fails(database_url: str, account: str) -> None:
    line = failed_with_one_line(
        run_cli("keys", "create", "--account", account, "--json", "--database-url", database_url)
    )
    assert "account" in line


def test_keys_revoke_then_the_key_is_refused(uncached: TestClient, database_url: str) -> None:
    created = init_json(database_url)
    extra = one_json_object(
        run_cli(
            "keys", "create", "--account", created["accountId"], "--json",
            "--database-url", database_url,
        )
    )  # fmt: skip
    path = f"/api/workspace/{created['workspaceId']}"
    ok_data(uncached.get(path, headers=auth(extra["apiKey"])))
    succeeded(run_cli("keys", "revoke", extra["keyId"], "--database-url", database_url))
    response = uncached.get(path, headers=auth(extra["apiKey"]))
    error(response, 401, "UNAUTHORIZED")
    assert response.headers["www-authenticate"].lower().startswith("bearer")
    # The account's other key is not affected.
    ok_data(uncached.get(path, headers=auth(created["apiKey"])))
    # Revoked keys cannot create workspaces from the command line either.
    failed_with_one_line(
        run_cli(
            "workspace", "create", "--api-key", extra["apiKey"], "--json",
            "--database-url", database_url,
        )
    )  # fmt: skip


def test_keys_revoke_twice_or_unknown_fails(database_url: str) -> None:
    created = init_json(database_url)
    extra = one_json_object(
        run_cli(
            "keys", "create", "--account", created["accountId"], "--json",
            "--database-url", database_url,
        )
    )  # fmt: skip
    succeeded(run_cli("keys", "revoke", extra["keyId"], "--database-url", database_url))
    failed_with_one_line(run_cli("keys", "revoke", extra["keyId"], "--database-url", database_url))
    unknown = failed_with_one_line(
        run_cli(
            "keys", "revoke", "01a214de-0000-7000-8000-000000000000", "--database-url", database_url
        )
    )
    assert unknown == (
        "chatcrm: error: no API key with id '01a214de-0000-7000-8000-000000000000' "
        "(`chatcrm keys list` lists them)"
    )


def test_keys_are_named_by_any_form_of_their_id(database_url: str) -> None:
    """operations.md 4.8: the 32 hex digits inside `ccrm_<key id>_<secret>` are the key's
    id; `revoke` and `limit` take them in any case, as the dashed id or the whole key."""
    created = init_json(database_url)
    url = ("--database-url", database_url)
    extra = one_json_object(
        run_cli("keys", "create", "--account", created["accountId"], "--json", *url)
    )
    digits = extra["apiKey"].split("_")[1]
    assert digits == extra["keyId"].replace("-", "")
    succeeded(run_cli("keys", "limit", digits.upper(), "5", *url))
    succeeded(run_cli("keys", "limit", extra["keyId"].upper(), "default", *url))
    # A key cut short or mistyped after its id still names its id (not "no API key with
    # id 'ccrm_…_x'", which blamed the id).
    cut = extra["apiKey"][: len("ccrm_") + 32 + 2]
    succeeded(run_cli("keys", "limit", cut, "7", *url))
    succeeded(run_cli("keys", "limit", cut[:-2], "7", *url))
    # A negative rate is a rate refused, not an unknown option.
    assert "RATE" in failed_with_one_line(run_cli("keys", "limit", digits, "-3", *url))
    succeeded(run_cli("keys", "revoke", digits, *url))
    refused = failed_with_one_line(run_cli("keys", "limit", digits, "5", *url))
    assert "revoked" in refused


def test_keys_are_stored_only_as_hashes(database_url: str, backend: str) -> None:
    created = init_json(database_url)
    extra = one_json_object(
        run_cli(
            "keys", "create", "--account", created["accountId"], "--json",
            "--database-url", database_url,
        )
    )  # fmt: skip
    secrets = [key.split("_", 2)[2] for key in (created["apiKey"], extra["apiKey"])]

    async def stored_text() -> tuple[list[str], str]:
        engine = standalone_engine(database_url, Settings(database_url=database_url))
        try:
            async with engine.connect() as conn:
                key_rows = (
                    await conn.execute(
                        select(api_keys).where(api_keys.c.account_id == created["accountId"])
                    )
                ).all()
                everything = []
                for table in metadata.sorted_tables:
                    rows = (await conn.execute(select(table))).all()
                    everything.extend(repr(tuple(row)) for row in rows)
                return [repr(tuple(row)) for row in key_rows], "\n".join(everything)
        finally:
            await engine.dispose()

    key_rows, all_rows = asyncio.run(stored_text())
    assert len(key_rows) == 2
    for key, secret in zip((created["apiKey"], extra["apiKey"]), secrets, strict=True):
        for row in key_rows:
            assert key not in row and secret not in row
        assert key not in all_rows and secret not in all_rows
    if backend == "sqlite":  # not in the file either (nor its write-ahead log)
        path = Path(database_url.removeprefix("sqlite:///"))
        # Read in another process: closing a file this process also holds open through
        # SQLite would drop SQLite's POSIX locks on it (sqlite.org/howtocorrupt.html 2.2).
        reader = (
            "import sys, pathlib; p = pathlib.Path(sys.argv[1]); "
            "sys.stdout.buffer.write(b''.join(f.read_bytes() for f in "
            "(p, pathlib.Path(str(p) + '-wal')) if f.exists()))"
        )
        raw = subprocess.run(
            [sys.executable, "-c", reader, str(path)], capture_output=True, check=True
        ).stdout
        for secret in secrets:
            assert secret.encode() not in raw


# --- migrate -----------------------------------------------------------------------------


def test_migrate_succeeds_twice_on_a_fresh_database(fresh_database_url: str) -> None:
    # It says what it did: an operator upgrading sees that something happened.
    first = succeeded(run_cli("migrate", "--database-url", fresh_database_url))
    assert first.startswith("chatcrm: database migrated from an empty database to revision")
    again = succeeded(run_cli("migrate", "--database-url", fresh_database_url))
    assert again == "chatcrm: database is up to date\n"

    async def tables() -> set[str]:
        engine = standalone_engine(fresh_database_url, Settings(database_url=fresh_database_url))
        try:
            async with engine.connect() as conn:
                return set(await conn.run_sync(lambda c: inspect(c).get_table_names()))
        finally:
            await engine.dispose()

    names = asyncio.run(tables())
    assert {t.name for t in metadata.sorted_tables} <= names
    assert "alembic_version" in names


def test_migrate_on_the_migrated_test_database(database_url: str) -> None:
    succeeded(run_cli("migrate", "--database-url", database_url))

    async def version() -> list[str]:
        engine = standalone_engine(database_url, Settings(database_url=database_url))
        try:
            async with engine.connect() as conn:
                rows = await conn.execute(text("SELECT version_num FROM alembic_version"))
                return [r[0] for r in rows]
        finally:
            await engine.dispose()

    assert len(asyncio.run(version())) == 1


# --- failures ------------------------------------------------------------------------------

BAD_URLS = [
    "mysql://x",
    "not a url",
    "sqlite://",
    "postgresql://postgres@127.0.0.1:1/nothing",
]


@pytest.mark.parametrize(
    "command",
    [
        ["migrate"],
        ["init", "--json"],
        ["keys", "create", "--account", "01a214de-0000-7000-8000-000000000000", "--json"],
        ["keys", "revoke", "01a214de-0000-7000-8000-000000000000"],
        ["workspace", "create", "--api-key", "ccrm_" + "ab" * 16 + "_" + "x" * 43, "--json"],
    ],
    ids=["migrate", "init", "keys-create", "keys-revoke", "workspace-create"],
)
def test_every_command_fails_with_one_line_on_a_bad_database_url(command: list[str]) -> None:
    line = failed_with_one_line(run_cli(*command, "--database-url", "mysql://x"))
    assert "mysql" in line


@pytest.mark.parametrize(
    ("setting", "value", "command"),
    [
        ("CHATCRM_RATE_LIMIT", "-1", ["migrate"]),
        ("CHATCRM_RATE_LIMIT", "inf", ["serve", "--port", "0"]),  # passed ge=0, then 500s
        ("CHATCRM_RATE_LIMIT", "1e12", ["serve", "--port", "0"]),  # 500s on PostgreSQL
        ("CHATCRM_WEBHOOK_TIMEOUT", "nan", ["migrate"]),
        ("CHATCRM_WEBHOOK_TIMEOUT", "0", ["serve", "--port", "0"]),
        ("CHATCRM_CHANNEL_MAX_IN_FLIGHT", "0", ["dispatch"]),
        ("CHATCRM_WEBHOOK_ALLOW_PRIVATE", "maybe", ["keys", "list"]),
        ("CHATCRM_LOG_LEVEL", "loud", ["serve", "--port", "0"]),
        ("CHATCRM_PUBLIC_URL", "ftp://crm.example.com", ["serve", "--port", "0"]),
        ("CHATCRM_PUBLIC_URL", "crm.example.com", ["migrate"]),
        ("CHATCRM_PUBLIC_URL", "https://crm.example.com:99999", ["migrate"]),
        ("CHATCRM_SMTP_URL", "mail.example.com:25", ["serve", "--port", "0"]),
        ("CHATCRM_SMTP_URL", "smtps://mail.example.com:smtp", ["migrate"]),
        # Seen only at the first send, by the relay, far from its cause.
        ("CHATCRM_SMTP_FROM", "a b c <<>>", ["serve", "--port", "0"]),
        ("CHATCRM_SMTP_FROM", "", ["migrate"]),
        ("CHATCRM_SMTP_FROM", "a@example.com, b@example.com", ["migrate"]),
        ("CHATCRM_SMTP_FROM", "Team: a@example.com;", ["migrate"]),
        ("CHATCRM_SMTP_FROM", "a@example.com,", ["migrate"]),
        ("CHATCRM_SMTP_FROM", "noreply@ex\u00e4mple.com", ["migrate"]),
        # Past these a time overflowed where it was used: every sign-in answered 500, the
        # dispatcher and the purge died, long after a start that said nothing.
        ("CHATCRM_SESSION_MAX_DAYS", "1e7", ["serve", "--port", "0"]),
        ("CHATCRM_SESSION_IDLE_HOURS", "1e9", ["serve", "--port", "0"]),
        ("CHATCRM_DB_CONNECT_TIMEOUT", "1e300", ["dispatch"]),
        ("CHATCRM_DB_STATEMENT_TIMEOUT", "1e300", ["migrate"]),
        ("CHATCRM_EVENT_RETENTION_DAYS", "1e12", ["serve", "--port", "0"]),
    ],
)
def test_an_invalid_setting_fails_with_one_line_naming_it(
    setting: str, value: str, command: list[str], tmp_path: Path
) -> None:
    env = {setting: value, "CHATCRM_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
    line = failed_with_one_line(run_cli(*command, env=env))
    assert line.startswith(f"chatcrm: error: invalid setting {setting}={value!r}: "), line


@pytest.mark.parametrize(
    "value",
    [
        "ftp://mailer:S3cret-pw@127.0.0.1:25",
        "smtp://mailer:S3cret-pw@mail:port",
        # A "/", "#" or "?" in the password ends the address there as a URL is read: the
        # line showed the whole password.
        "smtp://mailer:S3cret/pw@mail:25",
        "smtp://mailer:S3cret#pw@mail:25",
        "smtp://mailer:S3cret?pw@mail:25",
        # A user name that is an e-mail address: the "@" in the address hid the cut.
        "smtp://me@example.com:S3cret/pw@mail:25",
        # No "//" after the scheme; a password holding "@" or a blank.
        "smtp:mailer:S3cret@mail",
        "smtp:mailer:S3cr@t@mail",
        "smtp:mailer:S3 cret@mail",
    ],
)
def test_an_invalid_smtp_url_is_named_without_its_password(value: str, tmp_path: Path) -> None:
    env = {"CHATCRM_SMTP_URL": value, "CHATCRM_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}"}
    line = failed_with_one_line(run_cli("serve", "--port", "0", env=env))
    assert "CHATCRM_SMTP_URL" in line and "***@" in line, line
    assert "S3cr" not in line, line
    assert "S3cret-pw" not in line


def test_valid_or_empty_url_settings_start(tmp_path: Path) -> None:
    for env in (
        {"CHATCRM_PUBLIC_URL": "https://crm.example.com/chatcrm/", "CHATCRM_SMTP_URL": ""},
        {"CHATCRM_PUBLIC_URL": "", "CHATCRM_SMTP_URL": "smtps://u:p@mail.example.com:465"},
    ):
        env["CHATCRM_DATABASE_URL"] = f"sqlite:///{tmp_path / 'x.db'}"
        succeeded(run_cli("migrate", env=env))


@pytest.mark.parametrize("url", BAD_URLS)
def test_bad_database_urls_fail_with_one_line(url: str) -> None:
    failed_with_one_line(run_cli("init", "--json", "--database-url", url))


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("postgresql://u:secretpw@127.0.0.1:abc/db", "not a database URL: 'postgresql://u:***@"),
        ("postgresql//u:secretpw@h/db", "not a database URL: "),
        ("postgresql://u:secret@pw@127.0.0.1:5432/db", "write an '@' of the password as %40"),
        # Without a name the driver took the user's (the server's `postgres`), and a
        # listing command installed chatcrm's tables there.
        ("postgresql://u:secretpw@127.0.0.1:5432/", "the URL names no database"),
        ("postgresql://", "the URL names no database"),
    ],
)
def test_a_bad_database_url_is_named_without_its_password(url: str, says: str) -> None:
    for result, setting in (
        (run_cli("migrate", "--database-url", url), "--database-url"),
        (run_cli("accounts", "list", env={"CHATCRM_DATABASE_URL": url}), "CHATCRM_DATABASE_URL"),
    ):
        line = failed_with_one_line(result)
        assert says in line and "secret" not in line and "pw" not in line.split(says)[-1], line
        if "not a database URL" in says:
            assert setting in line, line  # the setting the person fixes


@pytest.mark.postgres_only
def test_query_parameters_of_a_postgresql_url_are_ignored(postgres_url: str) -> None:
    """docs/operations.md 3.2: the pool takes the URL's parts and `host` only; the
    migrations' engine passed the others to the driver, which refused them (TypeError)."""
    with_query = f"{postgres_url}?sslmode=prefer&application_name=x&connect_timeout=5"
    succeeded(run_cli("migrate", "--database-url", with_query))
    succeeded(run_cli("accounts", "list", "--database-url", with_query))


def test_bad_database_url_from_the_environment_fails_with_one_line() -> None:
    failed_with_one_line(run_cli("init", "--json", env={"CHATCRM_DATABASE_URL": "mysql://x"}))


def test_a_sqlite_file_locked_by_another_process_is_one_line(tmp_path: Path) -> None:
    """docs/operations.md 1.4: the line says what is wrong and what to do (it was
    `OperationalError: database is locked`)."""
    path = tmp_path / "held.db"
    url = f"sqlite:///{path}"
    succeeded(run_cli("migrate", "--database-url", url))
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")
        env = {"CHATCRM_SQLITE_BUSY_TIMEOUT_MS": "200"}
        for command in (("init", "--json"), ("accounts", "list")):
            line = failed_with_one_line(run_cli(*command, "--database-url", url, env=env))
            assert f"the SQLite database {path} is locked by another process" in line, line
    finally:
        holder.close()


def test_sqlite_file_in_a_missing_directory_fails_with_one_line(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'missing' / 'dir' / 'x.db'}"
    for command in (("migrate",), ("init", "--json"), ("serve", "--port", "0")):
        line = failed_with_one_line(run_cli(*command, "--database-url", url))
        assert "folder of the SQLite file does not exist" in line, line
        assert "; create it, or fix the path (from --database-url)" in line, line


def test_an_empty_database_url_variable_says_to_unset_it() -> None:
    line = failed_with_one_line(run_cli("accounts", "list", env={"CHATCRM_DATABASE_URL": ""}))
    assert line == (
        "chatcrm: error: not a database URL: '': give one, or unset it for the SQLite default "
        "(from $CHATCRM_DATABASE_URL)"
    )


def test_sqlite_path_that_is_a_folder_fails_with_one_line(tmp_path: Path) -> None:
    (tmp_path / "x.db").mkdir()
    line = failed_with_one_line(run_cli("migrate", "--database-url", f"sqlite:///{tmp_path}/x.db"))
    assert "not a file" in line, line


@pytest.mark.parametrize("group", [[], ["keys"], ["users"]])
def test_a_group_alone_prints_its_help_on_stdout(group: list[str]) -> None:
    result = run_cli(*group)
    assert result.returncode == 0 and result.stderr == "", result
    assert result.stdout.startswith(f"Usage: {' '.join(['chatcrm', *group])} "), result.stdout


def test_version_and_help() -> None:
    assert succeeded(run_cli("--version")).strip()
    out = succeeded(run_cli("--help"))
    for command in ("serve", "init", "workspace", "keys", "migrate"):
        assert command in out


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["keys", "create"], "Missing option '--account'"),
        (["workspace", "create"], "Missing option '--api-key'"),
        (["keys", "revoke"], "Missing argument 'KEY_ID'"),
        (["init", "--bogus"], "No such option '--bogus'"),
        (["serve", "--port", "99999"], "Invalid value for '--port'"),
        (["nosuch"], "No such command 'nosuch'"),
        # click lists a missing choice option's choices one per line
        (
            ["users", "create", "--account", "x", "--email", "a@example.com", "--name", "X"],
            "Missing option '--role'. Choose from: owner, admin, agent, viewer",
        ),
    ],
)
def test_a_wrong_option_or_command_is_one_line_too(args: list[str], says: str) -> None:
    """Contract 6: non-zero with a one-line message on failure, click's usage block
    included (exit 2, as click's)."""
    result = run_cli(*args)
    line = failed_with_one_line(result)
    assert result.returncode == 2
    assert line.startswith("chatcrm: error: ") and says in line, line
