"""Running the service: `chatcrm migrate` and `chatcrm serve`."""

from __future__ import annotations

import errno
import logging
import os
import shutil
import signal
import socket
import sys
from typing import Any

import click

from chatcrm.cli.database import database_url_option, fail, run_db, settings_for
from chatcrm.cli.dispatch import check_schedule
from chatcrm.config import Settings
from chatcrm.db.database import Connection
from chatcrm.db.migrate import NewerSchema
from chatcrm.provisioning import NewAccount, demo_if_empty


@click.command()
@database_url_option
def migrate(database_url: str | None) -> None:
    """Apply the database migrations (safe to run while other nodes do the same)."""

    async def nothing(_: Connection) -> None:
        return None

    migrated: list[tuple[str | None, str] | NewerSchema] = []
    run_db(database_url, nothing, create=True, migrated=migrated)
    done = migrated[0] if migrated else None
    if isinstance(done, NewerSchema):
        return  # nothing to do: run_db said so, on stderr
    if done is not None:  # what an operator upgrading wants to see happened
        click.echo(f"chatcrm: {_migrated_from(*done)}")
    else:
        click.echo("chatcrm: database is up to date")


def _migrated_from(before: str | None, after: str) -> str:
    start = "an empty database" if before is None else f"revision {before}"
    return f"database migrated from {start} to revision {after}"


@click.command()
@database_url_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
def serve(database_url: str | None, host: str, port: int, workers: int) -> None:
    """Serve the API (migrates first; on an empty database creates a demo account)."""
    import tempfile

    import uvicorn

    from chatcrm import logs

    settings = settings_for(database_url)
    if settings.dispatch:
        check_schedule(settings)  # one line now, rather than a failed start in each worker
    # A taken port is one line now, before the database is touched (uvicorn would log it
    # after migrating, in its own words).
    port = check_port(host, port)
    logs.configure(settings.log_level, json=settings.log_json)
    # Metrics of all workers are summed through files in a fresh directory (ops/metrics.py).
    metrics_dir = tempfile.mkdtemp(prefix="chatcrm-metrics-")
    # uvicorn stops on SIGTERM, then raises it again with the handler it found: the
    # default one ended the process there, before the `finally` below removed the
    # directory. This one ends it the same way (status 143), through that `finally`.
    signal.signal(signal.SIGTERM, _stopped_by_sigterm)
    # From here on: a start that fails on the database (SystemExit) removes it too.
    try:
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
        migrated: list[tuple[str | None, str] | NewerSchema] = []
        demo = run_db(database_url, demo_if_empty, create=True, migrated=migrated)
        if migrated and not isinstance(migrated[0], NewerSchema):
            logging.getLogger("chatcrm.migrate").info(_migrated_from(*migrated[0]))
        # Worker processes read their settings from the environment.
        os.environ["CHATCRM_DATABASE_URL"] = settings.database_url
        os.environ["CHATCRM_WORKERS"] = str(workers)
        # Links of invitations and resets name the address people reach: the configured
        # one, else the one served here (never a request's Host header).
        if not settings.public_url:
            os.environ["CHATCRM_PUBLIC_URL"] = _base(host, port)
        if demo is not None:
            _announce_demo(demo, host, port, settings.public_url)
        _run_uvicorn(uvicorn, host=host, port=port, workers=workers, settings=settings)
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)


def _stopped_by_sigterm(signum: int, _frame: object) -> None:
    # A stop asked for is a success (0), as with SIGINT or `--workers N`: a service
    # manager counts an exit status of 143 as a failure (systemd's Restart=on-failure).
    raise SystemExit(0)


def check_port(host: str, port: int) -> int:
    """Fail in one line when `host:port` cannot be listened on: bound as uvicorn binds it
    (SO_REUSEADDR, so a port in TIME_WAIT is not taken), then released. The port to serve
    on: `port`, or for 0 the free one the system chose, so that the links printed and
    the public URL name the port served."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((host, port))
            bound: int = sock.getsockname()[1]
            return bound
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            fail(f"port {port} is already in use on {host}")
        if exc.errno == errno.EACCES:
            fail(f"not allowed to listen on port {port} of {host} (ports below 1024 need root)")
        if exc.errno == errno.EADDRNOTAVAIL:
            fail(f"cannot listen on {host}: not an address of this machine (check --host)")
        if isinstance(exc, socket.gaierror):
            fail(f"cannot listen on {host}: unknown host name (check --host)")
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}")


def _run_uvicorn(uvicorn: Any, *, host: str, port: int, workers: int, settings: Settings) -> None:
    from chatcrm.api.protocols import HTTP_PROTOCOL

    uvicorn.run(
        "chatcrm.app:create_app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level=settings.log_level,
        log_config=None,  # keep our JSON logging
        access_log=False,  # our middleware writes one JSON line per request instead
        server_header=False,
        proxy_headers=False,
        # An unreadable request is answered in the envelope too (api/protocols.py).
        http=HTTP_PROTOCOL,
    )


def _base(host: str, port: int) -> str:
    if host in ("0.0.0.0", "::", ""):  # every address: the loopback one is among them
        return f"http://127.0.0.1:{port}"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _announce_demo(demo: NewAccount, host: str, port: int, public_url: str | None) -> None:
    base = _base(host, port)
    console = (public_url or base).rstrip("/")
    lines = [
        "chatcrm: empty database, created a demo account:",
        f"  account:   {demo.account_id}",
        f"  workspace: {demo.workspace_id}",
        f"  API key:   {demo.api_key}",
        "  (the key is shown once; only its hash is stored)",
        f"  owner:     {demo.owner_email} — set its password to sign in to the console:",
        f"             {console}/console/#invite/{demo.owner_token}",
        "Try it:",
        f"  curl -s {base}/api/workspace/{demo.workspace_id} "
        f"-H 'Authorization: Bearer {demo.api_key}'",
        f"  curl -s -X POST {base}/api/contact -H 'Authorization: Bearer {demo.api_key}' "
        f"-H 'x-workspace-id: {demo.workspace_id}' -H 'Content-Type: application/json' "
        """-d '{"name": "Ana", "email": "ana@example.com"}'""",
    ]
    click.echo("\n".join(lines))
    sys.stdout.flush()
