"""The feed's gate (docs/operations.md 4.10) holds readers back behind the transactions of
their own database only: transaction ids are the server's, but a transaction of another
database on the same server writes no event here, so a client still reads its own writes
at once while one is open. One of this database still holds them back (the no-gap rule).
"""

from __future__ import annotations

import asyncio
import uuid

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from tests.client import Api, ok_data
from tests.conftest import DATABASES, _admin_of, _cluster, app_fixtures, databases_per_backend
from tests.events.test_no_gaps import LoopThread

database_url = databases_per_backend(
    "database_url", "module", tuple(d for d in DATABASES if d != "sqlite")
)


settings, http = app_fixtures("module")


def _servers_of_the_events(database_url: str) -> list[str]:
    """Admin URLs of the servers the events are written on (on Citus, every worker)."""
    if database_url in _admin_of:
        return [_admin_of[database_url]]
    return list(_cluster().workers)


def _plain(url: str, database: str | None = None) -> str:
    u = make_url(url)
    if database is not None:
        u = u.set(database=database)
    return u.set(drivername="postgresql").render_as_string(hide_password=False)


def _setting(url: str, name: str) -> str:
    async def read() -> str:
        conn = await asyncpg.connect(url, timeout=10)
        try:
            return str(await conn.fetchval(f"SHOW {name}"))
        finally:
            await conn.close()

    return asyncio.run(read())


def _history(api: Api, record_id: str) -> list[str]:
    data = ok_data(api.get(f"/api/contact/{record_id}/history"))
    return [e["type"] for e in data["events"]]


@pytest.mark.parametrize(
    "where", ["another database", "prepared in another database", "this database"]
)
def test_a_transaction_holds_the_feed_back_only_in_its_own_database(
    api: Api, database_url: str, where: str
) -> None:
    database = make_url(database_url).database if where == "this database" else None
    urls = [_plain(server, database) for server in _servers_of_the_events(database_url)]
    prepared = where.startswith("prepared")
    if prepared and not all(int(_setting(url, "max_prepared_transactions")) > 0 for url in urls):
        pytest.skip("the server prepares no transactions (max_prepared_transactions = 0)")
    gid = f"chatcrm-test-{uuid.uuid4()}"
    loop = LoopThread()

    async def hold() -> list[asyncpg.Connection]:
        held = []
        for url in urls:
            conn = await asyncpg.connect(url, timeout=10)
            held.append(conn)
            await conn.execute("BEGIN")
            await conn.fetchval("SELECT pg_current_xact_id()")  # it now holds an id
            if prepared:  # as Citus's two-phase commit leaves it: no backend holds it
                await conn.execute(f"PREPARE TRANSACTION '{gid}'")
        return held

    async def release(held: list[asyncpg.Connection]) -> None:
        for conn in held:
            await conn.execute(f"ROLLBACK PREPARED '{gid}'" if prepared else "ROLLBACK")
            await conn.close()

    held = loop.run(hold())
    try:
        contact = api.create_contact()
        api.set_contact(contact["id"], name="Renamed while another transaction is open")
        seen = _history(api, contact["id"])
        feed = ok_data(api.get("/api/events", params={"pageSize": "100"}))["events"]
        mine = [e for e in feed if e.get("recordId") == contact["id"]]
    finally:
        loop.run(release(held))
        loop.close()
    if where != "this database":
        assert seen == ["contact.created", "contact.updated"]
        assert len(mine) == 2
    else:
        # Written after an older transaction of this database that could still commit an
        # event: not shown until it ends (the read waited its second for it).
        assert seen == []
        assert mine == []
    assert _history(api, contact["id"]) == ["contact.created", "contact.updated"]
