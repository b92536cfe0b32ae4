"""Retention: events older than `CHATCRM_EVENT_RETENTION_DAYS` (30) leave the feed and
history, with their delivery rows (contract D.2). An `after` naming one is then a 400."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from sqlalchemy import bindparam, delete, exists

from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.db.errors import DatabaseError
from chatcrm.db.schema import events, webhook_deliveries

log = logging.getLogger("chatcrm.events")

EVERY_SECONDS = 600.0

_e, _d = events.c, webhook_deliveries.c
# First the deliveries of the events that go (their foreign key refers to them).
_DELETE_DELIVERIES = delete(webhook_deliveries).where(
    exists()
    .where(_e.workspace_id == _d.workspace_id, _e.id == _d.event_id)
    .where(_e.created_at < bindparam("_cutoff"))
)
_DELETE_EVENTS = delete(events).where(events.c.created_at < bindparam("_cutoff"))


async def purge(db: Database, *, days: float) -> int:
    """Remove expired events and their deliveries; returns how many events went."""
    cutoff = utcnow() - timedelta(days=days)
    async with db.transaction() as conn:
        await conn.execute(_DELETE_DELIVERIES, {"_cutoff": cutoff})
        return await conn.execute(_DELETE_EVENTS, {"_cutoff": cutoff})


async def purge_forever(db: Database, *, days: float) -> None:
    while True:
        try:
            await purge(db, days=days)
        except (DatabaseError, OSError) as exc:
            log.warning("purging expired events failed: %s", exc)
        await asyncio.sleep(EVERY_SECONDS)
