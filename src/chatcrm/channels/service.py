"""Channels of a workspace (contract K.2): create, read, update, delete.

The order of the checks is the contract's (docs/api.md 1.9): body structure (400), values
(422, all collected, the API address among them), the channel (404), then the write (409
for a phoneNumberId another channel holds). The secrets are written and never read back
into an answer: the record is built from the columns a shape shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chatcrm.channels import repository as repo
from chatcrm.channels.errors import ChannelNotFound, DuplicateChannel
from chatcrm.channels.fields import CHANNEL, SHAPE
from chatcrm.core.errors import FieldError, require_valid
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db.database import Connection
from chatcrm.db.errors import UniqueViolation
from chatcrm.records import bodies
from chatcrm.records.bodies import Given
from chatcrm.records.defaults import Creation
from chatcrm.records.writing import fill
from chatcrm.webhooks import addresses

RECEIVING_PATH = "/channels/whatsapp/{channelId}"


def webhook_url(base_url: str, channel_id: str) -> str:
    """Where Meta sends the channel's messages: `{CHATCRM_PUBLIC_URL}/channels/whatsapp/{id}`."""
    return base_url + RECEIVING_PATH.format(channelId=channel_id)


def record(row: Mapping[str, Any], base_url: str) -> dict[str, Any]:
    """The channel record, keys in contract order; never the access token or app secret."""
    out: dict[str, Any] = {}
    for f in CHANNEL.shape(SHAPE):
        value = row[f.column] if f.column else None
        out[f.wire] = iso(value) if f.wire in ("createdAt", "updatedAt") else value
        if f.wire == "verifyToken":
            out["webhookUrl"] = webhook_url(base_url, row["id"])
    return out


async def _check_address(given: Given, *, allow_private: bool) -> None:
    url = given.clean.get("apiBaseUrl")
    if url is None:
        return
    reason = await addresses.refused_reason(url, allow_private=allow_private)
    if reason is not None:
        message = f"must not point to a {addresses.REFUSED_KINDS} address: {reason}"
        given.errors.append(FieldError(given.key("apiBaseUrl"), message))


async def create(
    conn: Connection,
    *,
    workspace_id: str,
    body: dict[str, Any],
    allow_private: bool,
    base_url: str,
) -> dict[str, Any]:
    given = bodies.create_body(CHANNEL, body)
    await _check_address(given, allow_private=allow_private)
    require_valid(given.errors)
    await conn.begin()
    creation = Creation(conn, workspace_id, new_id(), "", utcnow(), {})
    await fill(CHANNEL, given, creation)
    row: dict[str, Any] = {"workspace_id": workspace_id}
    for f in CHANNEL:
        row.update(f.store(creation.values[f.wire]))
    if await repo.holder_of(conn, row["phone_number_id"]) is not None:
        raise DuplicateChannel(row["phone_number_id"])
    try:
        await repo.insert_channel(conn, row)
    except UniqueViolation:  # a create of the same number raced this one and won
        await conn.recover()
        raise DuplicateChannel(row["phone_number_id"]) from None
    return record(row, base_url)


async def get(
    conn: Connection, *, workspace_id: str, channel_id: str, base_url: str
) -> dict[str, Any]:
    if not is_id(channel_id):
        raise ChannelNotFound(channel_id)
    row = await repo.get(conn, workspace_id, channel_id)
    if row is None:
        raise ChannelNotFound(channel_id)
    return record(row, base_url)


async def list_all(conn: Connection, *, workspace_id: str, base_url: str) -> list[dict[str, Any]]:
    return [record(row, base_url) for row in await repo.list_all(conn, workspace_id)]


async def update(
    conn: Connection,
    *,
    workspace_id: str,
    channel_id: str,
    body: dict[str, Any],
    allow_private: bool,
    base_url: str,
) -> tuple[dict[str, Any], list[str]]:
    """The `paramToUpdate` body of A.1; returns the record and the fields named (for the
    audit entry, which names fields, never values)."""
    names = bodies.update_names(
        CHANNEL, body, record_id=channel_id, id_source="the channel id of the path", implicit=True
    )
    given = bodies.update_values(CHANNEL, names, body)
    await _check_address(given, allow_private=allow_private)
    require_valid(given.errors)
    if not is_id(channel_id):
        raise ChannelNotFound(channel_id)
    columns: dict[str, Any] = {}
    for wire, value in given.clean.items():
        columns.update(CHANNEL[wire].store(value))
    columns["updated_at"] = utcnow()
    await conn.begin()
    if not await repo.update_channel(conn, workspace_id, channel_id, columns):
        raise ChannelNotFound(channel_id)
    channel = await get(conn, workspace_id=workspace_id, channel_id=channel_id, base_url=base_url)
    return channel, list(given.clean)


async def delete(conn: Connection, *, workspace_id: str, channel_id: str) -> None:
    if not is_id(channel_id):
        raise ChannelNotFound(channel_id)
    await conn.begin()
    if not await repo.delete_channel(conn, workspace_id, channel_id):
        raise ChannelNotFound(channel_id)
