"""The dispatcher's statements: claim due deliveries, record each attempt's outcome, and
drop the deliveries of events the retention purge removes.

A claim leases rows in one short transaction: `attempts` goes up by one and
`next_attempt_at` moves past the attempt's deadline (send timeout + margin), so no other
dispatcher takes them meanwhile, and a dispatcher that dies mid-attempt leaves them to be
taken again when the lease runs out. PostgreSQL locks the rows it selects with
`FOR UPDATE OF webhook_deliveries SKIP LOCKED` (dispatchers on other processes or nodes
pass over them instead of waiting); SQLite runs the claim under its one write lock.

Each of these transactions plans its statements for their values (`plan_for_values`): the
table swings from empty to a backlog of thousands and back within seconds, and a plan
cached on a connection while it was small (a sequential scan, or a walk of the due-rows
index) would be kept for that connection's life (until statistics change, which without
autovacuum is never), making every lease and outcome a scan of the table.

The send happens outside any transaction; its outcome is recorded only if the row still
carries this attempt's lease (its number and claim time): a lease that ran out and was
claimed again, or a replay that queued the event anew, wins over a late answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import and_, bindparam, func, literal_column, select, true, update

from chatcrm.db.database import Connection, Database
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import events, webhook_deliveries, webhooks
from chatcrm.events.publisher import queue_before_disabling
from chatcrm.webhooks.outcomes import FAILING, GONE, EndpointEffect, Verdict

_d = webhook_deliveries.c
_w = webhooks.c
_e = events.c

# Inline, not a parameter: the due-rows index is partial on exactly this predicate, and a
# prepared statement's generic plan could not use it for `status = $1`.
_PENDING = _d.status == literal_column("'pending'")
# Due, and not before the low-water mark (`low_water`): the due-rows index keeps an entry
# for every version a row had while pending until PostgreSQL vacuums it, all of them before
# the mark, and a walk of the index from its start would read them all at every claim.
_DUE = and_(
    _PENDING, _d.next_attempt_at >= bindparam("_from"), _d.next_attempt_at <= bindparam("_due")
)
# A mark that holds nothing back: the first claims of a dispatcher, and the tests'.
EVER = datetime(1970, 1, 1, tzinfo=UTC)
# Rows written by another process or node whose clock is behind this one by less than this
# are still found at once (others within the next refresh of the mark).
MARK_MARGIN = timedelta(seconds=2)


def _statements(dialect: str, *, one_workspace: bool = False) -> tuple[Any, Any]:
    # Endpoints already at their bound of sends in flight in this process are left out,
    # so their rows do not fill the batch while other endpoints' rows wait.
    not_busy = ~in_id_list(_d.webhook_id, "_busy", dialect)
    # Citus: a claim names its workspace (row locks only in a statement on one shard).
    scope = [_d.workspace_id == bindparam("_ws")] if one_workspace else []

    # The due rows first, alone, in the order of the partial index on next_attempt_at, then
    # what sending them needs: joined the other way round, the planner may walk every
    # pending row of an endpoint (and sort them, bodies and all) to find the first few.
    # A scalar subquery, not EXISTS: the planner cannot turn it into a join that walks the
    # endpoint's rows, whatever its statistics say (a backlog that grew in a minute).
    # (Citus: the subquery's workspace by its own equality too, or no row lock is taken.)
    endpoint_ws = bindparam("_ws") if one_workspace else _d.workspace_id
    enabled = (
        select(_w.enabled)
        .where(_w.workspace_id == endpoint_ws, _w.id == _d.webhook_id)
        .scalar_subquery()
        .is_(true())
    )
    due = (
        select(
            _d.workspace_id, _d.webhook_id, _d.event_id, _d.event_type, _d.attempts, _d.created_at
        )
        .where(*scope, _DUE, enabled, not_busy)
        .order_by(_d.next_attempt_at)
        .limit(bindparam("_limit"))
        # Other dispatchers pass over the rows this one holds instead of waiting for them;
        # the webhook and event rows stay unlocked.
        .with_for_update(skip_locked=True)
        .subquery("due")
    )
    claim = select(
        due,
        _w.url,
        _w.secret,
        _w.previous_secret,
        _w.previous_secret_expires_at,
        _e.body,
    ).select_from(
        due.join(
            webhooks, and_(_w.workspace_id == due.c.workspace_id, _w.id == due.c.webhook_id)
        ).join(events, and_(_e.workspace_id == due.c.workspace_id, _e.id == due.c.event_id))
    )
    if one_workspace:
        # Every table pinned to the workspace by its own equality, so that Citus routes
        # the whole statement, row locks and all, to that workspace's shards.
        claim = claim.where(
            _w.workspace_id == bindparam("_ws"), _e.workspace_id == bindparam("_ws")
        )
    any_due = (
        select(_d.event_id).where(_DUE, enabled, not_busy).order_by(_d.next_attempt_at).limit(1)
    )
    return any_due, claim


_ANY_DUE, _CLAIM = {}, {}
for _dialect in ("postgresql", "sqlite"):
    _ANY_DUE[_dialect], _CLAIM[_dialect] = _statements(_dialect)
_CLAIM_ONE_WORKSPACE = _statements("postgresql", one_workspace=True)[1]
# Citus: the workspaces that have due deliveries, oldest due first (a multi-shard read
# without locks); each is then claimed on its own shard.
_DUE_WORKSPACES = (
    select(_d.workspace_id, func.min(_d.next_attempt_at).label("first"))
    .where(_DUE)
    .group_by(_d.workspace_id)
    .order_by(func.min(_d.next_attempt_at))
    .limit(bindparam("_limit"))
)

# A delivery's row by its key, and by its creation time too: with all four columns of the
# endpoint's list index named, whichever of the two indexes the planner picks finds the one
# row. (By the key alone, a planner working from statistics of an empty table picked the
# list index, (workspace, webhook, created_at, event), and walked every delivery of the
# endpoint for each update: a 20,000-event replay ran at half the speed of a 5,000 one.)
_ROW = (
    _d.workspace_id == bindparam("_ws"),
    _d.webhook_id == bindparam("_wh"),
    _d.created_at == bindparam("_created"),
    _d.event_id == bindparam("_ev"),
)
_LEASE = update(webhook_deliveries).where(*_ROW)
# Still pending, written so that the due-rows index (partial on `status = 'pending'`) cannot
# serve the statement: planned while the table was small, it walked that index, dead
# entries and all, for every outcome recorded.
_STILL_PENDING = func.coalesce(_d.status, "") == literal_column("'pending'")
# The attempt's number and its claim time (microseconds) together name the lease: a replay
# that starts the count again cannot make a stale outcome look current.
_RECORD = update(webhook_deliveries).where(
    *_ROW,
    _STILL_PENDING,
    _d.attempts == bindparam("_attempt"),
    _d.last_attempt_at == bindparam("_claimed_at"),
)

_ENDPOINT = (_w.workspace_id == bindparam("_ws"), _w.id == bindparam("_wh"))
_RESET_FAILURES = (
    update(webhooks).where(*_ENDPOINT, _w.consecutive_failures != 0).values(consecutive_failures=0)
)
_COUNT_FAILURE = (
    update(webhooks)
    .where(*_ENDPOINT)
    .values(consecutive_failures=_w.consecutive_failures + 1)
    .returning(_w.consecutive_failures)
)
# Only an enabled endpoint is disabled: "gone" is not overwritten by "failing".
_DISABLE = (
    update(webhooks)
    .where(*_ENDPOINT, _w.enabled == true())
    .values(enabled=False, disabled_reason=bindparam("_reason"), updated_at=bindparam("_now"))
)


@dataclass(frozen=True, slots=True)
class Claimed:
    """A delivery leased for one attempt, with what sending it needs."""

    workspace_id: str
    webhook_id: str
    event_id: str
    event_type: str
    created_at: datetime  # the delivery's, with the key it names its row exactly
    attempt: int  # this attempt's number, 1 for the first
    claimed_at: datetime  # stored as last_attempt_at; with `attempt`, names the lease
    url: str
    secret: str
    previous_secret: str | None
    previous_secret_expires_at: datetime | None
    body: bytes  # the event object exactly as stored: the bytes sent and signed
    # The previous attempt was the last the schedule allows and was cut short (its lease
    # ran out): nothing more is sent, the delivery is failed under that attempt's number.
    closing: bool = False


_FIRST_PENDING = select(func.min(_d.next_attempt_at)).where(
    _PENDING, _d.next_attempt_at >= bindparam("_from")
)


async def low_water(db: Database, *, now: datetime, since: datetime = EVER) -> datetime:
    """A time no pending delivery is due before, now or later: the earliest `next_attempt_at`
    of the pending rows, or now if earlier (less a margin for clocks a little behind).
    It holds because every write of a pending row sets `next_attempt_at` to its own now or
    later (queued, retried, leased, interrupted). `since`: the previous mark, where the walk
    of the index may start (no pending row is before it), so that each walk reads only the
    dead entries left since."""
    async with db.session() as conn:
        first = await conn.fetchval(_FIRST_PENDING, {"_from": since})
    return (now if first is None else min(first, now)) - MARK_MARGIN


async def anything_due(
    db: Database, *, due: datetime, busy: list[str], since: datetime = EVER
) -> bool:
    """A cheap read first, so an idle dispatcher never takes a lock or SQLite's writer.
    (On Citus the claim's own first read is as cheap, and takes no lock: not repeated.)"""
    if await db.is_citus():
        return True
    async with db.session() as conn:
        row = await conn.fetchrow(
            _ANY_DUE[db.dialect],
            {"_due": due, "_from": since, "_busy": id_list(busy, db.dialect)},
        )
    return row is not None


async def claim(
    db: Database,
    *,
    due: datetime,
    now: datetime,
    lease_seconds: float,
    busy: list[str],
    limit: int,
    room: Mapping[str, int],
    per_endpoint: int,
    since: datetime = EVER,
    max_attempts: int | None = None,
) -> tuple[list[Claimed], bool]:
    """Lease up to `limit` deliveries due at `due`, at most `room[id]` (else
    `per_endpoint`) of any one endpoint. Returns them, and whether due rows were passed
    over because their endpoint had no room left (the caller claims again at once). A row
    that already had `max_attempts` is leased `closing` (see Claimed)."""
    taken: list[Claimed] = []
    passed_over = False
    left = dict(room)
    lease_until = now + timedelta(seconds=lease_seconds)
    async with db.transaction() as conn:
        await conn.plan_for_values()
        rows = await _due_rows(conn, due=due, since=since, busy=busy, limit=limit)
        for row in rows:
            free = left.get(row["webhook_id"], per_endpoint)
            if free <= 0:
                passed_over = True  # stays as it was; unlocked when this transaction ends
                continue
            left[row["webhook_id"]] = free - 1
            taken.append(_claimed(row, now, max_attempts))
        await conn.executemany(
            _LEASE,
            [
                {
                    "attempts": c.attempt,
                    "next_attempt_at": lease_until,
                    "last_attempt_at": now,
                    # Cleared: until this attempt's outcome is known, the previous attempt's
                    # status would be read as this one's.
                    "last_response_status": None,
                    "last_error": None,
                    "_ws": c.workspace_id,
                    "_wh": c.webhook_id,
                    "_created": c.created_at,
                    "_ev": c.event_id,
                }
                for c in taken
            ],
        )
    return taken, passed_over


async def _due_rows(
    conn: Connection, *, due: datetime, since: datetime, busy: list[str], limit: int
) -> list[dict[str, Any]]:
    """Due rows locked (SKIP LOCKED) with what sending them needs, oldest due first."""
    params = {"_due": due, "_from": since, "_busy": id_list(busy, conn.dialect), "_limit": limit}
    if not await conn.is_citus():
        return await conn.fetch(_CLAIM[conn.dialect], params)
    rows: list[dict[str, Any]] = []
    for found in await conn.fetch(_DUE_WORKSPACES, {"_due": due, "_from": since, "_limit": limit}):
        left = limit - len(rows)
        if left <= 0:
            break
        rows += await conn.fetch(
            _CLAIM_ONE_WORKSPACE, {**params, "_ws": found["workspace_id"], "_limit": left}
        )
    return rows


def _claimed(row: Mapping[str, Any], now: datetime, max_attempts: int | None = None) -> Claimed:
    closing = max_attempts is not None and row["attempts"] >= max_attempts
    return Claimed(
        workspace_id=row["workspace_id"],
        webhook_id=row["webhook_id"],
        event_id=row["event_id"],
        event_type=row["event_type"],
        created_at=row["created_at"],
        attempt=row["attempts"] if closing else row["attempts"] + 1,
        claimed_at=now,
        url=row["url"],
        secret=row["secret"],
        previous_secret=row["previous_secret"],
        previous_secret_expires_at=row["previous_secret_expires_at"],
        body=row["body"].encode("utf-8"),
        closing=closing,
    )


def _outcome(c: Claimed, verdict: Verdict) -> dict[str, Any]:
    """`_RECORD`'s values: the outcome, on the row that still carries this attempt."""
    return {
        "status": verdict.status,
        "next_attempt_at": verdict.next_attempt_at,
        "last_response_status": verdict.response_status,
        "last_error": verdict.error,
        "_ws": c.workspace_id,
        "_wh": c.webhook_id,
        "_created": c.created_at,
        "_ev": c.event_id,
        "_attempt": c.attempt,
        "_claimed_at": c.claimed_at,
    }


async def record(
    db: Database, c: Claimed, verdict: Verdict, *, now: datetime, disable_after: int
) -> str | None:
    """Store an attempt's outcome and its effect on the endpoint, in one transaction.
    Returns the reason the endpoint was disabled just now, if it was; raises `Stale` when
    the row no longer carries this attempt (see the module docstring)."""
    async with db.transaction() as conn:
        await conn.plan_for_values()
        changed = await conn.execute(_RECORD, _outcome(c, verdict))
        if changed == 0:
            raise Stale
        return await _endpoint_effect(conn, c, verdict.effect, now=now, limit=disable_after)


async def record_successes(db: Database, succeeded: list[tuple[Claimed, Verdict]]) -> None:
    """Store many successful attempts in one transaction (the common outcome, so a busy
    dispatcher commits once per batch, not once per delivery). An attempt whose lease
    is gone is left as it is, as `record` does (without telling which)."""
    async with db.transaction() as conn:
        await conn.plan_for_values()
        await conn.executemany(
            _RECORD,
            [_outcome(c, verdict) for c, verdict in succeeded],
        )
        # In a fixed order, so two dispatchers' batches never wait on each other in turn.
        for ws, wh in sorted({(c.workspace_id, c.webhook_id) for c, _ in succeeded}):
            await conn.execute(_RESET_FAILURES, {"_ws": ws, "_wh": wh})


class Stale(Exception):
    """The delivery was claimed again, queued again or deleted while this attempt ran."""


async def _endpoint_effect(
    conn: Connection, c: Claimed, effect: EndpointEffect, *, now: datetime, limit: int
) -> str | None:
    endpoint = {"_ws": c.workspace_id, "_wh": c.webhook_id}
    if effect is EndpointEffect.RESET_FAILURES:
        await conn.execute(_RESET_FAILURES, endpoint)
        return None
    if effect is EndpointEffect.DISABLE_GONE:
        await queue_before_disabling(conn, c.workspace_id, c.webhook_id)
        disabled = await conn.execute(_DISABLE, {**endpoint, "_reason": GONE, "_now": now})
        return GONE if disabled else None
    if effect is EndpointEffect.COUNT_FAILURE:
        failures = await conn.fetchval(_COUNT_FAILURE, endpoint)
        if failures is not None and failures >= limit:
            await queue_before_disabling(conn, c.workspace_id, c.webhook_id)
            disabled = await conn.execute(_DISABLE, {**endpoint, "_reason": FAILING, "_now": now})
            return FAILING if disabled else None
    return None
