"""The channel sender (contract K.2): claims queued messages and read receipts, sends them
to the Graph API, records what came of each. It runs beside the webhook dispatcher inside
every `chatcrm serve` worker and in `chatcrm dispatch`, on the same small pool.

When idle it sleeps until `wake()` (the event publisher calls it after publishing, so a
message queued anywhere is seen at once) or at most a quarter of a second: with no load
the first attempt starts well within a second of the commit.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from contextlib import suppress
from datetime import timedelta
from typing import Any

import httpx

from chatcrm.channels import graph
from chatcrm.channels.send_claims import (
    Receipt,
    Send,
    anything_due,
    claim_receipts,
    claim_sends,
    record_failed,
    record_retry,
    record_sent,
    settle_early_statuses,
)
from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.webhooks.schedule import RetrySchedule

log = logging.getLogger("chatcrm.channels")

CHANNEL_SCHEDULE = "CHATCRM_CHANNEL_RETRY_SCHEDULE"
IDLE_POLL_SECONDS = 0.25
LEASE_MARGIN_SECONDS = 5.0
SHUTDOWN_GRACE_SECONDS = 5.0
# Statuses kept for a send under way are applied when its answer is recorded; only when the
# two crossed is one left, applied at the next settling (send_claims.settle_early_statuses).
SETTLE_EVERY_SECONDS = 2.0


def http_client(settings: Settings) -> httpx.AsyncClient:
    return graph.new_client(
        timeout=settings.channel_timeout,
        max_connections=settings.channel_max_in_flight,
        allow_private=settings.webhook_allow_private,
    )


class Sender:
    def __init__(self, db: Database, settings: Settings) -> None:
        self._db = db
        self._settings = settings
        self._allow_private = settings.webhook_allow_private
        self._timeout = settings.channel_timeout
        self._lease = settings.channel_timeout + settings.db_connect_timeout + LEASE_MARGIN_SECONDS
        self._room = settings.channel_max_in_flight
        # Raises ScheduleError on a malformed CHATCRM_CHANNEL_RETRY_SCHEDULE.
        schedule = RetrySchedule.parse(settings.channel_retry_schedule, CHANNEL_SCHEDULE)
        self.schedule = schedule.never_sooner()
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        self._client: httpx.AsyncClient | None = None
        self.attempts_started = 0
        self._next_settling = utcnow()

    def wake(self) -> None:
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Send until `stop` is set, then give sends under way a few seconds."""
        self._client = http_client(self._settings)
        failures = 0
        try:
            while not stop.is_set():
                self._wake.clear()
                try:
                    await self._round()
                except Exception as exc:  # the database is down: sends under way go on
                    failures += 1
                    if failures == 1 or failures % 100 == 0:
                        log.warning(
                            "channel sender cannot claim messages",
                            extra={"error": f"{type(exc).__name__}: {exc}"[:300]},
                        )
                    with suppress(TimeoutError):
                        await asyncio.wait_for(stop.wait(), min(0.5 * 2**failures, 10.0))
                    continue
                failures = 0
                waiters = {
                    asyncio.ensure_future(self._wake.wait()),
                    asyncio.ensure_future(stop.wait()),
                }
                _, pending = await asyncio.wait(
                    waiters, timeout=IDLE_POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
                )
                for w in pending:
                    w.cancel()
        finally:
            if self._tasks:
                await asyncio.wait(self._tasks, timeout=SHUTDOWN_GRACE_SECONDS)
            for task in self._tasks:
                task.cancel()
            await self._client.aclose()

    async def run_once(self) -> int:
        """One round, waiting for its sends (tests, benchmarks); returns sends started."""
        if self._client is None:
            self._client = http_client(self._settings)
        before = self.attempts_started
        try:
            await self._round()
            if self._tasks:
                await asyncio.wait(self._tasks)
        finally:
            await self._client.aclose()
            self._client = None
        return self.attempts_started - before

    async def _round(self) -> None:
        now = utcnow()
        if now >= self._next_settling:
            self._next_settling = now + timedelta(seconds=SETTLE_EVERY_SECONDS)
            await settle_early_statuses(self._db, now=now)
        if not await anything_due(self._db, due=now):
            return
        room = self._room - len(self._tasks)
        if room > 0:
            for s in await claim_sends(
                self._db, due=now, now=now, lease_seconds=self._lease, limit=room
            ):
                self._start(self._send(s))
        for r in await claim_receipts(self._db, due=now, limit=self._room):
            self._start(self._receipt(r))

    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            # Its type only: an error's text may quote what it was given (a token).
            log.error("channel send crashed", extra={"error": type(task.exception()).__name__})
        self._wake.set()  # room for more

    async def _send(self, s: Send) -> None:
        self.attempts_started += 1
        assert self._client is not None
        if s.channel is None or s.to is None:
            reason = "no enabled channel" if s.channel is None else s.not_to
            error = {"code": "NO_CHANNEL", "title": f"not sent: {reason}"}
            await record_failed(self._db, s, error, utcnow())
            return
        if s.template is not None:
            body = graph.template_body(s.to, s.template, s.reply_to)
        else:
            body = graph.text_body(s.to, s.text or "", s.reply_to)
        result = await graph.post(
            self._client,
            graph.Access.of(s.channel),
            body,
            deadline=self._timeout,
            allow_private=self._allow_private,
        )
        now = utcnow()
        if result.outcome == graph.SENT:
            await record_sent(self._db, s, result.external_id, now)
            return
        if result.outcome == graph.RETRY:
            wait = self.schedule.wait_after(s.attempt, retry_after=result.retry_after)
            if wait is not None:
                await record_retry(self._db, s, now + timedelta(seconds=wait))
                log.info(
                    "channel send will be retried",
                    extra={"message_id": s.message_id, "reason": result.detail, "in": wait},
                )
                return
            error = {
                "code": "NOT_SENT",
                "title": f"not sent after {s.attempt} attempts: {result.detail}",
            }
            await record_failed(self._db, s, error, now)
            return
        assert result.error is not None
        log.info(
            "channel send failed",
            extra={
                "message_id": s.message_id,
                "code": result.error["code"],
                "reason": result.detail,
            },
        )
        await record_failed(self._db, s, result.error, now)

    async def _receipt(self, r: Receipt) -> None:
        assert self._client is not None
        result = await graph.post(
            self._client,
            graph.Access.of(r.channel),
            graph.read_receipt_body(r.wamid),
            deadline=self._timeout,
            allow_private=self._allow_private,
        )
        if result.outcome != graph.SENT:
            log.info("read receipt not sent", extra={"reason": result.detail})
