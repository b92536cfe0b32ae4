"""Contact statements beyond the shared ones (records/statements.py): the owner of a phone
or an email, and the activity log."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, bindparam, insert, select

from chatcrm.contacts.table import contacts
from chatcrm.db.database import Connection
from chatcrm.db.schema import contact_activities

c = contacts.c


def _find_live(column: Any) -> tuple[Select[Any], Select[Any]]:
    """(by value, by value excluding one contact): the owner of a unique phone or email."""
    base = (
        select(c.id)
        .where(
            c.workspace_id == bindparam("_ws"),
            column == bindparam("_value"),
            c.deleted_at.is_(None),
        )
        .limit(1)
    )
    return base, base.where(c.id != bindparam("_exclude"))


_BY_PHONE = _find_live(c.internal_whatsapp_number)
_BY_EMAIL_KEY = _find_live(c.email_key)
_BY_SENDER_PHONE = _find_live(c.platform_sender_phone)


async def _owner(
    conn: Connection,
    statements: tuple[Select[Any], Select[Any]],
    workspace_id: str,
    value: str,
    exclude: str | None,
) -> str | None:
    params = {"_ws": workspace_id, "_value": value}
    if exclude is None:
        return await conn.fetchval(statements[0], params)
    params["_exclude"] = exclude
    return await conn.fetchval(statements[1], params)


async def find_live_by_phone(
    conn: Connection, workspace_id: str, phone: str, *, exclude: str | None = None
) -> str | None:
    return await _owner(conn, _BY_PHONE, workspace_id, phone, exclude)


async def find_live_by_sender_phone(conn: Connection, workspace_id: str, phone: str) -> str | None:
    """The live contact whose platformSenderPhone is this number (not unique: the first)."""
    return await _owner(conn, _BY_SENDER_PHONE, workspace_id, phone, None)


async def find_live_by_email_key(
    conn: Connection, workspace_id: str, email_key: str, *, exclude: str | None = None
) -> str | None:
    return await _owner(conn, _BY_EMAIL_KEY, workspace_id, email_key, exclude)


_INSERT_ACTIVITY = insert(contact_activities)


async def insert_activity(conn: Connection, values: dict[str, Any]) -> None:
    await conn.execute(_INSERT_ACTIVITY, values)
