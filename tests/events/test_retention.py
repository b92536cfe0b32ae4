"""Retention that empties the event table (contract D.2, D.4): a server whose every event
expired goes on delivering the events that come after. On SQLite an event's number follows
the largest left in the table, so the numbers start again once none is left; endpoints that
had passed them must still be sent the new events."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from sqlalchemy import update

from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.db.schema import events
from chatcrm.events import retention
from tests.client import Api, ok_data
from tests.conftest import app_fixtures, databases_per_backend
from tests.webhooks import hooks

# The purge empties the whole event table, so the database is this module's own.
database_url = databases_per_backend("database_url", "module")


settings, http = app_fixtures("module")


def expire_every_event(database_url: str) -> int:
    async def run() -> int:
        db = Database(Settings(database_url=database_url))
        try:
            async with db.transaction() as conn:
                await conn.execute(update(events).values(created_at=utcnow() - timedelta(days=31)))
            return await retention.purge(db, days=30)
        finally:
            await db.dispose()

    return asyncio.run(run())


def delivered_records(database_url: str, api: Api, webhook_id: str) -> list[str]:
    hooks.publish(api, database_url)
    rows = hooks.deliveries(database_url, api.ws, webhook_id)
    return [row["event_id"] for row in rows]


def test_endpoints_get_the_events_that_follow_a_purge_of_every_event(
    api: Api, database_url: str
) -> None:
    webhook = hooks.create(api)
    for _ in range(3):
        api.create_contact()
    assert len(delivered_records(database_url, api, webhook["id"])) == 3

    assert expire_every_event(database_url) >= 3
    assert ok_data(api.get("/api/events"))["events"] == []
    assert hooks.deliveries(database_url, api.ws, webhook["id"]) == []

    after = [api.create_contact()["id"] for _ in range(2)]
    feed = ok_data(api.get("/api/events"))["events"]
    assert [event["recordId"] for event in feed] == after
    assert delivered_records(database_url, api, webhook["id"]) == [e["id"] for e in feed]
    # An endpoint created after the purge starts at the feed's end, as any new one.
    late = hooks.create(api)
    api.create_contact()
    assert len(delivered_records(database_url, api, late["id"])) == 1
