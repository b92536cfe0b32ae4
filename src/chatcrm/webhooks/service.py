"""Webhook endpoints: create, read, update, delete, rotate the secret (contract D.4).

The order of the checks is the contract's (docs/api.md 1.9): body structure (400), values
(422, all collected, the receiver's address among them), the endpoint (404), then the
write. The address check may wait up to two seconds for the resolver: it is made before
the transaction begins, so no lock is held meanwhile.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from chatcrm.core.errors import FieldError, require_valid
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection
from chatcrm.events.feed import end_place
from chatcrm.events.publisher import queue_before_disabling
from chatcrm.records import bodies
from chatcrm.records.bodies import Given
from chatcrm.records.changes import Change
from chatcrm.records.defaults import Creation
from chatcrm.records.writing import fill
from chatcrm.webhooks import addresses
from chatcrm.webhooks import repository as repo
from chatcrm.webhooks.errors import TooManyWebhooks, WebhookNotFound
from chatcrm.webhooks.fields import LISTED, WEBHOOK, WHOLE
from chatcrm.webhooks.signing_secret import new_secret

# Endpoints a workspace may have (contract D.4). The 21st create is a 422: see
# TooManyWebhooks.
MAX_PER_WORKSPACE = 20
# How long the outgoing secret still signs after a rotation (contract D.4).
PREVIOUS_SECRET_LIFETIME = timedelta(hours=24)


async def _check_address(given: Given, order: list[str], *, allow_private: bool) -> None:
    """A valid URL whose host is, or resolves to, an address a webhook may not reach is
    one more invalid value of the body (addresses.py), named in its place among the
    others (`order`: the keys in the order the errors follow)."""
    url = given.clean.get("url")
    if url is None:
        return
    reason = await addresses.refused_reason(url, allow_private=allow_private)
    if reason is None:
        return
    key = given.key("url")
    message = f"must not point to a {addresses.REFUSED_KINDS} address: {reason}"
    place = order.index(key) if key in order else -1
    later = (i for i, e in enumerate(given.errors) if e.field in order[place + 1 :])
    given.errors.insert(next(later, len(given.errors)), FieldError(key, message))


async def create(
    conn: Connection, *, workspace_id: str, body: dict[str, Any], allow_private: bool
) -> dict[str, Any]:
    """A new endpoint of the workspace, enabled, with a new secret; its whole record."""
    given = bodies.create_body(WEBHOOK, body)
    await _check_address(given, list(body), allow_private=allow_private)
    require_valid(given.errors)
    await conn.begin()
    if await repo.count_locked(conn, workspace_id) >= MAX_PER_WORKSPACE:
        raise TooManyWebhooks(MAX_PER_WORKSPACE)
    now = utcnow()
    creation = Creation(conn, workspace_id, new_id(), "", now, {})
    await fill(WEBHOOK, given, creation)
    row: dict[str, Any] = {"workspace_id": workspace_id, "consecutive_failures": 0}
    for f in WEBHOOK:
        row.update(f.store(creation.values[f.wire]))
    row.update(await _feed_end(conn, workspace_id))
    await repo.insert_webhook(conn, row)
    return await get(conn, workspace_id=workspace_id, webhook_id=creation.record_id)


async def _feed_end(conn: Connection, workspace_id: str) -> dict[str, int]:
    """An endpoint created or enabled now gets the events committed from now on: its
    deliveries are queued from the feed's end (events/publisher.py)."""
    txid, seq = await end_place(conn, workspace_id)
    return {"feed_txid": txid, "feed_seq": seq}


async def get(conn: Connection, *, workspace_id: str, webhook_id: str) -> dict[str, Any]:
    """The whole record (secret included); 404 for an id of no endpoint here."""
    if not is_id(webhook_id):
        raise WebhookNotFound(webhook_id)
    row = await repo.get(conn, workspace_id, webhook_id, WHOLE)
    if row is None:
        raise WebhookNotFound(webhook_id)
    return row


async def list_all(conn: Connection, workspace_id: str) -> list[dict[str, Any]]:
    """Every endpoint of the workspace (at most 20, so no pages), oldest first, without
    their secrets."""
    return await repo.list_all(conn, workspace_id, LISTED)


async def update(
    conn: Connection,
    *,
    workspace_id: str,
    webhook_id: str,
    body: dict[str, Any],
    allow_private: bool,
) -> dict[str, Any]:
    """The `paramToUpdate` body of contract A.1 (or E.1's form, without it, as every
    update takes) over url, eventTypes, description and enabled; every change moves
    updatedAt."""
    names = bodies.update_names(
        WEBHOOK, body, record_id=webhook_id, id_source="the webhook id of the path", implicit=True
    )
    given = bodies.update_values(WEBHOOK, names, body)
    await _check_address(given, names, allow_private=allow_private)
    require_valid(given.errors)
    if not is_id(webhook_id):
        raise WebhookNotFound(webhook_id)
    now = utcnow()
    change = Change(
        conn=conn,
        kind=None,
        workspace_id=workspace_id,
        record_id=webhook_id,
        clean=given.clean,
        now=now,
        current=None,
    )
    for wire, value in given.clean.items():
        change.columns.update(WEBHOOK[wire].store(value))
    for wire in given.clean:
        effect = WEBHOOK[wire].effect
        if effect is not None:
            await effect.apply(change)
    change.columns["updated_at"] = now
    await conn.begin()
    if given.clean.get("enabled") is True:
        current = await repo.get(conn, workspace_id, webhook_id, LISTED)
        if current is not None and not current["enabled"]:
            change.columns.update(await _feed_end(conn, workspace_id))
    elif given.clean.get("enabled") is False:
        await queue_before_disabling(conn, workspace_id, webhook_id)
    if not await repo.update_webhook(conn, workspace_id, webhook_id, change.columns):
        raise WebhookNotFound(webhook_id)
    return await get(conn, workspace_id=workspace_id, webhook_id=webhook_id)


async def delete(conn: Connection, *, workspace_id: str, webhook_id: str) -> None:
    """The endpoint goes, and with it its deliveries: pending ones are never sent."""
    if not is_id(webhook_id):
        raise WebhookNotFound(webhook_id)
    await conn.begin()
    if not await repo.delete_webhook(conn, workspace_id, webhook_id):
        raise WebhookNotFound(webhook_id)


async def rotate_secret(conn: Connection, *, workspace_id: str, webhook_id: str) -> dict[str, Any]:
    """A new secret; the outgoing one still signs (a second signature) for 24 hours, so
    receivers can switch without missing a delivery."""
    if not is_id(webhook_id):
        raise WebhookNotFound(webhook_id)
    now = utcnow()
    await conn.begin()
    rotated = await repo.rotate_secret(
        conn,
        workspace_id,
        webhook_id,
        secret=new_secret(),
        expires=now + PREVIOUS_SECRET_LIFETIME,
        now=now,
    )
    if not rotated:
        raise WebhookNotFound(webhook_id)
    return await get(conn, workspace_id=workspace_id, webhook_id=webhook_id)
