"""Migration 0009 (people): events written before it gain the last key `actor` (the
service: who acted then is not known), and existing keys keep every permission."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import text

from chatcrm.config import Settings
from chatcrm.db.engine import standalone_engine
from chatcrm.db.migrate import alembic_config, upgrade
from tests.conftest import create_pg_database, drop_pg_database, run_sync

OLD_BODY = json.dumps(
    {"id": "evt_1", "type": "contact.created", "data": {"name": "Ana"}}, separators=(",", ":")
)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_old_events_gain_a_system_actor(backend: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}" if backend == "sqlite" else create_pg_database()
    try:

        async def run() -> dict:
            engine = standalone_engine(url, Settings(database_url=url))
            try:
                async with engine.begin() as conn:
                    await conn.run_sync(lambda c: command.upgrade(alembic_config(c), "0008"))
                    await conn.execute(
                        text(
                            "INSERT INTO accounts (id, name, created_at) "
                            "VALUES ('a', 'a', CURRENT_TIMESTAMP)"
                        )
                    )
                    await conn.execute(
                        text(
                            "INSERT INTO workspaces (id, account_id, name, timezone, created_at, "
                            "updated_at) VALUES ('w', 'a', 'w', 'UTC', CURRENT_TIMESTAMP, "
                            "CURRENT_TIMESTAMP)"
                        )
                    )
                    await conn.execute(
                        text(
                            "INSERT INTO api_keys (id, account_id, secret_hash, created_at) "
                            "VALUES ('k', 'a', 'h', CURRENT_TIMESTAMP)"
                        )
                    )
                    await conn.execute(
                        text(
                            "INSERT INTO events (workspace_id, id, seq, txid, type, record_id, "
                            "created_at, body) VALUES ('w', 'evt_1', 1, 0, 'contact.created', "
                            "NULL, CURRENT_TIMESTAMP, :body)"
                        ),
                        {"body": OLD_BODY},
                    )
                await upgrade(engine)
                async with engine.connect() as conn:
                    body = (await conn.execute(text("SELECT body FROM events"))).scalar_one()
                    key = (
                        await conn.execute(text("SELECT name, scopes, workspace_ids FROM api_keys"))
                    ).one()
                return {"body": json.loads(body), "key": tuple(key)}
            finally:
                await engine.dispose()

        done = run_sync(run)
    finally:
        if backend == "postgresql":
            drop_pg_database(url)
    assert list(done["body"]) == ["id", "type", "data", "actor"]
    assert done["body"]["actor"] == {"type": "system", "id": None, "name": "chatcrm"}
    assert done["key"] == ("", None, None)
