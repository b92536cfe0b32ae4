"""`chatcrm citus distribute`: lay a migrated database out on a Citus coordinator."""

from __future__ import annotations

import asyncio
import os
from functools import partial

import click

from chatcrm.cli.connect_failures import database_failure
from chatcrm.cli.database import check_port, database_url_option, fail, say_newer, settings_for
from chatcrm.db.citus import distribute
from chatcrm.db.citus_node import NotACoordinator, check_coordinator, check_workers_answer
from chatcrm.db.engine import DatabaseUrlError, backend_name, standalone_engine
from chatcrm.db.migrate import NewerSchema, upgrade
from chatcrm.events.publisher import publish_everything


@click.group()
def citus() -> None:
    """Run chatcrm on a Citus cluster (docs/scaling.md section 3)."""


@citus.command("distribute")
@database_url_option
def distribute_command(database_url: str | None) -> None:
    """Migrate, then distribute the tenant tables by workspace_id and make accounts,
    workspaces, api_keys and channels reference tables (idempotent; rows move to the
    workers). Run it with the service stopped."""
    settings = settings_for(database_url)
    if backend_name(settings.database_url) != "postgresql":
        # Before any engine: connecting to SQLite would make the file.
        fail("not PostgreSQL: Citus needs a PostgreSQL coordinator")

    async def main() -> list[str]:
        check_port(settings.database_url)
        engine = standalone_engine(settings.database_url, settings)
        try:
            # Refuse before migrating: a database that is not a coordinator stays as it is.
            async with engine.connect() as conn:
                await check_coordinator(conn)
                await check_workers_answer(conn)
            if isinstance(done := await upgrade(engine, lay_out=False), NewerSchema):
                say_newer(done)
            return await distribute(
                engine, before_events_move=partial(publish_everything, settings)
            )
        finally:
            await engine.dispose()

    try:
        done = asyncio.run(main())
    except (NotACoordinator, DatabaseUrlError) as exc:
        fail(str(exc))
    except Exception as exc:  # one line, not a traceback, like every command
        from_environment = not database_url and "CHATCRM_DATABASE_URL" in os.environ
        setting = "$CHATCRM_DATABASE_URL" if from_environment else "--database-url"
        orig = getattr(exc, "orig", None) or exc
        first = (str(orig).strip().splitlines() or [type(exc).__name__])[0]
        fail(database_failure(exc, settings.database_url, setting=setting) or first[:300])
    for line in done or ["nothing to do"]:
        click.echo(line)
