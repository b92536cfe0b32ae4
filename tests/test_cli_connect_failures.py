"""A PostgreSQL database that cannot be opened: every command prints one line saying what
is wrong and what to do, exits 1, and shows no driver message or traceback. Real
connections: the test server, a database missing on it, a role it does not know, a
closed port, a host name that cannot exist, a socket folder without a server."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from sqlalchemy.engine import URL, make_url

from tests.conftest import PG_ADMIN_URL, create_pg_database, drop_pg_database
from tests.test_cli import failed_with_one_line, run_cli

SOME_ID = "01a214de-0000-7000-8000-000000000000"
SOME_KEY = "ccrm_" + "ab" * 16 + "_" + "x" * 43
COMMANDS = {
    "migrate": ["migrate"],
    "init": ["init", "--json"],
    "serve": ["serve", "--port", "0"],
    "workspace-create": ["workspace", "create", "--api-key", SOME_KEY, "--json"],
    "workspace-list": ["workspace", "list"],
    "accounts-list": ["accounts", "list", "--json"],
    "keys-create": ["keys", "create", "--account", SOME_ID, "--json"],
    "keys-revoke": ["keys", "revoke", SOME_ID],
    "keys-limit": ["keys", "limit", SOME_ID, "5"],
    "keys-list": ["keys", "list", "--account", SOME_ID],
}
REFUSED = (
    "chatcrm: error: cannot connect to PostgreSQL at 127.0.0.1:1 (connection refused); "
    "is the server running? check --database-url"
)


@pytest.fixture(scope="module")
def server() -> URL:
    """The test PostgreSQL server, checked to answer (else skipped, or failed under CI)."""
    drop_pg_database(create_pg_database())
    return make_url(PG_ADMIN_URL)


def url_of(server: URL, **parts: str) -> str:
    return server.set(**parts).render_as_string(hide_password=False)


def where(server: URL) -> str:
    return f"{server.host}:{server.port or 5432}"


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_database_that_does_not_exist(server: URL, command: list[str]) -> None:
    name = f"chatcrm_missing_{uuid.uuid4().hex[:8]}"
    line = failed_with_one_line(run_cli(*command, "--database-url", url_of(server, database=name)))
    user = f" -U {server.username}" if server.username else ""
    assert line == (
        f'chatcrm: error: PostgreSQL database "{name}" does not exist on {where(server)}; '
        f"create it (createdb -h {server.host} -p {server.port or 5432}{user} {name}) "
        "or fix --database-url"
    )


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_refused_connection(command: list[str]) -> None:
    url = "postgresql://postgres@127.0.0.1:1/chatcrm"
    assert failed_with_one_line(run_cli(*command, "--database-url", url)) == REFUSED


def test_the_line_names_the_environment_variable_when_the_url_came_from_it() -> None:
    result = run_cli("init", "--json", env={"CHATCRM_DATABASE_URL": "postgresql://x@127.0.0.1:1/y"})
    assert failed_with_one_line(result) == REFUSED.replace(
        "--database-url", "$CHATCRM_DATABASE_URL"
    )


def test_a_user_the_server_does_not_accept(server: URL) -> None:
    role = f"nobody_{uuid.uuid4().hex[:8]}"
    line = failed_with_one_line(run_cli("migrate", "--database-url", url_of(server, username=role)))
    assert line == (
        f'chatcrm: error: PostgreSQL at {where(server)} did not accept user "{role}" '
        f'(role "{role}" does not exist); check the user and password in --database-url'
    )


def test_a_host_name_that_does_not_resolve() -> None:
    # .invalid never resolves (RFC 2606).
    url = "postgresql://postgres@no-such-host.invalid:5432/chatcrm"
    # What is checked is the resolver's answer, not its speed: on a busy test machine it
    # once took longer than the default 5 s to say the name does not exist, and the
    # command then (rightly) reported no answer in time.
    slow_resolver = {"CHATCRM_DB_CONNECT_TIMEOUT": "60"}
    result = run_cli("migrate", "--database-url", url, env=slow_resolver)
    assert failed_with_one_line(result) == (
        'chatcrm: error: cannot find the PostgreSQL host "no-such-host.invalid" '
        "(unknown host name); check the host in --database-url"
    )


def test_a_socket_folder_without_a_server(tmp_path: Path) -> None:
    url = f"postgresql://postgres@/chatcrm?host={tmp_path}"
    assert failed_with_one_line(run_cli("migrate", "--database-url", url)) == (
        f"chatcrm: error: cannot connect to PostgreSQL at the Unix socket "
        f"{tmp_path}/.s.PGSQL.5432 (no server socket there); is the server running? "
        "check --database-url"
    )


def test_serve_that_cannot_open_its_database_leaves_no_metrics_folder(tmp_path: Path) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    url = "postgresql://postgres@127.0.0.1:1/chatcrm"
    result = run_cli("serve", "--port", "0", "--database-url", url, env={"TMPDIR": str(temporary)})
    assert failed_with_one_line(result) == REFUSED
    assert list(temporary.iterdir()) == []
