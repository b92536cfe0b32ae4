"""A Citus cluster for the tests: a coordinator and two workers on loopback, and fresh
databases on it.

The cluster is `CHATCRM_TEST_CITUS_URL` when set (an admin URL of a coordinator whose
workers are in that database's metadata), else three PostgreSQL 15 data directories
started here in a temporary directory and removed at the end of the session. Citus is
installed from `../shared/vendor/` (relative to the repository root) when the
extension is missing, which needs root; otherwise the Citus tier is unavailable and
`Unavailable` says why.
"""

from __future__ import annotations

import asyncio
import os
import platform
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy.engine import make_url

from tests.machine import installing

PG_BIN = Path("/usr/lib/postgresql/15/bin")
CITUS_SO = Path("/usr/lib/postgresql/15/lib/citus.so")
# The vendored Citus sits next to the repository, never at a path of one machine.
VENDOR = Path(__file__).resolve().parents[1].parent / "shared" / "vendor"
SOURCE_TARBALL = "citus-13.2.2.tar.gz"
BUILT_TARBALL = "citus-13.2.2-pg15-amd64.tar.gz"
WORKERS = 2


class Unavailable(Exception):
    """The Citus tier cannot be had here; the message says why."""


def _sql(url: str, *statements: str) -> list[list[Any]]:
    """Run statements one by one in autocommit on `url`; the rows of each. In a thread of
    its own, so it works from test code that already runs an event loop."""

    async def run() -> list[list[Any]]:
        conn = await asyncpg.connect(_plain(url), timeout=10)
        try:
            return [[tuple(r) for r in await conn.fetch(s)] for s in statements]
        finally:
            await conn.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(run())).result()


def _plain(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _with_database(url: str, database: str) -> str:
    return make_url(url).set(database=database).render_as_string(hide_password=False)


def _run(cmd: Sequence[str], *, user: str | None = None, cwd: Path | None = None) -> None:
    """Run a command (as `user` when given, through runuser); its output in the error."""
    if user is not None:
        cmd = ["runuser", "-u", user, "--", *cmd]
    done = subprocess.run(
        cmd, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise Unavailable(f"`{' '.join(cmd)}` failed ({done.returncode}): {' / '.join(tail)}")


# --- installing the extension ---------------------------------------------------------


def ensure_citus() -> None:
    """Install Citus into the system's PostgreSQL 15 when citus.so is missing: the
    prebuilt files on PostgreSQL 15 / x86_64, else a build from source (vendor README);
    one test process at a time."""
    if CITUS_SO.exists():
        return
    with installing():
        if not CITUS_SO.exists():
            _install_citus()


def _install_citus() -> None:
    if not (PG_BIN / "initdb").exists():
        raise Unavailable(f"PostgreSQL 15 is not installed ({PG_BIN}/initdb is missing)")
    if os.geteuid() != 0:
        raise Unavailable(f"{CITUS_SO} is missing and installing Citus needs root")
    if not VENDOR.is_dir():
        raise Unavailable(f"{CITUS_SO} is missing and there is no vendor directory {VENDOR}")
    apt = {"DEBIAN_FRONTEND": "noninteractive"}
    version = subprocess.run(
        [str(PG_BIN / "pg_config"), "--version"], capture_output=True, text=True, check=False
    ).stdout
    if version.startswith("PostgreSQL 15") and platform.machine() == "x86_64":
        _apt_install(["libcurl4", "liblz4-1", "libzstd1"], apt)
        _run(["tar", "-xzf", str(VENDOR / BUILT_TARBALL), "-C", "/"])
    else:
        _apt_install(
            [
                "postgresql-server-dev-15",
                "libkrb5-dev",
                "liblz4-dev",
                "libzstd-dev",
                "libcurl4-openssl-dev",
                "build-essential",
            ],
            apt,
        )
        build = Path(tempfile.mkdtemp(prefix="citus-build-"))
        try:
            _run(["tar", "-xzf", str(VENDOR / SOURCE_TARBALL), "-C", str(build)])
            src = build / SOURCE_TARBALL.removesuffix(".tar.gz")
            _run(["./configure", f"PG_CONFIG={PG_BIN / 'pg_config'}"], cwd=src)
            _run(["make", "-j2"], cwd=src)
            _run(["make", "install"], cwd=src)
        finally:
            shutil.rmtree(build, ignore_errors=True)
    if not CITUS_SO.exists():
        raise Unavailable(f"installing Citus did not produce {CITUS_SO}")


def _apt_install(packages: list[str], env: dict[str, str]) -> None:
    full_env = {**os.environ, **env}
    cmd = ["apt-get", "install", "-y", "--no-install-recommends", *packages]
    if subprocess.run(cmd, env=full_env, capture_output=True, check=False).returncode != 0:
        # A fresh machine has no package lists yet: fetch them once, then try again.
        subprocess.run(["apt-get", "update"], env=full_env, capture_output=True, check=False)
        _run(cmd)


# --- the cluster -----------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Cluster:
    """Admin URLs (database `postgres`) of a coordinator and its workers."""

    coordinator: str
    workers: list[str]
    directory: Path | None = None  # set when started here: stopped and removed by stop()
    data_dirs: list[Path] = field(default_factory=list)

    def create_database(self, *, before_citus: Callable[[str], None] | None = None) -> str:
        """A new database with Citus on every node, the workers in its metadata; its
        (coordinator) URL. Citus's metadata is per database, hence all of this.
        `before_citus` is called with the URL before the coordinator gets the extension
        (a database used, then made a coordinator)."""
        name = f"chatcrm_test_{uuid.uuid4().hex[:12]}"
        nodes = [self.coordinator, *self.workers]
        for node in nodes:
            _sql(node, f'CREATE DATABASE "{name}"')
        url = _with_database(self.coordinator, name)
        if before_citus is not None:
            before_citus(url)
        for node in nodes:
            _sql(_with_database(node, name), "CREATE EXTENSION citus")
        coordinator = make_url(self.coordinator)
        _sql(
            url,
            f"SELECT citus_set_coordinator_host('{coordinator.host}', {coordinator.port or 5432})",
            *(
                f"SELECT citus_add_node('{w.host}', {w.port or 5432})"
                for w in map(make_url, self.workers)
            ),
        )
        return url

    def drop_database(self, url: str) -> None:
        name = make_url(url).database
        for node in [self.coordinator, *self.workers]:
            _sql(node, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        """Stop and remove a cluster started here (one named by the environment stays)."""
        if self.directory is None:
            return
        for data in self.data_dirs:
            if (data / "postmaster.pid").exists():
                subprocess.run(
                    [
                        *_as_postgres(),
                        str(PG_BIN / "pg_ctl"),
                        "-D",
                        str(data),
                        "-m",
                        "immediate",
                        "-w",
                        "stop",
                    ],
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    check=False,
                )
        shutil.rmtree(self.directory, ignore_errors=True)
        self.directory = None


def _as_postgres() -> list[str]:
    """initdb refuses root: as root, the server's commands run as `postgres`."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def from_environment(url: str) -> Cluster:
    """The cluster whose coordinator admin URL is `url`: its workers from the metadata."""
    (rows,) = _sql(
        url,
        "SELECT nodename, nodeport FROM pg_dist_node "
        "WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeid",
    )
    if not rows:
        raise Unavailable(f"{url} has no Citus worker nodes in its metadata")
    base = make_url(url)
    workers = [
        base.set(host=host, port=port).render_as_string(hide_password=False) for host, port in rows
    ]
    return Cluster(coordinator=url, workers=workers)


def start(*, workers: int = WORKERS) -> Cluster:
    """Install Citus if needed, then start a coordinator and two workers of PostgreSQL 15
    in a new temporary directory, on free loopback ports."""
    ensure_citus()
    directory = Path(tempfile.mkdtemp(prefix="chatcrm-citus-"))
    if os.geteuid() == 0:
        shutil.chown(directory, "postgres")
    cluster = Cluster(coordinator="", workers=[], directory=directory)
    try:
        urls = []
        for index in range(1 + workers):
            data = directory / f"node{index}"
            port = _free_port()
            _run(
                [
                    str(PG_BIN / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--no-sync",
                    "-E",
                    "UTF8",
                    "--locale=C.UTF-8",
                ],
                user="postgres" if os.geteuid() == 0 else None,
            )
            settings = [
                f"port = {port}",
                "listen_addresses = '127.0.0.1'",
                f"unix_socket_directories = '{directory}'",
                # Citus opens connections between the nodes, many per test database.
                "max_connections = 300",
                "fsync = off",
                "synchronous_commit = off",
                "full_page_writes = off",
            ]
            # Fewer shards than the default 32: a test database is tiny, and every
            # multi-shard statement (the publisher's, the dispatcher's) and every
            # create_distributed_table pays per shard.
            settings += ["shared_preload_libraries = 'citus'", "citus.shard_count = 4"]
            with (data / "postgresql.conf").open("a") as conf:
                conf.write("\n# chatcrm tests: a throw-away server\n" + "\n".join(settings) + "\n")
            cluster.data_dirs.append(data)
            _run(
                [
                    str(PG_BIN / "pg_ctl"),
                    "-D",
                    str(data),
                    "-l",
                    str(directory / f"node{index}.log"),
                    "-w",
                    "-t",
                    "60",
                    "start",
                ],
                user="postgres" if os.geteuid() == 0 else None,
            )
            urls.append(f"postgresql://postgres@127.0.0.1:{port}/postgres")
        cluster.coordinator, cluster.workers = urls[0], urls[1:]
        return cluster
    except BaseException:
        cluster.stop()
        raise
