"""The `chatcrm` command line (contract section 6)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from collections.abc import Awaitable, Callable
from typing import Any, NoReturn, TypeVar

import click

from chatcrm.config import DEFAULT_DATABASE_URL, Settings
from chatcrm.db.database import Connection, Database
from chatcrm.db.engine import DatabaseUrlError, standalone_engine
from chatcrm.db.migrate import upgrade
from chatcrm.provisioning import NewAccount, demo_if_empty, init_account

T = TypeVar("T")

DATABASE_URL_HELP = (
    "Database URL: sqlite:///path.db (embedded) or postgresql://user@host/db. "
    f"Default: $CHATCRM_DATABASE_URL, else {DEFAULT_DATABASE_URL}."
)
database_url_option = click.option(
    "--database-url", "database_url", default=None, metavar="URL", help=DATABASE_URL_HELP
)


class CommandError(Exception):
    """A failure to report as one line on stderr."""


def _fail(message: str) -> NoReturn:
    click.echo(f"chatcrm: error: {message}", err=True)
    sys.exit(1)


def _settings(database_url: str | None) -> Settings:
    settings = Settings()
    if database_url:
        settings = settings.model_copy(update={"database_url": database_url})
    return settings


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    orig = getattr(exc, "orig", None)  # SQLAlchemy wraps driver errors: show the driver's words
    if orig is not None and str(orig).strip():
        first = str(orig).strip().splitlines()[0]
    return first[:300]


def _run_db(database_url: str | None, work: Callable[[Connection], Awaitable[T]]) -> T:
    """Migrate (idempotent, locked), then run `work` in one transaction."""
    settings = _settings(database_url)

    async def main() -> T:
        engine = standalone_engine(settings.database_url, settings)
        try:
            await upgrade(engine)
        finally:
            await engine.dispose()
        db = Database(settings)
        try:
            async with db.transaction() as conn:
                return await work(conn)
        finally:
            await db.dispose()

    try:
        return asyncio.run(main())
    except CommandError as exc:
        _fail(str(exc))
    except DatabaseUrlError as exc:
        _fail(str(exc))
    except Exception as exc:  # a CLI user wants one line, not a traceback
        _fail(f"{type(exc).__name__}: {_one_line(exc)}")


def _print_json(value: dict[str, Any]) -> None:
    click.echo(json.dumps(value))


@click.group()
@click.version_option(package_name="chatcrm")
def main() -> None:
    """chatcrm: contacts and opportunities of chat-driven sales teams."""


@main.command()
@database_url_option
def migrate(database_url: str | None) -> None:
    """Apply the database migrations (safe to run while other nodes do the same)."""

    async def nothing(_: Connection) -> None:
        return None

    _run_db(database_url, nothing)
    click.echo("chatcrm: database is up to date")


@main.command()
@database_url_option
@click.option("--workspace-name", default="My workspace", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def init(database_url: str | None, workspace_name: str, as_json: bool) -> None:
    """Create an account with a workspace (default stages) and an API key."""
    if not workspace_name.strip() or len(workspace_name) > 200:
        _fail("--workspace-name must be 1 to 200 characters")

    async def work(conn: Connection) -> NewAccount:
        return await init_account(conn, workspace_name=workspace_name)

    new = _run_db(database_url, work)
    if as_json:
        _print_json(
            {"accountId": new.account_id, "workspaceId": new.workspace_id, "apiKey": new.api_key}
        )
    else:
        click.echo(f"account:   {new.account_id}")
        click.echo(f"workspace: {new.workspace_id}")
        click.echo(f"API key:   {new.api_key}  (shown once; only its hash is stored)")


@main.group()
def workspace() -> None:
    """Workspaces."""


@workspace.command("create")
@database_url_option
@click.option("--api-key", required=True, help="A key of the account that gets the workspace.")
@click.option("--name", default="My workspace", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def workspace_create(database_url: str | None, api_key: str, name: str, as_json: bool) -> None:
    """Create another workspace of the account that owns --api-key."""
    from chatcrm.auth import keys
    from chatcrm.auth import repository as auth_repo
    from chatcrm.workspaces.service import create_workspace

    if not name.strip() or len(name) > 200:
        _fail("--name must be 1 to 200 characters")
    parsed = keys.parse_key(api_key)
    if parsed is None:
        _fail("--api-key is not a chatcrm API key")
    key_id, secret = parsed

    async def work(conn: Connection) -> str:
        row = await auth_repo.get_key(conn, key_id)
        if (
            row is None
            or row["revoked_at"] is not None
            or not keys.secret_matches(secret, row["secret_hash"])
        ):
            raise CommandError("the API key is unknown or revoked")
        return await create_workspace(conn, account_id=row["account_id"], name=name)

    workspace_id = _run_db(database_url, work)
    if as_json:
        _print_json({"workspaceId": workspace_id})
    else:
        click.echo(f"workspace: {workspace_id}")


@main.group()
def keys() -> None:
    """API keys."""


@keys.command("create")
@database_url_option
@click.option("--account", "account_id", required=True, help="The account id.")
@click.option(
    "--rate-limit",
    type=click.FloatRange(min=0),
    default=None,
    help="Requests per second for this key (bursts of twice that); 0: unlimited. "
    "Default: the service's CHATCRM_RATE_LIMIT.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def keys_create(
    database_url: str | None, account_id: str, rate_limit: float | None, as_json: bool
) -> None:
    """Create an API key for an account (shown once; only its hash is stored)."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.auth.service import create_key

    async def work(conn: Connection) -> tuple[str, str]:
        if not await auth_repo.account_exists(conn, account_id):
            raise CommandError(f"no account with id {account_id!r}")
        return await create_key(conn, account_id=account_id, rate_limit=rate_limit)

    key_id, api_key = _run_db(database_url, work)
    if as_json:
        _print_json({"keyId": key_id, "apiKey": api_key})
    else:
        click.echo(f"key id:  {key_id}")
        click.echo(f"API key: {api_key}  (shown once; only its hash is stored)")


@keys.command("revoke")
@database_url_option
@click.argument("key_id")
def keys_revoke(database_url: str | None, key_id: str) -> None:
    """Revoke an API key by its id (the key itself is accepted too)."""
    from chatcrm.auth import keys as key_format
    from chatcrm.auth import repository as auth_repo
    from chatcrm.core.timestamps import utcnow

    parsed = key_format.parse_key(key_id)
    if parsed is not None:
        key_id = parsed[0]

    async def work(conn: Connection) -> None:
        if not await auth_repo.key_exists(conn, key_id):
            raise CommandError(f"no API key with id {key_id!r}")
        if not await auth_repo.revoke_key(conn, key_id, utcnow()):
            raise CommandError(f"API key {key_id!r} is already revoked")

    _run_db(database_url, work)
    click.echo(f"chatcrm: revoked key {key_id}")


@keys.command("limit")
@database_url_option
@click.argument("key_id")
@click.argument("rate")
def keys_limit(database_url: str | None, key_id: str, rate: str) -> None:
    """Set a key's rate limit: requests per second, 0 for unlimited, or `default`."""
    from chatcrm.auth import keys as key_format
    from chatcrm.auth import repository as auth_repo

    parsed = key_format.parse_key(key_id)
    if parsed is not None:
        key_id = parsed[0]
    value: float | None
    if rate == "default":
        value = None
    else:
        try:
            value = float(rate)
        except ValueError:
            _fail("RATE must be a number of requests per second, 0, or 'default'")
        if not value >= 0 or value == float("inf"):
            _fail("RATE must be a number of requests per second, 0, or 'default'")

    async def work(conn: Connection) -> None:
        if not await auth_repo.set_rate_limit(conn, key_id, value):
            raise CommandError(f"no API key with id {key_id!r}")

    _run_db(database_url, work)
    shown = (
        "the service default" if value is None else ("unlimited" if value == 0 else f"{value:g}/s")
    )
    click.echo(f"chatcrm: key {key_id} rate limit: {shown} (applies within 5 s)")


@main.command()
@database_url_option
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535))
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 64))
def serve(database_url: str | None, host: str, port: int, workers: int) -> None:
    """Serve the API (migrates first; on an empty database creates a demo account)."""
    import tempfile

    import uvicorn

    from chatcrm import logs

    settings = _settings(database_url)
    logs.configure(settings.log_level, json=settings.log_json)
    # Metrics of all workers are summed through files in a fresh directory (ops/metrics.py).
    metrics_dir = tempfile.mkdtemp(prefix="chatcrm-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = metrics_dir
    demo = _run_db(settings.database_url, demo_if_empty)
    # Worker processes read their settings from the environment.
    os.environ["CHATCRM_DATABASE_URL"] = settings.database_url
    os.environ["CHATCRM_WORKERS"] = str(workers)
    if demo is not None:
        _announce_demo(demo, host, port)
    try:
        _run_uvicorn(uvicorn, host=host, port=port, workers=workers, settings=settings)
    finally:
        shutil.rmtree(metrics_dir, ignore_errors=True)


def _run_uvicorn(uvicorn: Any, *, host: str, port: int, workers: int, settings: Settings) -> None:
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
    )


def _announce_demo(demo: NewAccount, host: str, port: int) -> None:
    base = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
    lines = [
        "chatcrm: empty database, created a demo account:",
        f"  account:   {demo.account_id}",
        f"  workspace: {demo.workspace_id}",
        f"  API key:   {demo.api_key}",
        "  (the key is shown once; only its hash is stored)",
        "Try it:",
        f"  curl -s {base}/api/workspace/{demo.workspace_id} "
        f"-H 'Authorization: Bearer {demo.api_key}'",
        f"  curl -s -X POST {base}/api/contact -H 'Authorization: Bearer {demo.api_key}' "
        f"-H 'x-workspace-id: {demo.workspace_id}' -H 'Content-Type: application/json' "
        """-d '{"name": "Ana", "email": "ana@example.com"}'""",
    ]
    click.echo("\n".join(lines))
    sys.stdout.flush()
