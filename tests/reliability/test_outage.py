"""Database outages (contract section 5, C): while PostgreSQL is down, API calls answer
503 SERVICE_UNAVAILABLE with `Retry-After`, quickly; `/ready` is 503 and `/health` 200;
when the database is back, the same app serves again by itself.

The test runs its own PostgreSQL instance (initdb + pg_ctl), so it can stop and start it.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import asyncpg
import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy.engine import make_url

from chatcrm.app import create_app
from chatcrm.config import Settings
from tests.client import Api, error, ok_data, unique_email
from tests.conftest import IN_CI, PG_ADMIN_URL, migrate, new_account

pytestmark = [pytest.mark.slow, pytest.mark.postgres_only]

MAX_ANSWER_SECONDS = 5.0


def _bin_dir() -> Path | None:
    found = [
        d
        for d in Path("/usr/lib/postgresql").glob("*/bin")
        if (d / "initdb").exists() and (d / "pg_ctl").exists()
    ]
    if not found:
        return None
    return max(found, key=lambda d: int(d.parent.name) if d.parent.name.isdigit() else 0)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class PgInstance:
    """A throwaway PostgreSQL server in a temporary directory."""

    def __init__(self, bin_dir: Path) -> None:
        self.bin_dir = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="chatcrm-pg-"))
        self.data = self.root / "data"
        self.run_dir = self.root / "run"  # socket and log
        self.port = _free_port()
        self.as_root = os.geteuid() == 0

    def _cmd(self, *args: str) -> None:
        cmd = [str(self.bin_dir / args[0]), *args[1:]]
        if self.as_root:  # PostgreSQL refuses to run as root
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, (cmd, done.stdout, done.stderr, self.log())

    def log(self) -> str:
        path = self.run_dir / "postgres.log"
        return path.read_text()[-2000:] if path.exists() else ""

    def init(self) -> None:
        self.data.mkdir()
        self.run_dir.mkdir()
        if self.as_root:
            user = pwd.getpwnam("postgres")
            self.root.chmod(0o755)
            for path in (self.data, self.run_dir):
                os.chown(path, user.pw_uid, user.pw_gid)
        self.data.chmod(0o700)
        self._cmd("initdb", "-A", "trust", "-U", "postgres", "-D", str(self.data))

    def start(self) -> None:
        options = f"-p {self.port} -k {self.run_dir} -c listen_addresses=127.0.0.1"
        self._cmd(
            "pg_ctl",
            "-w",
            "-D",
            str(self.data),
            "-l",
            str(self.run_dir / "postgres.log"),
            "-o",
            options,
            "start",
        )

    def stop(self) -> None:
        self._cmd("pg_ctl", "-w", "-D", str(self.data), "stop", "-m", "fast")

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def remove(self) -> None:
        if self.running():
            with suppress(AssertionError):
                self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def pg_instance() -> Iterator[PgInstance]:
    bin_dir = _bin_dir()
    missing = None
    if bin_dir is None:
        missing = "PostgreSQL server binaries (initdb, pg_ctl) not found"
    elif os.geteuid() == 0 and shutil.which("runuser") is None:
        missing = "running as root without runuser"
    if missing is not None:
        if IN_CI:
            pytest.fail(f"{missing}; CI must run the outage test", pytrace=False)
        pytest.skip(missing)
    assert bin_dir is not None
    instance = PgInstance(bin_dir)
    try:
        instance.init()
        instance.start()
        yield instance
    finally:
        instance.remove()


async def _create_database(admin_url: str, name: str) -> None:
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()


def timed(call: Callable[[], httpx.Response]) -> httpx.Response:
    start = time.monotonic()
    response = call()
    took = time.monotonic() - start
    assert took < MAX_ANSWER_SECONDS, (took, response.status_code)
    return response


def unavailable(response: httpx.Response) -> None:
    body = error(response, 503, "SERVICE_UNAVAILABLE")
    assert body["data"] is None
    assert int(response.headers["retry-after"]) >= 1


def test_a_database_outage_is_503_and_the_service_recovers_by_itself() -> None:
    with pg_instance() as pg:
        name = f"chatcrm_outage_{uuid.uuid4().hex[:8]}"
        asyncio.run(_create_database(pg.url("postgres"), name))
        url = pg.url(name)
        migrate(url)
        account = new_account(url)
        settings = Settings(
            database_url=url,
            db_connect_timeout=1,
            db_statement_timeout=2,
            rate_limit=0,
            access_log=False,
        )
        with TestClient(create_app(settings), raise_server_exceptions=False) as http:
            api = Api(http, account)
            contact = api.create_contact(name="Before")
            cid = contact["id"]
            calls: dict[str, Callable[[], httpx.Response]] = {
                "get contact": lambda: api.get_contact(cid),
                "list contacts": lambda: api.get("/api/contact"),
                "create contact": lambda: api.post(
                    "/api/contact", json={"name": "During", "email": unique_email()}
                ),
                "update contact": lambda: api.update_contact(
                    cid, {"paramToUpdate": "lastname", "lastname": "During"}
                ),
                "create opportunity": lambda: api.post(
                    "/api/opportunity", json={"name": "Deal", "amount": 1}
                ),
                "get workspace": lambda: api.get(f"/api/workspace/{api.ws}"),
                "idempotent create": lambda: api.post(
                    "/api/contact",
                    json={"name": "Keyed", "email": "keyed@example.com"},
                    headers={"Idempotency-Key": "outage-1"},
                ),
            }
            for what, call in calls.items():
                if what != "idempotent create":  # its key is first sent during the outage
                    assert timed(call).status_code == 200, what
            ready = ok_data(http.get("/ready"))
            assert ready == {"status": "ready", "database": "postgresql"}

            pg.stop()
            # Long enough for the key cache (5 s) to expire: then even authentication
            # needs the database, and must answer 503 too.
            outage_started = time.monotonic()
            rounds = 0
            while time.monotonic() - outage_started < 6 or rounds < 2:
                for what, call in calls.items():
                    response = timed(call)
                    assert response.status_code == 503, (what, response.text)
                    unavailable(response)
                unavailable(timed(lambda: http.get("/ready")))
                health = timed(lambda: http.get("/health"))
                assert ok_data(health) == {"status": "ok"}
                rounds += 1
                time.sleep(0.2)

            pg.start()
            failures = 0
            while True:
                response = timed(lambda: api.get_contact(cid))
                if response.status_code == 200:
                    break
                unavailable(response)
                failures += 1
                assert failures <= 3, "the service did not recover by itself"
                time.sleep(0.2)
            for what, call in calls.items():
                response = timed(call)
                assert response.status_code == 200, (what, response.text)
                assert "idempotent-replayed" not in response.headers, what  # 503s were not kept
            assert ok_data(timed(lambda: http.get("/ready")))["status"] == "ready"
            after = ok_data(api.get_contact(cid))["data"][0]
            assert after["lastname"] == "During"
            names = sorted(c["name"] for c in ok_data(api.get("/api/contact"))["data"])
            assert names == ["Before", "During", "During", "Keyed"], names


async def _admin(*statements: str) -> None:
    conn = await asyncpg.connect(PG_ADMIN_URL)
    try:
        for statement in statements:
            await conn.execute(statement)
    finally:
        await conn.close()


def test_a_database_that_refuses_connections_or_is_gone_is_503(postgres_url: str) -> None:
    """The server is up but the database takes no connections (`ALLOW_CONNECTIONS false`,
    SQLSTATE 55000) or is not there (renamed: 3D000): unreachable for the service all the
    same — 503 with `Retry-After`, not a 500 — and served again once it is back."""
    name = make_url(postgres_url).database
    moved = f"{name}_moved"
    account = new_account(postgres_url)
    settings = Settings(database_url=postgres_url, rate_limit=0, access_log=False)
    # Ends the pool's connections, so that the next request must open one.
    drop_sessions = (
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        f" WHERE datname = '{name}' AND pid <> pg_backend_pid()"
    )
    outages = [
        (
            [f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false', drop_sessions],
            [f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true'],
        ),
        (  # closed first, so that none of the app's pollers connects again before the rename
            [
                f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false',
                drop_sessions,
                f'ALTER DATABASE "{name}" RENAME TO "{moved}"',
            ],
            [
                f'ALTER DATABASE "{moved}" RENAME TO "{name}"',
                f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true',
            ],
        ),
    ]
    with TestClient(create_app(settings), raise_server_exceptions=False) as http:
        api = Api(http, account)
        cid = api.create_contact(name="Before")["id"]
        for begin, end in outages:
            asyncio.run(_admin(*begin))
            try:
                for _ in range(3):
                    unavailable(timed(lambda: api.get_contact(cid)))
                    unavailable(timed(lambda: http.get("/ready")))
            finally:
                asyncio.run(_admin(*end))
            assert timed(lambda: api.get_contact(cid)).status_code == 200
