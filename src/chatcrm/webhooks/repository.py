"""Webhooks in the database: every statement filters on the workspace by equality first.

Endpoints are read already in wire form (the field table's SELECT list), keys in contract
order, so an answer is the row as it comes.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, delete, func, insert, select, update

from chatcrm.db.database import Connection, Row
from chatcrm.db.schema import webhook_deliveries, webhooks, workspaces
from chatcrm.webhooks.fields import WEBHOOK

_w = webhooks.c
_d = webhook_deliveries.c
_ONE = (_w.workspace_id == bindparam("_ws"), _w.id == bindparam("_id"))

_INSERT = insert(webhooks)
_UPDATE = update(webhooks).where(*_ONE)
_COUNT = select(func.count()).select_from(webhooks).where(_w.workspace_id == bindparam("_ws"))
# FOR KEY SHARE (PostgreSQL): the endpoint cannot be deleted until the deliveries queued
# for it are written. SQLite ignores row locks: its write transaction is exclusive.
_EVENT_TYPES = select(_w.event_types).where(*_ONE).with_for_update(read=True, key_share=True)
# FOR UPDATE: a delivery queued meanwhile waits, then finds the endpoint gone (instead of
# this delete failing on the foreign key of a delivery it did not see).
_LOCK = select(_w.id).where(*_ONE).with_for_update()
# FOR NO KEY UPDATE of the workspace row: creates in one workspace take turns, so two at
# once cannot both see 19 endpoints and make 21; records inserted meanwhile (whose foreign
# key takes FOR KEY SHARE of that row) are not held up.
_LOCK_WORKSPACE = (
    select(workspaces.c.id)
    .where(workspaces.c.id == bindparam("_ws"))
    .with_for_update(key_share=True)
)
# The old secret keeps signing until it expires (contract D.4: two signatures for 24 h).
# SET reads the row as it was, so `previous_secret = secret` takes the outgoing one.
_ROTATE = (
    update(webhooks)
    .where(*_ONE)
    .values(
        previous_secret=_w.secret,
        previous_secret_expires_at=bindparam("_expires"),
        secret=bindparam("_secret"),
        updated_at=bindparam("_now"),
    )
)
_DELETE_DELIVERIES = delete(webhook_deliveries).where(
    _d.workspace_id == bindparam("_ws"), _d.webhook_id == bindparam("_id")
)
_DELETE = delete(webhooks).where(*_ONE)
_INSERT_DELIVERY = insert(webhook_deliveries)


@cache
def _view(shape: str, dialect: str) -> Select[Any]:
    return select(*WEBHOOK.select_list(webhooks, shape, dialect))


@cache
def _one(shape: str, dialect: str) -> Select[Any]:
    return _view(shape, dialect).where(*_ONE)


@cache
def _all(shape: str, dialect: str) -> Select[Any]:
    # Oldest first: the order endpoints were added in (ix_webhooks_list).
    return (
        _view(shape, dialect)
        .where(_w.workspace_id == bindparam("_ws"))
        .order_by(_w.created_at, _w.id)
    )


async def get(conn: Connection, workspace_id: str, webhook_id: str, shape: str) -> Row | None:
    return await conn.fetchrow(_one(shape, conn.dialect), {"_ws": workspace_id, "_id": webhook_id})


async def list_all(conn: Connection, workspace_id: str, shape: str) -> list[Row]:
    return await conn.fetch(_all(shape, conn.dialect), {"_ws": workspace_id})


async def event_types(conn: Connection, workspace_id: str, webhook_id: str) -> str | None:
    """The endpoint's subscription as stored (JSON text), or None when there is no such
    endpoint in the workspace. In a transaction, the endpoint stays until it ends."""
    value = await conn.fetchval(_EVENT_TYPES, {"_ws": workspace_id, "_id": webhook_id})
    return None if value is None else str(value)


async def count_locked(conn: Connection, workspace_id: str) -> int:
    """The workspace's endpoints, with the workspace locked until the transaction ends."""
    await conn.fetchval(_LOCK_WORKSPACE, {"_ws": workspace_id})
    return int(await conn.fetchval(_COUNT, {"_ws": workspace_id}))


async def insert_webhook(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(_INSERT, values)


async def update_webhook(
    conn: Connection, workspace_id: str, webhook_id: str, columns: dict[str, Any]
) -> bool:
    """Write `columns` (their keys name them); False when there is no such endpoint."""
    changed = await conn.execute(_UPDATE, {"_ws": workspace_id, "_id": webhook_id, **columns})
    return changed > 0


async def rotate_secret(
    conn: Connection,
    workspace_id: str,
    webhook_id: str,
    *,
    secret: str,
    expires: datetime,
    now: datetime,
) -> bool:
    params = {"_ws": workspace_id, "_id": webhook_id, "_secret": secret}
    changed = await conn.execute(_ROTATE, {**params, "_expires": expires, "_now": now})
    return changed > 0


async def delete_webhook(conn: Connection, workspace_id: str, webhook_id: str) -> bool:
    """The endpoint and its delivery log (pending deliveries are dropped with it)."""
    params = {"_ws": workspace_id, "_id": webhook_id}
    if await conn.fetchrow(_LOCK, params) is None:
        return False
    await conn.execute(_DELETE_DELIVERIES, params)
    return await conn.execute(_DELETE, params) > 0


async def insert_delivery(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(_INSERT_DELIVERY, values)
