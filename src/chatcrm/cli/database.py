"""What every command shares: the --database-url option, migrating then working in one
transaction, and reporting any failure as one line on stderr."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
from sqlalchemy.engine import make_url

from chatcrm.cli.connect_failures import connect_failure
from chatcrm.config import DEFAULT_DATABASE_URL, Settings
from chatcrm.db.database import Connection, Database
from chatcrm.db.engine import DatabaseUrlError, standalone_engine
from chatcrm.db.migrate import upgrade

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

    @classmethod
    def refused(cls, exc: Any, options: Mapping[str, str]) -> CommandError:
        """A service's refusal (a ServiceError) worded for the command line: each field's
        message after the option that gave the field (`options`: wire name → option),
        else the refusal's own message."""
        errors = getattr(exc, "errors", None) or []
        if not errors:
            return cls(exc.message)
        return cls("; ".join(f"{options.get(e.field, e.field)}: {e.message}" for e in errors))


def fail(message: str) -> NoReturn:
    click.echo(f"chatcrm: error: {message}", err=True)
    sys.exit(1)


def settings_for(database_url: str | None) -> Settings:
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


def _setting(database_url: str | None) -> str:
    """The setting a database URL came from: the one the person fixes."""
    from_environment = not database_url and "CHATCRM_DATABASE_URL" in os.environ
    return "$CHATCRM_DATABASE_URL" if from_environment else "--database-url"


def missing_sqlite_file(url: str) -> Path | None:
    """The absolute path of a SQLite database file that does not exist yet (None for an
    existing file, another backend, or what is not a URL: the engine says why)."""
    try:
        parsed = make_url(url)
    except Exception:
        return None
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    path = Path(parsed.database).expanduser()
    return None if path.exists() else path.absolute()


def run_db(
    database_url: str | None,
    work: Callable[[Connection], Awaitable[T]],
    *,
    create: bool = False,
    migrated: list[tuple[str | None, str]] | None = None,
) -> T:
    """Migrate (idempotent, locked; what it did goes into `migrated`), then run `work` in
    one transaction. Only `create`
    (serve, init, migrate) may create a SQLite file: any other command run in the wrong
    folder would otherwise work on a new, empty database and find nothing."""
    settings = settings_for(database_url)
    if not create:
        missing = missing_sqlite_file(settings.database_url)
        if missing is not None:
            setting = _setting(database_url)
            fix = "pass --database-url" if setting == "--database-url" else f"fix {setting}"
            fail(f"no database at {missing} (run chatcrm init, or {fix})")

    async def main() -> T:
        engine = standalone_engine(settings.database_url, settings)
        try:
            done = await upgrade(engine)
        finally:
            await engine.dispose()
        if done is not None and migrated is not None:
            migrated.append(done)
        db = Database(settings)
        try:
            async with db.transaction() as conn:
                return await work(conn)
        finally:
            await db.dispose()

    try:
        return asyncio.run(main())
    except CommandError as exc:
        fail(str(exc))
    except DatabaseUrlError as exc:
        fail(f"{exc} (from {_setting(database_url)})")  # the setting the person fixes
    except Exception as exc:  # a CLI user wants one line, not a traceback
        # Name the setting the URL came from: the person fixes that one.
        sentence = connect_failure(exc, settings.database_url, setting=_setting(database_url))
        fail(sentence or f"{type(exc).__name__}: {_one_line(exc)}")


def print_json(value: dict[str, Any]) -> None:
    click.echo(json.dumps(value))
