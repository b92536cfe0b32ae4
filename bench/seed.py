"""A benchmark database: one workspace with 10,000 contacts (with tags) and 10,000
opportunities, created through the service layer (the code the API runs), many at a time."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import create_async_engine

from chatcrm.config import Settings
from chatcrm.contacts.kind import CONTACT
from chatcrm.db.database import Database
from chatcrm.db.engine import standalone_engine
from chatcrm.db.migrate import upgrade
from chatcrm.db.schema import tags
from chatcrm.opportunities.kind import OPPORTUNITY
from chatcrm.provisioning import init_account
from chatcrm.records import writing
from chatcrm.workspaces import service as workspaces
from chatcrm.workspaces.fields import TAG

RESULTS = Path(__file__).parent / "results"


@dataclass
class Seeded:
    database_url: str
    api_key: str
    workspace_id: str
    contact_ids: list[str] = field(default_factory=list)
    phones: list[str] = field(default_factory=list)
    opportunity_ids: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _fresh_sqlite_file() -> str:
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "bench.sqlite"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return f"sqlite:///{path}"


async def fresh_database(backend: str, admin_url: str) -> str:
    """An empty, migrated database for the run; returns its URL."""
    if backend == "sqlite":
        url = _fresh_sqlite_file()
    else:
        name = "chatcrm_bench"
        admin = make_url(admin_url).set(drivername="postgresql+asyncpg")
        engine = create_async_engine(admin, isolation_level="AUTOCOMMIT")
        async with engine.connect() as conn:
            await conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            await conn.execute(text(f'CREATE DATABASE "{name}"'))
        await engine.dispose()
        url = make_url(admin_url).set(database=name).render_as_string(hide_password=False)
    engine = standalone_engine(url, Settings(database_url=url))
    await upgrade(engine)
    await engine.dispose()
    return url


async def seed(url: str, *, contacts_count: int, opportunities_count: int) -> Seeded:
    started = time.perf_counter()
    db = Database(Settings(database_url=url))
    rng = random.Random(42)
    try:
        async with db.transaction() as conn:
            account = await init_account(conn, workspace_name="Benchmark")
            ws = account.workspace_id
            tag_ids = [
                (
                    await workspaces.add_item(
                        conn, TAG, tags, ws, {"name": f"tag{i}", "color": "#0a0"}
                    )
                )["id"]
                for i in range(5)
            ]
        out = Seeded(database_url=url, api_key=account.api_key, workspace_id=ws)

        async def contact(i: int) -> None:
            phone = f"51{900000000 + i}"
            body: dict[str, Any] = {
                "name": f"Contact {i}",
                "lastname": rng.choice(["Diaz", "Rojas", "Quispe", "Flores"]),
                "email": f"contact{i}@example.com",
                "phone": phone,
                "tags": rng.sample(tag_ids, rng.randint(0, 3)),
                "variables": [{"name": "source", "value": "bench"}],
            }
            async with db.session() as conn:
                view = await writing.create(
                    conn, CONTACT, workspace_id=ws, key_id=account.key_id, body=body
                )
            out.contact_ids.append(view.id)
            out.phones.append(phone)

        async def opportunity(i: int) -> None:
            body = {
                "name": f"Deal {i}",
                "amount": rng.randint(100, 100_000),
                "contactId": rng.choice(out.contact_ids),
            }
            async with db.session() as conn:
                view = await writing.create(
                    conn, OPPORTUNITY, workspace_id=ws, key_id=account.key_id, body=body
                )
            out.opportunity_ids.append(view.id)

        await _in_batches(contact, contacts_count)
        await _in_batches(opportunity, opportunities_count)
    finally:
        await db.dispose()
    await analyze(url)
    out.seconds = time.perf_counter() - started
    return out


async def analyze(url: str) -> None:
    """Planner statistics, as autovacuum (PostgreSQL) or an operator (SQLite) would have
    gathered them on a database in use; right after a bulk load there are none."""
    engine = standalone_engine(url, Settings(database_url=url))
    try:
        async with engine.connect() as conn:
            await conn.execute(text("ANALYZE"))
            await conn.commit()
    finally:
        await engine.dispose()


async def backlog(url: str) -> int:
    """What a running server still has to do for the changes made so far: events whose
    deliveries an enabled endpoint has not queued yet, and deliveries not yet made."""
    engine = standalone_engine(url, Settings(database_url=url))
    try:
        async with engine.connect() as conn:
            result = await conn.execute(
                text(
                    "SELECT (SELECT count(*) FROM events e JOIN webhooks w"
                    " ON w.workspace_id = e.workspace_id AND w.enabled"
                    " AND (e.txid, e.seq) > (w.feed_txid, w.feed_seq))"
                    " + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')"
                )
            )
            return int(result.scalar_one())
    finally:
        await engine.dispose()


async def _in_batches(make: Any, count: int, width: int = 32) -> None:
    for start in range(0, count, width):
        await asyncio.gather(*(make(i) for i in range(start, min(count, start + width))))


def unique_suffix() -> str:
    return uuid.uuid4().hex[:8]
