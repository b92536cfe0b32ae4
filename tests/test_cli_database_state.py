"""What the database holds decides what a command does (docs/operations.md 1.2 and 1.4): a
database a newer chatcrm migrated is used as it is, with one line on stderr; one that is
not chatcrm's, a file that is not a database and a port no server has are refused in one
line naming the database and the setting; a value an option does not take is a usage
error (status 2), whatever the database holds. Real commands, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import asyncpg
import httpx
import pytest
from sqlalchemy.engine import make_url

from chatcrm.db.migrate import head_revision
from tests.conftest import PG_ADMIN_URL, create_pg_database, drop_pg_database
from tests.servers import serve
from tests.test_cli import failed_with_one_line, init_json, run_cli, succeeded

SOME_ID = "01a214de-0000-7000-8000-000000000000"
NEWER = "0999"  # a revision no migration of this version names
BACKENDS = ("sqlite", "postgresql")


def _pg(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


async def _pg_run(url: str, statements: list[str]) -> list[str]:
    conn = await asyncpg.connect(_pg(url), timeout=10)
    try:
        found: list[str] = []
        for statement in statements:
            if statement.startswith("SELECT"):
                found.extend(str(r[0]) for r in await conn.fetch(statement))
            else:
                await conn.execute(statement)
        return found
    finally:
        await conn.close()


def sql(url: str, *statements: str) -> list[str]:
    """Run statements on the database of `url`; what the SELECTs found (first column)."""
    if url.startswith("sqlite"):
        with sqlite3.connect(make_url(url).database or "") as conn:
            found: list[str] = []
            for statement in statements:
                found.extend(str(r[0]) for r in conn.execute(statement).fetchall())
            return found
    return asyncio.run(_pg_run(url, list(statements)))


def tables(url: str) -> set[str]:
    if url.startswith("sqlite"):
        return set(sql(url, "SELECT name FROM sqlite_master WHERE type = 'table'"))
    return set(sql(url, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))


@pytest.fixture(params=BACKENDS)
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A new, empty database: a SQLite file, or a PostgreSQL database `cli_fix_…`."""
    if request.param == "sqlite":
        path = tmp_path / "state.db"
        sqlite3.connect(path).close()
        yield f"sqlite:///{path}"
        return
    drop_pg_database(create_pg_database())  # the test server answers (else skipped)
    name = f"cli_fix_{uuid.uuid4().hex[:12]}"
    sql(PG_ADMIN_URL, f'CREATE DATABASE "{name}"')
    try:
        yield make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    finally:
        sql(PG_ADMIN_URL, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def where(url: str) -> str:
    parsed = make_url(url)
    if url.startswith("sqlite"):
        return f"the SQLite database {parsed.database}"
    return f'PostgreSQL database "{parsed.database}" on {parsed.host}:{parsed.port or 5432}'


# --- a newer chatcrm's database ---------------------------------------------------------------


@pytest.fixture
def newer_url(empty_url: str) -> str:
    """A database a newer chatcrm migrated: this version's schema, at a revision it does
    not know (a newer version's migrations only add)."""
    succeeded(run_cli("migrate", "--database-url", empty_url))
    init_json(empty_url)
    sql(empty_url, f"UPDATE alembic_version SET version_num = '{NEWER}'")
    return empty_url


def newer_line() -> str:
    return (
        f"chatcrm: the database was migrated by a newer chatcrm (revision {NEWER}, this "
        f"version knows up to {head_revision()}); using it as it is"
    )


def test_migrate_on_a_newer_database_has_nothing_to_do(newer_url: str) -> None:
    result = run_cli("migrate", "--database-url", newer_url)
    assert succeeded(result) == ""
    assert result.stderr.splitlines() == [newer_line()]
    assert sql(newer_url, "SELECT version_num FROM alembic_version") == [NEWER]


@pytest.mark.parametrize(
    "command",
    [
        ["accounts", "list", "--json"],
        ["keys", "list"],
        ["workspace", "list"],
        ["users", "list"],
        ["init", "--json"],
    ],
    ids=lambda c: "-".join(c[:2]),
)
def test_every_command_works_on_a_newer_database(newer_url: str, command: list[str]) -> None:
    result = run_cli(*command, "--database-url", newer_url)
    assert succeeded(result).strip()
    assert result.stderr.splitlines() == [newer_line()]
    assert sql(newer_url, "SELECT version_num FROM alembic_version") == [NEWER]


def test_serve_serves_a_newer_database(newer_url: str) -> None:
    with serve(newer_url) as server:
        assert httpx.get(f"{server.base_url}/health", timeout=10).status_code == 200
        key = init_json(newer_url)
        answer = httpx.get(
            f"{server.base_url}/api/workspace/{key['workspaceId']}",
            headers={"Authorization": f"Bearer {key['apiKey']}"},
            timeout=10,
        )
        assert answer.status_code == 200, answer.text
        assert "".join(server.stderr).count(newer_line()) == 1, server.output()


# --- a database that is not chatcrm's -------------------------------------------------------

COMMANDS = {
    "migrate": ["migrate"],
    "init": ["init", "--json"],
    "accounts-list": ["accounts", "list"],
    "keys-create": ["keys", "create", "--account", SOME_ID],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_a_table_of_another_application_is_refused(empty_url: str, command: list[str]) -> None:
    sql(empty_url, "CREATE TABLE accounts (login VARCHAR(40) PRIMARY KEY)")
    result = run_cli(*command, "--database-url", empty_url)
    line = failed_with_one_line(result)
    assert result.returncode == 1
    assert line == (
        f"chatcrm: error: {where(empty_url)} holds tables that are not chatcrm's ('accounts' "
        "exists already); chatcrm needs an empty database of its own: create one, or fix "
        "--database-url"
    )
    assert tables(empty_url) == {"accounts"}  # nothing made beside it


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_tables_with_names_chatcrm_does_not_use_are_refused(
    empty_url: str, command: list[str]
) -> None:
    """A database another application uses, with no name of chatcrm's among its tables (a
    listing pointed at the wrong database must not install chatcrm's schema beside them)."""
    sql(empty_url, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    sql(empty_url, "CREATE VIEW recent_notes AS SELECT * FROM notes")
    line = failed_with_one_line(run_cli(*command, "--database-url", empty_url))
    assert line == (
        f"chatcrm: error: {where(empty_url)} holds tables that are not chatcrm's ('notes' "
        "exists already); chatcrm needs an empty database of its own: create one, or fix "
        "--database-url"
    )
    assert tables(empty_url) == {"notes"}


def test_an_extensions_own_tables_do_not_make_a_database_foreign(empty_url: str) -> None:
    """Tables an extension installs into the schema (as PostGIS does) belong to it, not
    to another application."""
    if empty_url.startswith("sqlite"):
        pytest.skip("PostgreSQL's extensions")
    sql(
        empty_url,
        "CREATE TABLE ext_settings (k TEXT)",
        "CREATE EXTENSION IF NOT EXISTS plpgsql",
    )
    # Make the table a member of an installed extension, as CREATE EXTENSION would.
    sql(empty_url, "ALTER EXTENSION plpgsql ADD TABLE ext_settings")
    try:
        succeeded(run_cli("migrate", "--database-url", empty_url))
        assert "accounts" in tables(empty_url)
    finally:
        sql(empty_url, "ALTER EXTENSION plpgsql DROP TABLE ext_settings")


def test_the_setting_named_is_the_one_the_url_came_from(empty_url: str) -> None:
    sql(empty_url, "CREATE TABLE accounts (login VARCHAR(40) PRIMARY KEY)")
    line = failed_with_one_line(run_cli("migrate", env={"CHATCRM_DATABASE_URL": empty_url}))
    assert line.endswith("create one, or fix $CHATCRM_DATABASE_URL"), line


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_another_applications_alembic_history_is_refused(
    empty_url: str, command: list[str]
) -> None:
    sql(
        empty_url,
        "CREATE TABLE alembic_version (version_num VARCHAR(32) NOT NULL)",
        "INSERT INTO alembic_version VALUES ('ae1027a6acf')",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY)",
    )
    result = run_cli(*command, "--database-url", empty_url)
    line = failed_with_one_line(result)
    assert result.returncode == 1
    assert line == (
        f"chatcrm: error: {where(empty_url)} holds tables that are not chatcrm's (its Alembic "
        "revision 'ae1027a6acf' is none of chatcrm's); chatcrm needs an empty database of its "
        "own: create one, or fix --database-url"
    )
    assert tables(empty_url) == {"alembic_version", "orders"}
    assert sql(empty_url, "SELECT version_num FROM alembic_version") == ["ae1027a6acf"]


# --- a file or a port that cannot be a database's -----------------------------------------


@pytest.mark.parametrize("command", [["migrate"], ["init", "--json"], ["serve", "--port", "0"]])
def test_a_sqlite_file_that_cannot_be_created(command: list[str]) -> None:
    line = failed_with_one_line(run_cli(*command, "--database-url", "sqlite:////proc/x.db"))
    assert line == (
        "chatcrm: error: cannot open the SQLite database /proc/x.db (unable to open database "
        "file); its folder must let chatcrm create and write files: check the path in "
        "--database-url"
    )


@pytest.mark.parametrize(
    "command", [["migrate"], ["accounts", "list"], ["keys", "list"], ["serve", "--port", "0"]]
)
def test_a_file_that_is_not_a_database(tmp_path: Path, command: list[str]) -> None:
    notes = tmp_path / "out.txt"
    notes.write_text("some notes, not a database\n" * 20)
    result = run_cli(*command, env={"CHATCRM_DATABASE_URL": f"sqlite:///{notes}"})
    line = failed_with_one_line(result)
    assert result.returncode == 1
    assert line == (
        f"chatcrm: error: {notes} is not a SQLite database (file is not a database); check "
        "the path in $CHATCRM_DATABASE_URL"
    )
    assert notes.read_text() == "some notes, not a database\n" * 20


@pytest.mark.parametrize("port", ["99999", "65536"])
@pytest.mark.parametrize("command", [["migrate"], ["accounts", "list"]])
def test_a_port_above_65535_is_not_a_database_url(port: str, command: list[str]) -> None:
    url = f"postgresql://postgres:s3cr3t@127.0.0.1:{port}/x"
    line = failed_with_one_line(run_cli(*command, "--database-url", url))
    assert line == (
        f"chatcrm: error: not a database URL: 'postgresql://postgres:***@127.0.0.1:{port}/x': "
        "the port must be 0 to 65535 (from --database-url)"
    )


# --- a value an option or argument does not take: status 2 --------------------------------


@pytest.fixture(scope="module")
def account_url(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, str]]:
    url = f"sqlite:///{tmp_path_factory.mktemp('values') / 'chatcrm.db'}"
    return url, init_json(url)


def usage_error(args: list[str], says: str) -> None:
    result = run_cli(*args)
    line = failed_with_one_line(result)
    assert result.returncode == 2, (result.returncode, line)
    assert line.startswith("chatcrm: error: Invalid value for ") and says in line, line
    assert line.endswith("--help')"), line  # click's pointer to the command's help


@pytest.mark.parametrize("rate", ["abc", "-5", "inf", "nan", "1e400", "", "3e11"])
def test_keys_limit_with_a_rate_that_is_none(
    account_url: tuple[str, dict[str, str]], rate: str
) -> None:
    url, created = account_url
    key_id = created["apiKey"].split("_")[1]
    usage_error(
        ["keys", "limit", key_id, rate, "--database-url", url],
        f"Invalid value for 'RATE': {rate!r} is not a number of requests per second from 0 "
        "(unlimited) to 1000000, or 'default'.",
    )
    listed = succeeded(run_cli("keys", "list", "--database-url", url))
    assert "default" in listed  # the limit did not change


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--email", "notanemail"], "'--email': must be a valid email address"),
        (["--name", ""], "'--name': must not be empty"),
        (["--name", "x" * 201], "'--name': "),
    ],
)
def test_users_create_with_a_value_it_does_not_take(
    account_url: tuple[str, dict[str, str]], options: list[str], says: str
) -> None:
    url, created = account_url
    given = {"--email": "ana@example.com", "--name": "Ana", "--role": "admin"}
    given.update(dict(zip(options[::2], options[1::2], strict=True)))
    args = [item for pair in given.items() for item in pair]
    usage_error(
        ["users", "create", "--account", created["accountId"], *args, "--database-url", url],
        says,
    )
    # Even for an account that is not one: the value is wrong as written.
    usage_error(["users", "create", "--account", SOME_ID, *args, "--database-url", url], says)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--name", ""], "'--name': must not be empty"),
        # Worded for the option (not the API's `["*"] or scopes of: …`).
        (["--scopes", "everything"], "'--scopes': 'everything' is not a scope: * or any of "),
        (["--scopes", "contacts:read,*"], "'--scopes': * stands alone: * or any of contacts:read,"),
        (["--expires", "2001-01-01T00:00:00Z"], "'--expires': must be in the future"),
        (["--expires", "soon"], "'--expires': must be an ISO 8601 date-time"),
    ],
)
def test_keys_create_with_a_value_it_does_not_take(
    account_url: tuple[str, dict[str, str]], options: list[str], says: str
) -> None:
    url, created = account_url
    usage_error(
        ["keys", "create", "--account", created["accountId"], *options, "--database-url", url],
        says,
    )


@pytest.mark.parametrize("name", ["", "   ", "x" * 201])
def test_workspace_names_it_does_not_take(
    account_url: tuple[str, dict[str, str]], name: str
) -> None:
    url, created = account_url
    usage_error(
        ["workspace", "create", "--api-key", created["apiKey"], "--name", name,
         "--database-url", url],
        "'--name': must be 1 to 200 characters",
    )  # fmt: skip
    usage_error(
        ["init", "--workspace-name", name, "--database-url", url],
        "'--workspace-name': must be 1 to 200 characters",
    )


def test_workspace_create_with_what_is_not_a_key(account_url: tuple[str, dict[str, str]]) -> None:
    url, _created = account_url
    usage_error(
        ["workspace", "create", "--api-key", "garbage", "--database-url", url],
        "'--api-key': not a chatcrm API key",
    )


def test_what_the_database_refuses_stays_status_1(account_url: tuple[str, dict[str, str]]) -> None:
    url, created = account_url
    account = created["accountId"]
    key = created["apiKey"]
    wrong = key[:-1] + ("A" if key[-1] != "A" else "B")
    invite = ["users", "create", "--email", "twin@example.com", "--name", "Twin"]
    for args in (
        ["keys", "limit", SOME_ID, "5"],  # no such key
        ["users", "create", "--account", SOME_ID, "--email", "a@example.com", "--name", "A",
         "--role", "admin"],  # no such account
        ["keys", "create", "--account", account, "--workspace", SOME_ID],  # not its workspace
        ["workspace", "create", "--api-key", wrong],  # a wrong secret
    ):  # fmt: skip
        result = run_cli(*args, "--database-url", url)
        line = failed_with_one_line(result)
        assert result.returncode == 1, (args, result.stderr)
        if "--workspace" in args:  # and where to find the account's workspaces
            assert line.endswith(f"(`chatcrm workspace list --account {account}` lists them)")
    succeeded(run_cli(*invite, "--account", account, "--role", "admin", "--database-url", url))
    twice = run_cli(*invite, "--account", account, "--role", "admin", "--database-url", url)
    assert failed_with_one_line(twice) == (
        "chatcrm: error: A user with this e-mail address already exists: "
        "`chatcrm users reset-link twin@example.com` gives that user a new link"
    )
    assert twice.returncode == 1


def test_the_url_s_host_wins_over_a_host_parameter(empty_url: str) -> None:
    """docs/operations.md 3.2: with a host in the URL, `?host=` does not choose a socket.
    The migrations' engine took the parameter, so `migrate` and `serve` failed to connect
    where the request pool would have."""
    if empty_url.startswith("sqlite"):
        pytest.skip("PostgreSQL's URLs")
    url = f"{empty_url}?host=/nonexistent-socket-folder"
    succeeded(run_cli("migrate", "--database-url", url))
    assert "accounts" in tables(empty_url)
    succeeded(run_cli("accounts", "list", "--database-url", url))
