"""People's background work in each process: the keys' `lastUsedAt` (J.5: at most a
minute stale), written for the keys this process saw in one statement every 30 s rather
than on every request; and the audit log's 365 days (J.6)."""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from sqlalchemy import bindparam, delete, or_, update

from chatcrm.auth.service import AuthCache
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import api_keys
from chatcrm.people.audit import KEPT_DAYS
from chatcrm.people.tables import audit_log

log = logging.getLogger("chatcrm.people")
EVERY_SECONDS = 30.0
# Never backwards: another process may have written a later use of the same key.
_USED = {
    dialect: update(api_keys)
    .where(
        in_id_list(api_keys.c.id, "_ids", dialect),
        or_(api_keys.c.last_used_at.is_(None), api_keys.c.last_used_at < bindparam("_at")),
    )
    .values(last_used_at=bindparam("_at"))
    for dialect in ("postgresql", "sqlite")
}
_PURGE = delete(audit_log).where(audit_log.c.at < bindparam("_before"))


async def write_key_use(db: Database, cache: AuthCache) -> None:
    """Each key's last use, to the second: one statement per second that saw a last use
    (at most one per second of the 30 between writes, however many keys)."""
    used, cache.recently_used = cache.recently_used, {}
    by_second: dict[int, list[str]] = defaultdict(list)
    for key_id, seen in used.items():
        by_second[int(seen)].append(key_id)
    if not by_second:
        return
    async with db.transaction() as conn:
        for second, key_ids in sorted(by_second.items()):
            at = datetime.fromtimestamp(second, UTC)
            await conn.execute(
                _USED[conn.dialect], {"_ids": id_list(sorted(key_ids), conn.dialect), "_at": at}
            )


async def upkeep_forever(db: Database, cache: AuthCache) -> None:
    rounds = 0
    while True:
        await asyncio.sleep(EVERY_SECONDS)
        try:
            await write_key_use(db, cache)
            rounds += 1
            if rounds % 120 == 1:  # about hourly
                async with db.transaction() as conn:
                    before = utcnow() - timedelta(days=KEPT_DAYS)
                    await conn.execute(_PURGE, {"_before": before})
        except Exception as exc:  # the database blinked: the next round tries again
            log.warning("people upkeep failed", extra={"error": type(exc).__name__})
