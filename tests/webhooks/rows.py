"""The rows the event publisher and the webhook endpoints write, inserted directly so the
dispatcher can be tested on its own: an endpoint, an event, its delivery."""

from __future__ import annotations

import base64
import itertools
import json
import os
import secrets as random_bytes
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, select, update

from chatcrm.core.ids import new_id
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db.database import Database
from chatcrm.db.schema import events, webhook_deliveries, webhooks
from chatcrm.events.outbox import NOT_IN_FEED

_seq = itertools.count(int.from_bytes(os.urandom(4), "big"))


def new_secret() -> str:
    return "whsec_" + base64.b64encode(random_bytes.token_bytes(32)).decode()


@dataclass(frozen=True)
class Endpoint:
    workspace_id: str
    id: str
    url: str
    secret: str


async def add_webhook(
    db: Database,
    workspace_id: str,
    url: str,
    *,
    enabled: bool = True,
    previous_secret: str | None = None,
    previous_expires_at: datetime | None = None,
    consecutive_failures: int = 0,
) -> Endpoint:
    now = utcnow()
    endpoint = Endpoint(workspace_id, new_id(), url, new_secret())
    async with db.transaction() as conn:
        await conn.execute(
            insert(webhooks),
            {
                "workspace_id": workspace_id,
                "id": endpoint.id,
                "url": url,
                "event_types": '["*"]',
                "description": "",
                "enabled": enabled,
                "disabled_reason": None,
                "secret": endpoint.secret,
                "previous_secret": previous_secret,
                "previous_secret_expires_at": previous_expires_at,
                "consecutive_failures": consecutive_failures,
                "created_at": now - timedelta(minutes=1),
                "updated_at": now - timedelta(minutes=1),
            },
        )
    return endpoint


def event_body(event_id: str, workspace_id: str, created_at: datetime) -> str:
    """An event object of contract D.1, keys in order, with some non-ASCII text."""
    record_id = new_id()
    return json.dumps(
        {
            "id": event_id,
            "type": "contact.updated",
            "workspaceId": workspace_id,
            "createdAt": iso(created_at),
            "recordId": record_id,
            "recordVersion": 3,
            "changed": ["name"],
            "data": {"id": record_id, "name": "José Ñúñez 🚀"},
        },
        ensure_ascii=False,
        separators=(",", ":"),
    )


async def add_event(db: Database, workspace_id: str, *, created_at: datetime | None = None) -> str:
    """An event row out of the feed (as a test event), so that no publisher
    running beside the test queues deliveries for it: the tests queue their own."""
    event_id = "evt_" + random_bytes.token_hex(12)
    created_at = created_at or utcnow()
    async with db.transaction() as conn:
        await conn.execute(
            insert(events),
            {
                "workspace_id": workspace_id,
                "id": event_id,
                "seq": next(_seq),
                "txid": NOT_IN_FEED,
                "type": "contact.updated",
                "record_id": None,
                "created_at": created_at,
                "body": event_body(event_id, workspace_id, created_at),
            },
        )
    return event_id


async def queue(
    db: Database, endpoint: Endpoint, event_id: str, *, due: datetime | None = None
) -> None:
    """A pending delivery, as the publisher queues it."""
    now = utcnow()
    async with db.transaction() as conn:
        await conn.execute(
            insert(webhook_deliveries),
            {
                "workspace_id": endpoint.workspace_id,
                "webhook_id": endpoint.id,
                "event_id": event_id,
                "event_type": "contact.updated",
                "status": "pending",
                "attempts": 0,
                "next_attempt_at": due or now,
                "last_attempt_at": None,
                "last_response_status": None,
                "last_error": None,
                "created_at": now,
            },
        )


async def new_delivery(db: Database, endpoint: Endpoint) -> str:
    """An event queued for `endpoint`; returns the event id."""
    event_id = await add_event(db, endpoint.workspace_id)
    await queue(db, endpoint, event_id)
    return event_id


async def delivery(db: Database, endpoint: Endpoint, event_id: str) -> dict[str, Any]:
    d = webhook_deliveries.c
    async with db.session() as conn:
        row = await conn.fetchrow(
            select(webhook_deliveries).where(
                d.workspace_id == endpoint.workspace_id,
                d.webhook_id == endpoint.id,
                d.event_id == event_id,
            )
        )
    assert row is not None
    return row


async def webhook(db: Database, endpoint: Endpoint) -> dict[str, Any]:
    w = webhooks.c
    async with db.session() as conn:
        row = await conn.fetchrow(
            select(webhooks).where(w.workspace_id == endpoint.workspace_id, w.id == endpoint.id)
        )
    assert row is not None
    return row


async def stored_body(db: Database, workspace_id: str, event_id: str) -> bytes:
    e = events.c
    async with db.session() as conn:
        body = await conn.fetchval(
            select(e.body).where(e.workspace_id == workspace_id, e.id == event_id)
        )
    return str(body).encode("utf-8")


async def set_webhook(db: Database, endpoint: Endpoint, **values: Any) -> None:
    w = webhooks.c
    async with db.transaction() as conn:
        await conn.execute(
            update(webhooks)
            .where(w.workspace_id == endpoint.workspace_id, w.id == endpoint.id)
            .values(**values)
        )


async def set_delivery(db: Database, endpoint: Endpoint, event_id: str, **values: Any) -> None:
    d = webhook_deliveries.c
    async with db.transaction() as conn:
        await conn.execute(
            update(webhook_deliveries)
            .where(
                d.workspace_id == endpoint.workspace_id,
                d.webhook_id == endpoint.id,
                d.event_id == event_id,
            )
            .values(**values)
        )
