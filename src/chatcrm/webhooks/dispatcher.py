"""The dispatcher: claims due deliveries, sends them, records what came of each attempt
(contract D.4). It runs inside every `chatcrm serve` worker and as `chatcrm dispatch`.

Each round claims what is due and fits the bounds on sends in flight (per endpoint, its
window: webhooks/windows.py, and in all, per process), and starts one asyncio task per
attempt; a finished attempt frees its slot and wakes the loop. An endpoint at its bound is
left out of the claim, so a slow receiver holds only its own slots and other endpoints'
first attempts go out at once.
When idle the loop sleeps until `wake()` (the event publisher calls it after fanning an
event out) or at most a quarter of a second, so a first attempt starts within a second of the
commit that queued it, whichever process made the commit.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from datetime import datetime

import aiohttp

from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.logs import WEBHOOK_LOGGER, log_fields
from chatcrm.webhooks import sender
from chatcrm.webhooks.claims import (
    EVER,
    Claimed,
    Stale,
    anything_due,
    claim,
    low_water,
    record,
    record_successes,
)
from chatcrm.webhooks.outcomes import (
    FAILED,
    PENDING,
    SUCCEEDED,
    EndpointEffect,
    Outcome,
    Verdict,
    judge,
)
from chatcrm.webhooks.schedule import RetrySchedule
from chatcrm.webhooks.windows import Windows

log = logging.getLogger(WEBHOOK_LOGGER)

IDLE_POLL_SECONDS = 0.25
# The claims' low-water mark (claims.low_water) is found again this often (from the
# previous one, so each time reading only what was claimed since), and from the start of
# the index this often (a row written by a process whose clock is well behind is then
# found too).
MARK_SECONDS = 0.5
FULL_MARK_SECONDS = 30.0
# While an endpoint is at its window, a look for other endpoints' due rows walks past its
# backlog: at most one such look this often, however often the publisher wakes the loop —
# unless attempts ended and freed slots (see `_start`), which bounds the looks by the
# sends themselves: a slow receiver must not hold other endpoints to one claim per period
# (D.4).
BUSY_LOOK_SECONDS = 0.5
# The lease of an attempt is its send deadline plus the time to record the outcome: a wait
# for a pool connection (bounded by db_connect_timeout) and a few short statements.
LEASE_MARGIN_SECONDS = 5.0
# On shutdown, attempts under way get this long to finish before they are cut short.
SHUTDOWN_GRACE_SECONDS = 5.0
# Recording an outcome is tried this many times (the database may blink) within the lease.
_RECORD_TRIES = 3
INTERRUPTED = "attempt interrupted: the dispatcher stopped before the answer came"
LAST_CUT_SHORT = "the last attempt was cut short: its dispatcher stopped before the answer came"


class Dispatcher:
    def __init__(
        self, db: Database, settings: Settings, *, rng: random.Random | None = None
    ) -> None:
        self._db = db
        self._allow_private = settings.webhook_allow_private
        self._timeout = settings.webhook_timeout
        self._lease = settings.webhook_timeout + settings.db_connect_timeout
        self._lease += LEASE_MARGIN_SECONDS
        self._windows = Windows(settings.webhook_max_in_flight)
        self._total = settings.webhook_max_in_flight_total
        self._disable_after = settings.webhook_disable_after
        # Raises ScheduleError on a malformed setting: the process refuses to start.
        self.schedule = RetrySchedule.parse(settings.webhook_retry_schedule)
        self._rng = rng or random.Random()
        self._wake = asyncio.Event()
        self._in_flight: Counter[str] = Counter()  # sends under way per endpoint id
        self._tasks: set[asyncio.Task[None]] = set()
        self._client: aiohttp.ClientSession | None = None
        self._successes = _Successes(db)
        self._since = EVER  # the low-water mark of the claims, and when it was found
        self._since_found = -MARK_SECONDS
        self._since_found_in_full = -FULL_MARK_SECONDS
        self._busy_look = -BUSY_LOOK_SECONDS  # when a look passed over full endpoints last
        self._slots_freed = False  # attempts ended since that look, freeing room to claim
        self.attempts_started = 0  # since this dispatcher was made (logs, tests)

    def wake(self) -> None:
        """New deliveries were committed: claim now rather than at the next poll. Call it
        from the event loop the dispatcher runs on."""
        self._wake.set()

    async def run(self, stop: asyncio.Event) -> None:
        """Dispatch until `stop` is set, then give attempts under way a few seconds."""
        watcher = asyncio.create_task(self._wake_when(stop))
        failures = 0
        try:
            async with self._session():
                try:
                    while not stop.is_set():
                        self._wake.clear()
                        try:
                            await self._fill(due=utcnow())
                        except Exception as exc:  # the database is down: sends under way go on
                            failures += 1
                            if failures == 1 or failures % 100 == 0:
                                log.warning(
                                    "webhook dispatch cannot claim deliveries",
                                    extra={"error": f"{type(exc).__name__}: {exc}"[:300]},
                                )
                            # Backs off whatever wakes it: only `stop` ends the wait early.
                            with suppress(TimeoutError):
                                await asyncio.wait_for(stop.wait(), min(0.5 * 2**failures, 10.0))
                            continue
                        if failures:
                            log.info("webhook dispatch claims again", extra={"failures": failures})
                            failures = 0
                        await self._sleep(IDLE_POLL_SECONDS)
                finally:
                    await self._drain(SHUTDOWN_GRACE_SECONDS)
        finally:
            watcher.cancel()

    async def run_once(self) -> int:
        """Make one attempt of every delivery due now (within the bounds, in rounds) and
        record them all; returns how many attempts were made. For tests and tools."""
        due = utcnow()
        made = 0
        async with self._session():
            while True:
                made += await self._fill(due=due)
                if not self._tasks:
                    return made
                await asyncio.wait(set(self._tasks), return_when=asyncio.FIRST_COMPLETED)

    # --- claiming --------------------------------------------------------------------------

    async def _fill(self, *, due: datetime) -> int:
        """Claim what is due and has room, start sending it; returns how many started."""
        started = 0
        while True:
            room = self._total - len(self._tasks)
            if room <= 0:
                return started
            windows = self._windows
            busy = [id_ for id_, n in self._in_flight.items() if n >= windows.of(id_)]
            clock = time.monotonic()
            if busy:
                if not self._slots_freed and clock - self._busy_look < BUSY_LOOK_SECONDS:
                    return started  # their slots' freeing, or the next poll, looks again
                self._busy_look = clock
                self._slots_freed = False
            if clock - self._since_found >= MARK_SECONDS:
                full = clock - self._since_found_in_full >= FULL_MARK_SECONDS
                start = EVER if full else self._since
                self._since = await low_water(self._db, now=utcnow(), since=start)
                self._since_found = clock
                if full:
                    self._since_found_in_full = clock
            since = self._since
            if not await anything_due(self._db, due=due, busy=busy, since=since):
                return started
            free = windows.moved()
            for id_, n in self._in_flight.items():
                free[id_] = windows.of(id_) - n
            claimed, passed_over = await claim(
                self._db,
                due=due,
                now=utcnow(),
                lease_seconds=self._lease,
                busy=busy,
                limit=room,
                room=free,
                per_endpoint=windows.start,
                since=since,
                max_attempts=self.schedule.max_attempts,
            )
            for c in claimed:
                self._start(c)
            started += len(claimed)
            # Rows passed over belong to endpoints now at their bound; the next round
            # leaves those out and reaches the rows behind them.
            if not passed_over:
                return started

    def _start(self, c: Claimed) -> None:
        self.attempts_started += 1
        self._in_flight[c.webhook_id] += 1
        task = asyncio.create_task(self._attempt(c), name=f"webhook {c.webhook_id} {c.event_id}")
        self._tasks.add(task)

        def done(_: asyncio.Task[None]) -> None:
            self._tasks.discard(task)
            self._in_flight[c.webhook_id] -= 1
            left = self._in_flight[c.webhook_id]
            if left <= 0:
                del self._in_flight[c.webhook_id]
            # Claim again once half the endpoint's slots are free, not at every finished
            # attempt: claims of one row each would cost a transaction per send.
            # (Or when this frees the process's last slot: others may be waiting for it.)
            if 2 * left <= self._windows.of(c.webhook_id) or len(self._tasks) == self._total - 1:
                self._slots_freed = True
                self._wake.set()

        task.add_done_callback(done)

    # --- one attempt -----------------------------------------------------------------------

    async def _attempt(self, c: Claimed) -> None:
        started = time.monotonic()
        assert self._client is not None
        if c.closing:  # the last attempt was cut short: failed, never an attempt more
            verdict = Verdict(FAILED, None, None, LAST_CUT_SHORT, EndpointEffect.COUNT_FAILURE)
            _log_attempt(c, verdict, await self._record(c, verdict, utcnow()), started)
            return
        try:
            outcome = await sender.attempt(
                self._client, c, deadline=self._timeout, allow_private=self._allow_private
            )
        except asyncio.CancelledError:
            # Cut short by shutdown: due again at once, for any dispatcher. It may have
            # reached the receiver, so this is the one case of a duplicate send.
            now = utcnow()
            if c.attempt >= self.schedule.max_attempts:  # the last one: none may follow
                interrupted = Verdict(FAILED, None, None, INTERRUPTED, EndpointEffect.COUNT_FAILURE)
            else:
                interrupted = Verdict(PENDING, now, None, INTERRUPTED, EndpointEffect.NONE, 0.0)
            with suppress(Exception):
                await record(self._db, c, interrupted, now=now, disable_after=self._disable_after)
            _log_attempt(c, interrupted, None, started)
            raise
        except Exception as exc:  # a defect here must not lose the delivery: retry it
            log.exception("webhook attempt failed unexpectedly")
            outcome = Outcome(None, f"internal error: {type(exc).__name__}")
        now = utcnow()
        self._windows.answered(
            c.webhook_id, succeeded=outcome.succeeded, overloaded=outcome.overloaded
        )
        verdict = judge(outcome, attempt=c.attempt, schedule=self.schedule, now=now, rng=self._rng)
        disabled = None
        # Successes are the common outcome: recorded in batches. Anything else, or a batch
        # that could not be written, in a transaction of its own, with retries.
        if verdict.status != SUCCEEDED or not await self._successes.recorded(c, verdict):
            disabled = await self._record(c, verdict, now)
        _log_attempt(c, verdict, disabled, started)

    async def _record(self, c: Claimed, verdict: Verdict, now: datetime) -> str | None:
        for try_ in range(1, _RECORD_TRIES + 1):
            try:
                return await record(
                    self._db, c, verdict, now=now, disable_after=self._disable_after
                )
            except Stale:
                log.info(
                    "webhook attempt outcome dropped: the delivery was claimed or queued again",
                    extra={"webhook_id": c.webhook_id, "event_id": c.event_id},
                )
                return None
            except Exception as exc:
                if try_ == _RECORD_TRIES:
                    # The lease runs out and the delivery is attempted again.
                    log.error(
                        "webhook attempt outcome not recorded",
                        extra={
                            "webhook_id": c.webhook_id,
                            "event_id": c.event_id,
                            "error": f"{type(exc).__name__}: {exc}"[:300],
                        },
                    )
                    return None
                await asyncio.sleep(0.5 * try_)
        return None

    # --- waiting and stopping --------------------------------------------------------------

    async def _sleep(self, seconds: float) -> None:
        with suppress(TimeoutError):
            await asyncio.wait_for(self._wake.wait(), seconds)

    async def _wake_when(self, stop: asyncio.Event) -> None:
        await stop.wait()
        self._wake.set()

    async def _drain(self, grace: float) -> None:
        if not self._tasks:
            return
        _, late = await asyncio.wait(set(self._tasks), timeout=grace)
        for task in late:
            task.cancel()
        if late:
            await asyncio.wait(late, timeout=grace)

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[None]:
        self._client = sender.new_client(
            max_connections=self._total, allow_private=self._allow_private
        )
        try:
            yield
        finally:
            client, self._client = self._client, None
            await client.close()


class _Successes:
    """Successful attempts recorded together: each waits for the commit of a batch that
    holds it; one batch is written at a time, and the next holds all that came meanwhile."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._queue: list[tuple[Claimed, Verdict, asyncio.Future[bool]]] = []
        self._writer: asyncio.Task[None] | None = None

    async def recorded(self, c: Claimed, verdict: Verdict) -> bool:
        """Whether the batch holding this success was committed."""
        done: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._queue.append((c, verdict, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())
        return await asyncio.shield(done)

    async def _write(self) -> None:
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                await record_successes(self._db, [(c, verdict) for c, verdict, _ in batch])
                written = True
            except Exception:  # each attempt then records itself, with retries
                written = False
            for *_, done in batch:
                if not done.done():
                    done.set_result(written)


def _log_attempt(c: Claimed, verdict: Verdict, disabled: str | None, started: float) -> None:
    result = "retry" if verdict.status == PENDING else verdict.status
    extra: dict[str, object] = {
        "workspace_id": c.workspace_id,
        "webhook_id": c.webhook_id,
        "event_id": c.event_id,
        "event_type": c.event_type,
        "attempt": c.attempt,
        "result": result,
        "response_status": verdict.response_status,
        "error": verdict.error,
        "duration_ms": round((time.monotonic() - started) * 1000, 1),
    }
    if verdict.wait is not None:
        extra["retry_in_s"] = round(verdict.wait, 3)
    if disabled is not None:
        extra["endpoint_disabled"] = disabled
    # A retry is routine; a delivery given up, an endpoint disabled or an attempt cut short
    # is what an operator looks for.
    routine = result in ("succeeded", "retry") and disabled is None and verdict.error != INTERRUPTED
    level = logging.INFO if routine else logging.WARNING
    log_fields(log, level, "webhook attempt", extra)
