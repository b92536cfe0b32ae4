"""The names of the contacts an opportunities board shows (contract H: a card shows its
contact), read for all its cards in one statement rather than one request per card."""

from __future__ import annotations

from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, select

from chatcrm.contacts.table import contacts
from chatcrm.db.database import Connection
from chatcrm.db.idlist import id_list, in_id_list

c = contacts.c


@cache
def _statement(dialect: str) -> Select[Any]:
    return select(c.id, c.name, c.lastname).where(
        c.workspace_id == bindparam("_ws"),
        in_id_list(c.id, "_ids", dialect),
        c.deleted_at.is_(None),
    )


async def contact_names(conn: Connection, workspace_id: str, ids: list[str]) -> dict[str, str]:
    """id → full name (name and lastname) of the given contacts. A deleted contact has
    none: it leaves every read (contract B.3), though its opportunities keep its id."""
    if not ids:
        return {}
    rows = await conn.fetch(
        _statement(conn.dialect), {"_ws": workspace_id, "_ids": id_list(ids, conn.dialect)}
    )
    return {row["id"]: " ".join(filter(None, (row["name"], row["lastname"]))) for row in rows}
