"""An endpoint's deliveries (contract D.4): its log, a test event, and replays.

A delivery is one row per (endpoint, event). Queuing one — a test, or a replay of events
it already had, also succeeded ones — writes the row as the dispatcher finds new work:
`pending`, no attempts, due now, no error. The dispatcher claims due pending rows.

The publisher (events/publisher.py) queues the first deliveries of each event; a replay
may come before it for an event just committed, and then the publisher leaves the row
queued here as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Any

import orjson
from sqlalchemy import Select, String, bindparam, exists, literal, null, or_, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from chatcrm.core.errors import FieldError, ValidationFailed, require_valid
from chatcrm.core.ids import is_id
from chatcrm.core.pagination import TokenCodec
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection, Row
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.keyset import list_with_token
from chatcrm.db.schema import events, webhook_deliveries
from chatcrm.db.types import UTCDateTime
from chatcrm.events.outbox import IN_FEED, write_event
from chatcrm.events.types import RECORD_TYPES, WEBHOOK_TEST, matches
from chatcrm.records import bodies
from chatcrm.records.fields import FULL
from chatcrm.records.listing import Filter, Filtering, read_filters
from chatcrm.webhooks import repository as repo
from chatcrm.webhooks.errors import WebhookNotFound
from chatcrm.webhooks.fields import DELIVERY, REPLAY, STATUS

_d = webhook_deliveries.c
_e = events.c


class StatusFilter(Filter):
    """`?status=`: the deliveries in one state."""

    name = "status"
    description = "pending, succeeded or failed."

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "enum": list(STATUS.allowed)}

    def parse(self, text: str) -> Any:
        return STATUS.clean(self.name, text, nullable=False)


FILTERS: tuple[Filter, ...] = (StatusFilter(),)


async def _require_webhook(conn: Connection, workspace_id: str, webhook_id: str) -> list[str]:
    """The endpoint's subscription (its eventTypes); 404 when it is not one of the
    workspace's endpoints. Inside a transaction it is not deleted before this one ends."""
    stored = await repo.event_types(conn, workspace_id, webhook_id) if is_id(webhook_id) else None
    if stored is None:
        raise WebhookNotFound(webhook_id)
    patterns: list[str] = orjson.loads(stored)
    return patterns


# --- the log --------------------------------------------------------------------------------


@cache
def _page_base(dialect: str, by_status: bool) -> Select[Any]:
    # `id` and `_created` are the keyset position (db/keyset.py); they leave each row
    # before it is shown.
    stmt = select(
        *DELIVERY.select_list(webhook_deliveries, FULL, dialect),
        _d.event_id.label("id"),
        _d.created_at.label("_created"),
    ).where(_d.workspace_id == bindparam("_ws"), _d.webhook_id == bindparam("_webhook"))
    if by_status:
        stmt = stmt.where(_d.status == bindparam("_status"))
    return stmt


async def list_page(
    conn: Connection,
    codec: TokenCodec,
    *,
    workspace_id: str,
    webhook_id: str,
    query: Mapping[str, str],
    token: str | None,
) -> tuple[list[Row], str | None]:
    """A page of the endpoint's deliveries, newest first (by when the delivery was first
    queued), and the next page's token. The filter and pageSize are read first (422, as
    every list), then the endpoint (404), then the token (400)."""
    filtering, size = read_filters(FILTERS, query, conn.dialect)
    await _require_webhook(conn, workspace_id, webhook_id)
    return await _page(conn, codec, workspace_id, webhook_id, filtering, token, size)


async def _page(
    conn: Connection,
    codec: TokenCodec,
    workspace_id: str,
    webhook_id: str,
    filtering: Filtering,
    token: str | None,
    size: int,
) -> tuple[list[Row], str | None]:
    rows, next_token = await list_with_token(
        conn,
        codec,
        _page_base(conn.dialect, bool(filtering.variants)),
        {"_ws": workspace_id, "_webhook": webhook_id, **filtering.params},
        scope=f"webhook-deliveries:{workspace_id}:{webhook_id}",
        digest=filtering.digest,
        token=token,
        size=size,
        created=_d.created_at,
        ident=_d.event_id,
        created_key="_created",
    )
    for row in rows:
        del row["id"], row["_created"]
    return rows, next_token


# --- queueing -----------------------------------------------------------------------------------


async def queue_test(conn: Connection, *, workspace_id: str, webhook_id: str) -> str:
    """A `webhook.test` event (never in the feed) and its one delivery, to this endpoint
    only; returns the event's id."""
    await conn.begin()
    await _require_webhook(conn, workspace_id, webhook_id)
    now = utcnow()
    event_id = await write_event(
        conn,
        workspace_id=workspace_id,
        type=WEBHOOK_TEST,
        record_id=None,  # no contact or opportunity: the endpoint is in `data`
        record_version=None,
        changed=[],
        data={"webhookId": webhook_id},
        now=now,
        in_feed=False,
    )
    await repo.insert_delivery(
        conn,
        {
            "workspace_id": workspace_id,
            "webhook_id": webhook_id,
            "event_id": event_id,
            "event_type": WEBHOOK_TEST,
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": now,
            "created_at": now,
        },
    )
    return event_id


_TEST_EVENT = select(_e.id).where(
    _e.workspace_id == bindparam("_ws"), _e.id == bindparam("_id"), _e.type == WEBHOOK_TEST
)


@cache
def _requeue(dialect: str, since: bool) -> Any:
    """INSERT … SELECT of the events to queue, each as a new pending delivery or, when the
    endpoint already has one, that one made pending again (attempts start over; the last
    answer stays on show until the next attempt replaces it)."""
    now = bindparam("_now", type_=UTCDateTime())
    source = select(
        _e.workspace_id,
        bindparam("_webhook", type_=String()).label("webhook_id"),
        _e.id,
        _e.type,
        literal("pending").label("status"),
        literal(0).label("attempts"),
        now.label("next_attempt_at"),
        now.label("created_at"),
    ).where(_e.workspace_id == bindparam("_ws"))
    if since:
        # The feed's events (webhook.test is never in it).
        source = source.where(
            _e.txid >= IN_FEED,
            _e.created_at >= bindparam("_since"),
            in_id_list(_e.type, "_types", dialect),
        )
    else:
        # Any event of the workspace, but a `webhook.test` event only to the endpoint it
        # was made for (D.1: "sent to that endpoint only"), which holds its delivery.
        own_test = exists(
            select(_d.event_id).where(
                _d.workspace_id == bindparam("_ws"),
                _d.webhook_id == bindparam("_webhook", type_=String()),
                _d.event_id == _e.id,
            )
        )
        source = source.where(
            _e.id == bindparam("_event"), or_(_e.type != literal(WEBHOOK_TEST), own_test)
        )
    columns = [
        "workspace_id",
        "webhook_id",
        "event_id",
        "event_type",
        "status",
        "attempts",
        "next_attempt_at",
        "created_at",
    ]
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    stmt = insert(webhook_deliveries).from_select(columns, source)
    return stmt.on_conflict_do_update(
        index_elements=[_d.workspace_id, _d.webhook_id, _d.event_id],
        set_={
            "status": "pending",
            "attempts": 0,
            "next_attempt_at": stmt.excluded.next_attempt_at,
            "last_error": null(),
        },
    ).returning(_d.event_id)


def replay_request(body: dict[str, Any]) -> tuple[str | None, datetime | None]:
    """(eventId, since) of a replay body: exactly one of them (400 for an unknown key,
    422 for a bad value, for none or for both)."""
    given = bodies.create_body(REPLAY, body)
    require_valid(given.errors)
    event_id, since = given.clean.get("eventId"), given.clean.get("since")
    if event_id is None and since is None:
        raise ValidationFailed(
            [FieldError("eventId", "is required (or since): name one event or a time to replay")]
        )
    if event_id is not None and since is not None:
        raise ValidationFailed([FieldError("since", "must not be given with eventId: give one")])
    return event_id, since


async def replay(
    conn: Connection, *, workspace_id: str, webhook_id: str, body: dict[str, Any]
) -> int:
    """Queue events again for this endpoint (also succeeded ones); returns how many.
    `eventId`: that event of the workspace, whatever its type (422 when there is none);
    `since`: the feed's events from that time on that the endpoint's eventTypes take."""
    event_id, since = replay_request(body)
    await conn.begin()
    patterns = await _require_webhook(conn, workspace_id, webhook_id)
    params: dict[str, Any] = {"_ws": workspace_id, "_webhook": webhook_id, "_now": utcnow()}
    if event_id is not None:
        rows = await conn.fetch(_requeue(conn.dialect, False), {**params, "_event": event_id})
        if not rows:
            test_of_another = await conn.fetchrow(
                _TEST_EVENT, {"_ws": workspace_id, "_id": event_id}
            )
            reason = (
                "is a webhook.test event of another webhook"
                if test_of_another is not None
                else "is not an event of this workspace"
            )
            raise ValidationFailed([FieldError("eventId", reason)])
        return len(rows)
    wanted = [t for t in RECORD_TYPES if matches(patterns, t)]
    params.update(_since=since, _types=id_list(wanted, conn.dialect))
    return len(await conn.fetch(_requeue(conn.dialect, True), params))
