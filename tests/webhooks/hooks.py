"""Helpers of the webhook tests: creating endpoints, and the database rows the HTTP API does
not show (or that the dispatcher and the publisher would write)."""

from __future__ import annotations

import asyncio
from typing import Any

import sqlalchemy as sa
from sqlalchemy import select, text
from sqlalchemy.sql import Executable

from chatcrm.config import Settings
from chatcrm.db.database import Database
from chatcrm.db.engine import standalone_engine
from chatcrm.db.schema import webhook_deliveries, webhooks
from chatcrm.events import feed
from chatcrm.events.publisher import publish_pending
from tests.client import Api, ok_data, unique

# Public-looking receivers that do not resolve here: saved without a resolver's answer
# (a name that does not resolve is accepted), and never sent to by these tests.
RECEIVER = "https://receiver.example/hooks"
WEBHOOK_KEYS = [
    "id",
    "url",
    "eventTypes",
    "description",
    "enabled",
    "disabledReason",
    "secret",
    "createdAt",
    "updatedAt",
]
LISTED_KEYS = [k for k in WEBHOOK_KEYS if k != "secret"]
DELIVERY_KEYS = [
    "eventId",
    "eventType",
    "status",
    "attempts",
    "lastAttemptAt",
    "nextAttemptAt",
    "lastResponseStatus",
    "lastError",
]
CREATED = "Webhook created successfully."
UPDATED = "Webhook updated successfully."
NOT_FOUND = "WEBHOOK_NOT_FOUND"


def receiver() -> str:
    return f"{RECEIVER}/{unique('h')}"


def create(api: Api, **body: Any) -> dict[str, Any]:
    """A new endpoint of the api's workspace; its whole record."""
    data = ok_data(api.post("/api/webhook", json={"url": receiver(), **body}), CREATED)
    assert list(data) == ["id", "webhook"]
    webhook: dict[str, Any] = data["webhook"]
    return webhook


def update(api: Api, webhook_id: str, **fields: Any) -> dict[str, Any]:
    body = {"paramToUpdate": ",".join(fields), **fields}
    data = ok_data(api.put(f"/api/webhook/{webhook_id}", json=body), UPDATED)
    assert data["id"] == webhook_id
    webhook: dict[str, Any] = data["webhook"]
    return webhook


def queue_test(api: Api, webhook_id: str) -> str:
    data = ok_data(api.post(f"/api/webhook/{webhook_id}/test"), "Test event queued successfully.")
    assert list(data) == ["id", "eventId"] and data["id"] == webhook_id
    event_id: str = data["eventId"]
    return event_id


def sql(
    database_url: str, statement: str | Executable, params: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    """One statement (SQL text, or Core for typed columns) on the test database, in its own
    transaction; its rows, if any."""
    stmt = text(statement) if isinstance(statement, str) else statement

    async def run() -> list[Any]:
        engine = standalone_engine(database_url, Settings(database_url=database_url))
        try:
            async with engine.begin() as conn:
                result = await conn.execute(stmt, params or {})
                return [dict(row._mapping) for row in result.all()] if result.returns_rows else []
        finally:
            await engine.dispose()

    return asyncio.run(run())


def stored(database_url: str, workspace_id: str, webhook_id: str) -> dict[str, Any] | None:
    """The endpoint's row, every column (datetimes aware)."""
    c = webhooks.c
    rows = sql(
        database_url,
        select(webhooks).where(c.workspace_id == workspace_id, c.id == webhook_id),
    )
    return rows[0] if rows else None


def deliveries(database_url: str, workspace_id: str, webhook_id: str) -> list[dict[str, Any]]:
    """The endpoint's delivery rows, oldest first, every column (datetimes aware)."""
    c = webhook_deliveries.c
    return sql(
        database_url,
        select(webhook_deliveries)
        .where(c.workspace_id == workspace_id, c.webhook_id == webhook_id)
        .order_by(c.created_at, c.event_id),
    )


def set_delivery(database_url: str, workspace_id: str, event_id: str, **columns: Any) -> None:
    """Change a delivery as the dispatcher would (status, attempts, last answer…)."""
    c = webhook_deliveries.c
    sql(
        database_url,
        sa.update(webhook_deliveries)
        .where(c.workspace_id == workspace_id, c.event_id == event_id)
        .values(**columns),
    )


def set_webhook(database_url: str, workspace_id: str, webhook_id: str, **columns: Any) -> None:
    """Change an endpoint as the dispatcher would (disabled_reason, consecutive_failures)."""
    c = webhooks.c
    sql(
        database_url,
        sa.update(webhooks)
        .where(c.workspace_id == workspace_id, c.id == webhook_id)
        .values(**columns),
    )


def publish(api: Api, database_url: str) -> None:
    """Have the deliveries of the workspace's committed events queued before going on: the
    publisher's step run here until every enabled endpoint of the workspace has passed
    the feed's end (the app's own publisher may be holding an endpoint meanwhile)."""
    end = ok_data(api.get("/api/events", params={"after": "end", "pageSize": "1"}))["next"]

    async def run() -> None:
        db = Database(Settings(database_url=database_url))
        try:
            for _ in range(500):
                await publish_pending(db)
                async with db.session() as conn:
                    place = await feed.end_place(conn, api.ws)
                    rows = await conn.fetch(
                        select(webhooks.c.feed_txid, webhooks.c.feed_seq).where(
                            webhooks.c.workspace_id == api.ws, webhooks.c.enabled.is_(True)
                        )
                    )
                if end is None or all((r["feed_txid"], r["feed_seq"]) >= place for r in rows):
                    return
                await asyncio.sleep(0.01)
            raise AssertionError("the publisher did not reach the feed's end")
        finally:
            await db.dispose()

    asyncio.run(run())
