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

from chatcrm.cli.connect_failures import database_failure
from chatcrm.config import DEFAULT_DATABASE_URL, Settings
from chatcrm.core.urls import without_password
from chatcrm.db.database import Connection, Database
from chatcrm.db.engine import DatabaseUrlError, standalone_engine
from chatcrm.db.migrate import NewerSchema, upgrade

T = TypeVar("T")

DATABASE_URL_HELP = (
    "Database URL: sqlite:///path.db (embedded) or postgresql://user@host/db. "
    f"Default: $CHATCRM_DATABASE_URL, else {DEFAULT_DATABASE_URL}."
)
database_url_option = click.option(
    "--database-url", "database_url", default=None, metavar="URL", help=DATABASE_URL_HELP
)


# Fields whose value is checked against the database (a workspace of the account): a
# refusal of one depends on what the database holds, not on the option as written.
DATABASE_CHECKED = frozenset({"workspaceIds"})


# What to do after "no account with id …": the command that shows the ids there are.
ACCOUNTS_HINT = "`chatcrm accounts list` lists them"


class CommandError(Exception):
    """A failure to report as one line on stderr."""

    @classmethod
    def refused(
        cls, exc: Any, options: Mapping[str, str], *, account_id: str | None = None
    ) -> CommandError | click.UsageError:
        """A service's refusal (a ServiceError) worded for the command line: each field's
        message after the option that gave the field (`options`: wire name → option),
        else the refusal's own message. A value refused as written (422, of no field
        checked against the database) is a usage error, exit status 2, as click's own
        checks of a value are: `Invalid value for '--email': …`. A workspace not of the
        account (`account_id`) says where to find the account's."""
        errors = getattr(exc, "errors", None) or []
        if not errors:
            return cls(exc.message)
        if getattr(exc, "status", None) == 422 and all(
            e.field in options and e.field not in DATABASE_CHECKED for e in errors
        ):
            return invalid_values([(options[e.field], e.message) for e in errors])
        said = "; ".join(f"{options.get(e.field, e.field)}: {e.message}" for e in errors)
        if account_id and any(e.field == "workspaceIds" for e in errors):
            said += f" (`chatcrm workspace list --account {account_id}` lists them)"
        return cls(said)


def invalid_values(problems: list[tuple[str, str]]) -> click.UsageError:
    """A usage error for values of options (`(option, what is wrong)`), worded as click
    words its own (`Invalid value for '--name': …`)."""
    ctx = click.get_current_context(silent=True)
    if len(problems) == 1:
        option, message = problems[0]
        return click.BadParameter(message, ctx=ctx, param_hint=f"'{option}'")
    return click.UsageError(
        "; ".join(f"Invalid value for '{option}': {message}" for option, message in problems),
        ctx=ctx,
    )


def check_values(table: Any, body: dict[str, Any], options: Mapping[str, str]) -> None:
    """The values of a create `body` as its field `table` checks them, before the database
    is touched: what it refuses is a usage error (exit status 2) naming the options."""
    from chatcrm.records import bodies

    errors = bodies.create_body(table, body, workspace_key=False).errors
    if errors:
        raise invalid_values([(options.get(e.field, e.field), e.message) for e in errors])


def one_to_200_characters(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """An option's callback: a name of 1 to 200 characters, not only spaces (as the API's
    names), else a usage error (exit status 2) naming the option."""
    if value is not None and (not value.strip() or len(value) > 200):
        raise click.BadParameter("must be 1 to 200 characters, not only spaces", ctx, param)
    return value


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


def check_port(url: str) -> None:
    """Refuse a URL whose port no server can have (the driver's OverflowError names
    neither the URL nor the setting). What is not a URL at all: the engine says why."""
    try:
        port = make_url(url).port
    except Exception:
        return
    if port is not None and not 0 <= port <= 65535:
        raise DatabaseUrlError(
            f"not a database URL: {without_password(url)!r}: the port must be 0 to 65535"
        )


def open_sqlite_file(url: str, settings: Settings) -> None:
    """Open a SQLite database file once, in this thread: a file that cannot be created or
    is not a database fails here (sqlite3's error, worded by database_failure). Through
    the async driver the same failure would race the end of the process, its thread
    answering a loop already closed with a traceback."""
    import sqlite3

    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return
    path = Path(parsed.database).expanduser()
    conn = sqlite3.connect(path, timeout=settings.sqlite_busy_timeout_ms / 1000)
    try:
        conn.execute("PRAGMA schema_version").fetchone()  # reads the file's header
    finally:
        conn.close()


def say_newer(newer: NewerSchema) -> None:
    """The one line a command says on a database a newer chatcrm migrated (on stderr:
    stdout keeps its one line or JSON object)."""
    click.echo(
        f"chatcrm: the database was migrated by a newer chatcrm (revision {newer.revision}, "
        f"this version knows up to {newer.head}); using it as it is",
        err=True,
    )


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
    migrated: list[tuple[str | None, str] | NewerSchema] | None = None,
) -> T:
    """Migrate (idempotent, locked; what it did goes into `migrated`), then run `work` in
    one transaction. Only `create`
    (serve, init, migrate) may create a SQLite file: any other command run in the wrong
    folder would otherwise work on a new, empty database and find nothing. A database a
    newer chatcrm migrated is used as it is, said in one line on stderr."""
    settings = settings_for(database_url)
    if not create:
        missing = missing_sqlite_file(settings.database_url)
        if missing is not None:
            # The default file (nothing named one): pass a URL; a URL given: fix it.
            named = database_url or "CHATCRM_DATABASE_URL" in os.environ
            fix = f"fix {_setting(database_url)}" if named else "pass --database-url"
            fail(f"no database at {missing} (run chatcrm init, or {fix})")

    async def main() -> T:
        check_port(settings.database_url)
        engine = standalone_engine(settings.database_url, settings)  # checks the URL
        try:
            open_sqlite_file(settings.database_url, settings)
            done = await upgrade(engine)
        finally:
            await engine.dispose()
        if isinstance(done, NewerSchema):
            say_newer(done)
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
    except click.UsageError:  # a value refused as written: click's line, exit status 2
        raise
    except DatabaseUrlError as exc:
        fail(f"{exc} (from {_setting(database_url)})")  # the setting the person fixes
    except Exception as exc:  # a CLI user wants one line, not a traceback
        # Name the setting the URL came from: the person fixes that one.
        sentence = database_failure(exc, settings.database_url, setting=_setting(database_url))
        fail(sentence or f"{type(exc).__name__}: {_one_line(exc)}")


def print_json(value: dict[str, Any]) -> None:
    click.echo(json.dumps(value))
