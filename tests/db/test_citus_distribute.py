"""`chatcrm citus distribute` (db/citus.py) on a Citus cluster: the layout of
docs/scaling.md section 3.1, rows kept, idempotent, migrations after it, and refusal
where there is no Citus."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import text

from chatcrm.app import create_app
from chatcrm.cli import main
from chatcrm.config import Settings
from chatcrm.db.citus import NotACoordinator, distribute
from chatcrm.db.engine import standalone_engine
from tests.client import Api, ok_data
from tests.conftest import (
    create_citus_database,
    create_pg_database,
    distribute_tables,
    drop_citus_database,
    drop_pg_database,
    migrate,
    new_account,
    run_sync,
)

REFERENCE = {"accounts", "workspaces", "api_keys", "channels"}
LOCAL = {"alembic_version", "rate_budgets", "key_changes", "service_secrets", "idempotency_keys"}


def _rows(url: str, sql: str) -> list[Any]:
    """The rows of one statement, run in a transaction of its own (committed)."""

    async def run() -> list[Any]:
        engine = standalone_engine(url, Settings(database_url=url))
        try:
            async with engine.begin() as conn:
                result = await conn.execute(text(sql))
                return list(result.all()) if result.returns_rows else []
        finally:
            await engine.dispose()

    return run_sync(run)


def _layout(url: str) -> dict[str, tuple[str, str | None, int]]:
    """Each laid-out table: (method, distribution column, co-location group)."""
    rows = _rows(
        url,
        "SELECT logicalrelid::regclass::text, partmethod::text, "
        "column_to_column_name(logicalrelid, partkey), colocationid FROM pg_dist_partition",
    )
    return {name: (method, column, group) for name, method, column, group in rows}


@pytest.fixture
def citus_url() -> Iterator[str]:
    """A migrated Citus database, not yet laid out."""
    url = create_citus_database()
    try:
        migrate(url)
        yield url
    finally:
        drop_citus_database(url)


def _app(url: str) -> TestClient:
    settings = Settings(database_url=url, rate_limit=0, access_log=False, dispatch=False)
    return TestClient(create_app(settings), raise_server_exceptions=False)


def test_the_layout_is_the_documented_one_and_a_second_run_does_nothing(citus_url: str) -> None:
    done = distribute_tables(citus_url)
    layout = _layout(citus_url)
    # Every table with a workspace_id, but the reference table of channels (db/citus.py).
    tenant = {r[0] for r in _rows(citus_url, _TENANT_TABLES)} - REFERENCE
    assert tenant and "contacts" in tenant and "messages" in tenant
    assert {t for t, (method, _, _) in layout.items() if method == "n"} == REFERENCE
    distributed = {t for t, (method, _, _) in layout.items() if method == "h"}
    assert distributed == tenant
    assert {layout[t][1] for t in tenant} == {"workspace_id"}
    assert len({layout[t][2] for t in tenant}) == 1  # one co-location group
    assert not LOCAL & set(layout)
    assert "distributed contacts by workspace_id" in done
    assert "made workspaces a reference table" in done
    assert len(done) == len(REFERENCE | tenant)

    assert distribute_tables(citus_url) == []
    assert _layout(citus_url) == layout


def test_rows_stay_through_distributing(citus_url: str) -> None:
    account = new_account(citus_url)
    with _app(citus_url) as http:
        contact = Api(http, account).create_contact(name="Before")
    distribute_tables(citus_url)
    # The coordinator's shells hold no stale copy: the rows are on the shards only.
    sizes = _rows(
        citus_url,
        "SELECT relname, pg_relation_size(oid) FROM pg_class "
        "WHERE relname IN ('accounts', 'workspaces', 'api_keys', 'contacts')",
    )
    assert all(size == 0 for _, size in sizes), sizes
    with _app(citus_url) as http:
        api = Api(http, account)
        got = ok_data(api.get_contact(contact["id"]))
        assert got["data"][0]["name"] == "Before"
        assert api.create_contact(name="After")["name"] == "After"


def test_migrate_after_distribute_lays_out_new_tables(citus_url: str) -> None:
    distribute_tables(citus_url)
    # A table a later migration would add: laid out by the next migration run.
    _rows(
        citus_url,
        "CREATE TABLE later_notes (workspace_id varchar(36) NOT NULL REFERENCES workspaces (id), "
        "id varchar(36) NOT NULL, PRIMARY KEY (workspace_id, id))",
    )
    migrate(citus_url)
    layout = _layout(citus_url)
    assert layout["later_notes"][:2] == ("h", "workspace_id")
    assert layout["later_notes"][2] == layout["contacts"][2]
    assert distribute_tables(citus_url) == []


def test_the_command_prints_what_it_laid_out(citus_url: str) -> None:
    runner = CliRunner()
    first = runner.invoke(main, ["citus", "distribute", "--database-url", citus_url])
    assert first.exit_code == 0, first.output
    assert "distributed contacts by workspace_id" in first.output.splitlines()
    again = runner.invoke(main, ["citus", "distribute", "--database-url", citus_url])
    assert again.exit_code == 0, again.output
    assert again.output == "nothing to do\n"


def test_plain_postgresql_is_refused() -> None:
    url = create_pg_database()
    try:

        async def run() -> None:
            engine = standalone_engine(url, Settings(database_url=url))
            try:
                with pytest.raises(NotACoordinator, match="citus extension"):
                    await distribute(engine)
            finally:
                await engine.dispose()

        asyncio.run(run())
        result = CliRunner().invoke(main, ["citus", "distribute", "--database-url", url])
        assert result.exit_code == 1
        assert result.output.count("\n") == 1
        assert "citus extension is not installed" in result.output
        # Refused before migrating: the database is left as it was.
        assert _rows(url, "SELECT to_regclass('contacts')") == [(None,)]
    finally:
        drop_pg_database(url)


_TENANT_TABLES = """
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'workspace_id' AND NOT a.attisdropped
WHERE n.nspname = 'public' AND c.relkind = 'r'
"""
