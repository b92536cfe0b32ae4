"""The CLI's database: only `serve`, `init` and `migrate` create a SQLite file; every other
command refuses a file that does not exist, in one line naming the path it looked at. And
`serve` on a port already taken fails in one line too."""

from __future__ import annotations

import os
import re
import signal
import socket
import sqlite3
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from chatcrm.cli.connect_failures import database_failure
from chatcrm.db import engine
from chatcrm.db.engine import DatabaseUrlError, async_url
from tests.test_cli import chatcrm_executable, failed_with_one_line, run_cli, succeeded

ACCOUNT = "01a214de-0000-7000-8000-000000000000"
COMMANDS = [
    ["accounts", "list"],
    ["workspace", "list"],
    ["keys", "list"],
    ["keys", "create", "--account", ACCOUNT, "--json"],
    ["keys", "revoke", ACCOUNT],
    ["keys", "limit", ACCOUNT, "5"],
    ["users", "list"],
    ["workspace", "create", "--api-key", "ccrm_" + "ab" * 16 + "_" + "x" * 43, "--json"],
]


def run_in(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")}
    environment.update(env or {})
    return subprocess.run(
        [chatcrm_executable(), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        cwd=folder,
        check=False,
    )


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: "-".join(c[:2]))
def test_a_command_in_another_folder_refuses_the_missing_default_database(
    tmp_path: Path, command: list[str]
) -> None:
    result = run_in(tmp_path, *command)
    line = failed_with_one_line(result)
    assert result.returncode == 1
    where = (tmp_path / "chatcrm.db").absolute()
    assert line == (
        f"chatcrm: error: no database at {where} (run chatcrm init, or pass --database-url)"
    )
    assert not where.exists()
    assert list(tmp_path.iterdir()) == []


def test_a_missing_file_named_by_the_environment_names_that_setting(tmp_path: Path) -> None:
    where = tmp_path / "other.db"
    result = run_in(
        tmp_path, "accounts", "list", env={"CHATCRM_DATABASE_URL": f"sqlite:///{where}"}
    )
    line = failed_with_one_line(result)
    assert result.returncode == 1
    assert f"no database at {where} " in line and "$CHATCRM_DATABASE_URL" in line, line
    assert not where.exists()


def test_a_relative_path_is_named_absolute(tmp_path: Path) -> None:
    line = failed_with_one_line(
        run_in(tmp_path, "keys", "list", "--database-url", "sqlite:///x.db")
    )
    assert f"no database at {tmp_path / 'x.db'} " in line, line
    # The URL was given: it is the one to fix, not one to pass.
    assert line.endswith("(run chatcrm init, or fix --database-url)"), line


def test_init_and_migrate_still_create_the_file_then_the_others_use_it(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    succeeded(run_cli("migrate", "--database-url", url))
    succeeded(run_cli("init", "--json", "--database-url", url))
    out = succeeded(run_cli("accounts", "list", "--database-url", url))
    assert len(out.strip().splitlines()) == 2  # the heading and the account


def test_serve_on_a_port_already_taken_fails_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        where = tmp_path / "serve.db"
        result = run_cli("serve", "--port", str(port), "--database-url", f"sqlite:///{where}")
    line = failed_with_one_line(result)
    assert result.returncode == 1
    assert line == f"chatcrm: error: port {port} is already in use on 127.0.0.1"
    assert not where.exists()  # refused before the database is touched


def _has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("host", ["127.0.0.1", "::1"])
def test_serve_prints_links_to_the_port_and_address_it_serves(tmp_path: Path, host: str) -> None:
    """`--port 0` serves on a port the system picks, and an IPv6 `--host` is written in
    brackets: the demo's curl line and invitation link (and the public URL links are made
    from) name the address served, which answers."""
    if host == "::1" and not _has_ipv6_loopback():
        pytest.skip("no IPv6 loopback on this machine")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("CHATCRM_")}
    process = subprocess.Popen(
        [chatcrm_executable(), "serve", "--host", host, "--port", "0",
         "--database-url", f"sqlite:///{tmp_path / 'links.db'}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=environment,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if "curl -s http" in line:
                break
        printed = "".join(lines)
        invite = re.search(r"(http://\S+)/console/#invite/", printed)
        curl = re.search(r"curl -s (http://\S+)/api/workspace/", printed)
        assert invite and curl, printed
        base = curl.group(1)
        assert invite.group(1) == base, printed
        expected = "[::1]" if host == "::1" else host
        assert re.fullmatch(rf"http://{re.escape(expected)}:[1-9]\d*", base), base
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline and process.poll() is None, printed
            time.sleep(0.2)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


def test_an_existing_file_in_a_folder_it_cannot_write_is_named_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite makes an existing file's journal (-wal, -shm) beside it: in a folder the
    service may not write, a command said "OperationalError: attempt to write a readonly
    database", naming neither the database nor the setting. The folder is checked for an
    existing file too (os.access answers for the service's user; the suite runs as root,
    whom permissions do not stop, so it answers here as for another user)."""
    path = tmp_path / "ro" / "crm.db"
    path.parent.mkdir()
    url = f"sqlite:///{path}"
    succeeded(run_cli("init", "--json", "--database-url", url))
    real = os.access
    monkeypatch.setattr(
        engine.os, "access", lambda p, mode: real(p, mode) and Path(p) != path.parent
    )
    with pytest.raises(DatabaseUrlError, match=r"^the folder of the SQLite file is not writable"):
        async_url(url)
    # The driver's own refusal, should the folder change under a running command.
    said = database_failure(
        sqlite3.OperationalError("attempt to write a readonly database"),
        url,
        setting="--database-url",
    )
    assert said is not None and said.startswith(f"cannot open the SQLite database {path} ")
    assert said.endswith("check the path in --database-url")


def test_a_link_in_a_read_only_folder_to_a_file_in_a_writable_one_is_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite follows the link and writes the journal beside the file it points to: the
    folder of the link was checked, and a setup that worked was refused."""
    target = tmp_path / "rw" / "crm.db"
    target.parent.mkdir()
    succeeded(run_cli("init", "--json", "--database-url", f"sqlite:///{target}"))
    link = tmp_path / "ro" / "link.db"
    link.parent.mkdir()
    link.symlink_to(target)
    real = os.access
    monkeypatch.setattr(
        engine.os, "access", lambda p, mode: real(p, mode) and Path(p) != link.parent
    )
    async_url(f"sqlite:///{link}")  # taken: the journal goes beside crm.db
