"""Phones written as bare digits are read in the workspace's `defaultCountry` (contract N):
the request looks the setting up before its body or query is read, and only when it
holds such a phone (a number written with '+', 00 or 011 never needs it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from sqlalchemy import bindparam, select

from chatcrm.core import phone
from chatcrm.db.database import Connection
from chatcrm.db.schema import workspaces
from chatcrm.records.fields import FieldTable
from chatcrm.records.scalar_types import Phone

_DEFAULT_COUNTRY = select(workspaces.c.default_country).where(workspaces.c.id == bindparam("_ws"))


@cache
def phone_keys(table: FieldTable) -> tuple[str, ...]:
    """The body keys (wire names and aliases) of a table's phone fields."""
    return tuple(key for f in table if isinstance(f.type, Phone) for key in (f.wire, *f.aliases))


async def read_in_workspace(conn: Connection, workspace_id: str, texts: Iterable[Any]) -> None:
    """Phones cleaned from now on in this request are read in the workspace's country,
    if any of `texts` needs it (else no statement is sent)."""
    country = None
    if any(isinstance(t, str) and phone.needs_country(t) for t in texts):
        country = await conn.fetchval(_DEFAULT_COUNTRY, {"_ws": workspace_id})
    phone.use_country(country)


async def read_body_in_workspace(
    conn: Connection, workspace_id: str, table: FieldTable, body: Mapping[str, Any]
) -> None:
    """`read_in_workspace` for the phone fields of a body of `table`."""
    await read_in_workspace(conn, workspace_id, (body.get(k) for k in phone_keys(table)))
