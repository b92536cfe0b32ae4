"""Retention: events older than `CHATCRM_EVENT_RETENTION_DAYS` (30) leave the feed and
history, with their delivery rows (contract D.2). An `after` naming one is then a 400."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from sqlalchemy import Select, bindparam, delete, exists, func, literal_column, select, update

from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.db.errors import DatabaseError
from chatcrm.db.schema import events, webhook_deliveries, webhooks

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
# SQLite numbers an event after the largest rowid (events/outbox.py). A purge that takes the
# newest event (every event of the server had expired) lowers that, and the numbers that
# follow are drawn again: behind the place of every endpoint that had passed them, whose
# deliveries of the new events would never be queued. Those places go back to the last
# event left (0 when none is): no event lies between, so none is skipped or sent twice.
_LAST: Select[tuple[int]] = select(func.coalesce(func.max(literal_column("rowid")), 0)).select_from(
    events
)
_BACK_TO_LAST = (
    update(webhooks)
    .where(webhooks.c.feed_seq > _LAST.scalar_subquery())
    .values(feed_seq=_LAST.scalar_subquery())
)


async def purge(db: Database, *, days: float) -> int:
    """Remove expired events and their deliveries; returns how many events went."""
    cutoff = utcnow() - timedelta(days=days)
    async with db.transaction() as conn:
        await conn.execute(_DELETE_DELIVERIES, {"_cutoff": cutoff})
        purged = await conn.execute(_DELETE_EVENTS, {"_cutoff": cutoff})
        if purged and conn.dialect == "sqlite":
            await conn.execute(_BACK_TO_LAST)
        return purged


async def purge_forever(db: Database, *, days: float) -> None:
    while True:
        try:
            await purge(db, days=days)
        except (DatabaseError, OSError) as exc:
            log.warning("purging expired events failed: %s", exc)
        await asyncio.sleep(EVERY_SECONDS)
