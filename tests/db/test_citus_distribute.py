"""`chatcrm citus distribute` (db/citus.py) on a Citus cluster: the layout of
docs/scaling.md section 3.1, rows kept, idempotent, migrations after it, and refusal
where there is no Citus."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import make_url, text

from chatcrm.app import create_app
from chatcrm.cli import main
from chatcrm.config import Settings
from chatcrm.contacts.kind import CONTACT
from chatcrm.db import citus
from chatcrm.db.citus import distribute
from chatcrm.db.citus_node import NotACoordinator
from chatcrm.db.database import Connection, Database
from chatcrm.db.engine import standalone_engine
from chatcrm.records import writing
from tests.client import Api, ok_data
from tests.conftest import (
    _cluster,
    create_citus_database,
    create_pg_database,
    distribute_tables,
    drop_citus_database,
    drop_pg_database,
    migrate,
    new_account,
    run_sync,
)
from tests.events.test_no_gaps import LoopThread

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


def _anything_to_lay_out(url: str) -> bool:
    async def run() -> bool:
        engine = standalone_engine(url, Settings(database_url=url))
        try:
            async with engine.connect() as conn:
                return await citus.anything_to_lay_out(conn)
        finally:
            await engine.dispose()

    return run_sync(run)


def test_the_layout_is_the_documented_one_and_a_second_run_does_nothing(citus_url: str) -> None:
    assert _anything_to_lay_out(citus_url)
    done = distribute_tables(citus_url)
    # Whole: a start (migrate) does not lay out again, so it asks no worker anything (one
    # worker down does not stop every command from starting).
    assert not _anything_to_lay_out(citus_url)
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


def _deliveries(api: Api, webhook_id: str) -> list[str]:
    """The event ids of a webhook's deliveries, oldest first."""
    out: list[str] = []
    params: dict[str, str] = {"pageSize": "100"}
    while True:
        page = ok_data(api.get(f"/api/webhook/{webhook_id}/deliveries", params=params))
        out += [d["eventId"] for d in page["data"]]
        if not page["continuationToken"]:
            return out[::-1]
        params["continuationToken"] = page["continuationToken"]


def test_rows_stay_through_distributing(citus_url: str) -> None:
    """Rows of every kind move, including those whose tables have foreign keys to other
    moved tables (a contact's tags and activities, an event's deliveries), and every
    answer is the same after; a webhook goes on with the events after the move, each once."""
    account = new_account(citus_url)
    with _app(citus_url) as http:
        api = Api(http, account)
        hook = ok_data(api.post("/api/webhook", json={"url": "https://hooks.example/in"}))
        tag = api.add_tag()
        contact = api.create_contact(name="Before", tags=[tag["id"]])
        ok_data(api.post(f"/api/contact/{contact['id']}/activities", json={"content": "called"}))
        deal = api.create_opportunity(contactId=contact["id"])
        ok_data(
            api.post(
                f"/api/opportunity/{deal['id']}/agent/activities",
                json={"categoryType": "Calls", "content": "demo", "date": "2026-01-02T03:04:05Z"},
            )
        )
        paths = [
            f"/api/contact/{contact['id']}",
            f"/api/contact/{contact['id']}/activities",
            f"/api/contact/{contact['id']}/history",
            f"/api/opportunity/{deal['id']}",
            f"/api/opportunity/{deal['id']}/history",
            "/api/contact",
            "/api/events",
            f"/api/workspace/{account.workspace_id}",
        ]
        before = {path: api.get(path).json() for path in paths}
        events_before = [e["id"] for e in before["/api/events"]["data"]["events"]]
    done = distribute_tables(citus_url)
    assert "started 1 webhook(s) after their workspace's last event" in done
    # Its place is in the ids the events have now (the workers'), not the coordinator's:
    # these have nothing to do with each other, and a place in the wrong ones skips events.
    last = "SELECT txid, seq FROM events WHERE txid >= 0 ORDER BY txid DESC, seq DESC LIMIT 1"
    assert _rows(citus_url, "SELECT feed_txid, feed_seq FROM webhooks") == _rows(citus_url, last)
    # The coordinator's copies hold nothing: every row is on the shards only.
    sizes = _rows(
        citus_url,
        "SELECT c.relname, pg_relation_size(c.oid) FROM pg_dist_partition p "
        "JOIN pg_class c ON c.oid = p.logicalrelid",
    )
    assert len(sizes) >= 10 and all(size == 0 for _, size in sizes), sizes
    with _app(citus_url) as http:
        api = Api(http, account)
        for path, answer in before.items():
            assert api.get(path).json() == answer, path
        after = api.create_contact(name="After")
        events = ok_data(api.get("/api/events"))["events"]
        assert [e["id"] for e in events[: len(events_before)]] == events_before
        assert [e["recordId"] for e in events[len(events_before) :]] == [after["id"]]
        every = [e["id"] for e in events]
        deadline = time.monotonic() + 10
        while (got := _deliveries(api, hook["id"])) != every:
            assert time.monotonic() < deadline, (got, every)
            time.sleep(0.1)


def _feed(api: Api, after: str | None = None) -> list[str]:
    ids: list[str] = []
    params = {"pageSize": "100", **({"after": after} if after else {})}
    while True:
        data = ok_data(api.get("/api/events", params=params))
        ids += [e["id"] for e in data["events"]]
        if not data["events"]:
            return ids
        params["after"] = data["next"]


def test_the_feed_keeps_its_order_through_distributing(citus_url: str) -> None:
    """Events committed out of the order they were written in (a transaction that began
    first and wrote last) are in the feed in commit order; after the move, where every
    event shares the copy's transaction id, the feed is the same and each cursor taken
    before it goes on with the same events."""
    account = new_account(citus_url)
    side, db = LoopThread(), Database(Settings(database_url=citus_url))

    async def write(conn: Connection, contact_id: str, name: str) -> None:
        body = {"paramToUpdate": "name", "name": name}
        await writing.update(
            conn,
            CONTACT,
            workspace_id=account.workspace_id,
            record_id=contact_id,
            body=body,
            if_match=None,
        )

    try:
        with _app(citus_url) as http:
            api = Api(http, account)
            first, second, third = (api.create_contact(name=n) for n in ("A", "B", "C"))
            held = db.connection()
            side.run(held.begin())  # one transaction for both of its writes
            side.run(write(held, first["id"], "A, the transaction that began first"))
            api.set_contact(second["id"], name="B, committed while it is open")
            side.run(write(held, third["id"], "C, written last by the first transaction"))
            side.run(held.finish(commit=True))
            before = _feed(api)
            assert len(before) == 6
        side.run(db.dispose())
    finally:
        side.close()
    distribute_tables(citus_url)
    with _app(citus_url) as http:
        api = Api(http, account)
        assert _feed(api) == before
        for place, cursor in enumerate(before):
            assert _feed(api, cursor) == before[place + 1 :], cursor


def test_a_failed_run_s_leftovers_are_emptied_by_the_next(citus_url: str) -> None:
    """The coordinator's copy of a table laid out by a run that stopped before emptying it
    is emptied by the next run."""
    account = new_account(citus_url)
    with _app(citus_url) as http:
        tag = Api(http, account).add_tag()

    # A run that laid `tags` out and stopped there.
    async def half_a_run() -> None:
        conn = await asyncpg.connect(citus_url)
        try:
            await conn.execute("SET citus.enable_local_reference_table_foreign_keys TO off")
            await conn.execute("SET citus.multi_shard_modify_mode TO 'sequential'")
            for table in ("accounts", "workspaces"):
                await conn.execute("SELECT create_reference_table($1)", table)
            await conn.execute("SELECT create_distributed_table('tags', 'workspace_id')")
        finally:
            await conn.close()

    run_sync(half_a_run)
    assert _rows(citus_url, "SELECT pg_relation_size('tags')")[0][0] > 0
    distribute_tables(citus_url)
    assert _rows(citus_url, "SELECT pg_relation_size('tags')") == [(0,)]
    with _app(citus_url) as http:
        tags = Api(http, account).workspace()["tags"]
    assert [t["id"] for t in tags] == [tag["id"]]


def test_a_database_migrated_before_it_was_a_coordinator_is_laid_out() -> None:
    """Extensions and functions created before `CREATE EXTENSION citus` are on the
    coordinator only; the command creates them on the workers (the shards' search needs
    `unaccent`, the feed `chatcrm_feed_gate`)."""
    url = create_citus_database(before_citus=migrate)
    try:
        account = new_account(url)
        distribute_tables(url)
        with _app(url) as http:
            api = Api(http, account)
            made = api.create_contact(name="Núñez")
            found = ok_data(api.get("/api/contact", params={"q": "nunez"}))["data"]
            # The feed's gate is a function of the schema's, called on the workers.
            history = ok_data(api.get(f"/api/contact/{made['id']}/history"))["events"]
        assert [c["id"] for c in found] == [made["id"]]
        assert [e["type"] for e in history] == ["contact.created"]
    finally:
        drop_citus_database(url)


def test_distribute_refuses_sqlite_and_makes_no_file(tmp_path: Path) -> None:
    path = tmp_path / "none.db"
    result = CliRunner().invoke(
        main, ["citus", "distribute", "--database-url", f"sqlite:///{path}"]
    )
    assert result.exit_code == 1
    assert "not PostgreSQL" in result.output
    assert not path.exists()


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


def test_a_worker_that_does_not_answer_is_named_before_anything_is_laid_out(
    citus_url: str,
) -> None:
    """With a worker down, the command blamed its first step to reach it ("could not create
    the pg_trgm extension on the worker…", which was there). Its database gone there is a
    worker that does not answer for this database (the shared cluster stays up)."""
    worker = make_url(_cluster().workers[-1])

    async def drop_there() -> None:
        conn = await asyncpg.connect(
            host=worker.host, port=worker.port, user=worker.username, database="postgres"
        )
        try:
            await conn.execute(f'DROP DATABASE "{make_url(citus_url).database}" WITH (FORCE)')
        finally:
            await conn.close()

    run_sync(drop_there)
    result = CliRunner().invoke(main, ["citus", "distribute", "--database-url", citus_url])
    assert result.exit_code == 1
    assert result.output.startswith("chatcrm: error: 1 Citus worker node(s) do not answer: ")
    assert f"{worker.host}:{worker.port}" in result.output
    assert "extension" not in result.output
    assert _layout(citus_url) == {}


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


def test_a_run_cut_short_after_the_events_moved_leaves_its_webhooks_to_the_next(
    citus_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run stopped (killed) after the events moved and before its webhooks were placed in
    the workers' ids: the next run, which finds the events laid out, places them still, and
    the webhook goes on with the events after (not one of them skipped)."""
    account = new_account(citus_url)
    with _app(citus_url) as http:
        api = Api(http, account)
        hook = ok_data(api.post("/api/webhook", json={"url": "https://hooks.example/in"}))
        api.create_contact(name="Before")

    class Killed(Exception):
        pass

    async def killed(conn: Any) -> int:
        raise Killed  # the process ends here, its autocommitted work done

    with monkeypatch.context() as patched:
        patched.setattr(citus, "_webhooks_from_the_feeds_end", killed)
        with pytest.raises(Killed):
            distribute_tables(citus_url)
    assert _layout(citus_url)["events"][1] == "workspace_id"  # the events moved
    done = distribute_tables(citus_url)
    assert "started 1 webhook(s) after their workspace's last event" in done
    last = "SELECT txid, seq FROM events WHERE txid >= 0 ORDER BY txid DESC, seq DESC LIMIT 1"
    assert _rows(citus_url, "SELECT feed_txid, feed_seq FROM webhooks") == _rows(citus_url, last)
    assert distribute_tables(citus_url) == []  # nothing left to place
    with _app(citus_url) as http:
        api = Api(http, account)
        after = api.create_contact(name="After")
        deadline = time.monotonic() + 10
        while True:
            got = _deliveries(api, hook["id"])
            events = ok_data(api.get("/api/events"))["events"]
            if after["id"] in [e["recordId"] for e in events if e["id"] in got]:
                break
            assert time.monotonic() < deadline, got
            time.sleep(0.1)


def test_a_fold_changed_by_a_later_migration_reaches_the_shards(citus_url: str) -> None:
    """Migration 0017 replaces chatcrm_fold and makes the search indexes again on a
    database laid out before it: the workers' shards fold and index as the coordinator.
    From 0015, so that the one transaction of the upgrade sends DDL to the shards (0016's
    column) before 0017's function command, which Citus refused after parallel DDL."""

    def down_to_0015(connection: Any) -> None:
        from alembic import command

        from chatcrm.db.migrate import alembic_config

        # As chatcrm's upgrade does (db/migrate.py): the downgrade's DDL, then functions.
        connection.exec_driver_sql("SET LOCAL citus.multi_shard_modify_mode TO 'sequential'")
        command.downgrade(alembic_config(connection), "0015")

    async def downgrade() -> None:
        engine = standalone_engine(citus_url, Settings(database_url=citus_url))
        try:
            async with engine.begin() as conn:
                await conn.run_sync(down_to_0015)
        finally:
            await engine.dispose()

    distribute_tables(citus_url)
    account = new_account(citus_url)
    with _app(citus_url) as http:
        made = Api(http, account).create_contact(name="Someone")
    run_sync(downgrade)
    on_workers = "SELECT result FROM run_command_on_workers($$SELECT chatcrm_fold('Οδυσσέας')$$)"
    assert {r[0] for r in _rows(citus_url, on_workers)} == {"οδυσσεας"}
    # Indexed by the old fold, on its shard.
    _rows(citus_url, f"UPDATE contacts SET name = 'Οδυσσέας' WHERE id = '{made['id']}'")
    indexes = (
        "SELECT result FROM run_command_on_workers($$SELECT string_agg(oid::text, ',' ORDER BY "
        "oid) FROM pg_class WHERE relname LIKE 'ix_contacts_search%'$$)"
    )
    before = {r[0] for r in _rows(citus_url, indexes)}
    migrate(citus_url)
    # Made again on every worker: none of the shards' indexes is one from before.
    after = {r[0] for r in _rows(citus_url, indexes)}
    assert all(after) and not set(",".join(after).split(",")) & set(",".join(before).split(","))
    assert {r[0] for r in _rows(citus_url, on_workers)} == {"οδυσσεασ"}
    shard_indexes = (
        "SELECT result FROM run_command_on_shards('contacts', $$SELECT count(*) FROM pg_indexes "
        "WHERE tablename = '%s' AND indexname LIKE 'ix_contacts_search%%'$$)"
    )
    counts = [r[0] for r in _rows(citus_url, shard_indexes)]
    assert counts and all(c == "1" for c in counts), counts
    with _app(citus_url) as http:
        api = Api(http, account)
        for q in ("ΟΔΥΣ", "ΟΔΥΣΣΕΑΣ", "οδυσσεας"):
            found = ok_data(api.get("/api/contact", params={"q": q}))["data"]
            assert [c["id"] for c in found] == [made["id"]], q
