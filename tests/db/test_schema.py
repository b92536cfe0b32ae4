"""The migrations build exactly the schema the code queries (db/schema.py): no drift."""

from __future__ import annotations

import asyncio
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from chatcrm.config import Settings
from chatcrm.contacts.table import contacts
from chatcrm.db.engine import standalone_engine
from chatcrm.db.migrate import head_revision
from chatcrm.db.schema import metadata
from chatcrm.opportunities.table import opportunities
from chatcrm.people.tables import users

# Made by migration 0013 only where PostgreSQL's pg_trgm extension can be had; the code
# never names them (the planner picks them for a search).
OPTIONAL_INDEXES = {"ix_contacts_search", "ix_opportunities_search"}


def _not_optional(item: Any, name: str | None, kind: str, reflected: bool, other: Any) -> bool:
    return not (kind == "index" and name in OPTIONAL_INDEXES)


def _differences(database_url: str) -> tuple[list[Any], str | None]:
    async def run() -> tuple[list[Any], str | None]:
        engine = standalone_engine(database_url, Settings(database_url=database_url))
        try:
            async with engine.connect() as conn:

                def compare(sync_conn: Any) -> tuple[list[Any], str | None]:
                    context = MigrationContext.configure(
                        sync_conn,
                        opts={
                            "compare_type": False,
                            "compare_server_default": False,
                            "include_object": _not_optional,
                        },
                    )
                    return compare_metadata(context, metadata), context.get_current_revision()

                return await conn.run_sync(compare)
        finally:
            await engine.dispose()

    return asyncio.run(run())


def test_migrated_database_matches_the_schema_module(database_url: str) -> None:
    # The record tables are built from their field tables, in their packages.
    assert {contacts.name, opportunities.name, users.name} <= set(metadata.tables)
    differences, revision = _differences(database_url)
    assert revision == head_revision()
    assert differences == []


def test_the_head_read_from_the_files_is_alembics() -> None:
    """Migrating first finds the head without importing Alembic (db/migrate.py): the
    same revision as Alembic's own reading of the scripts."""
    from alembic.script import ScriptDirectory

    from chatcrm.db.migrate import alembic_config

    assert head_revision() is not None
    assert head_revision() == ScriptDirectory.from_config(alembic_config()).get_current_head()
