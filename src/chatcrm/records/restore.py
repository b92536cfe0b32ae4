"""Restoring a soft-deleted record of any kind (contract E.2): the delete undone, under the
record's row lock, with its `*.restored` event in the same transaction."""

from __future__ import annotations

from typing import Any

from chatcrm.core.ids import is_id
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection
from chatcrm.db.errors import UniqueViolation
from chatcrm.records import statements
from chatcrm.records.conditional import check_if_match
from chatcrm.records.kind import RecordKind
from chatcrm.records.statements import View
from chatcrm.records.writing import get, record_event


async def restore(
    conn: Connection,
    kind: RecordKind,
    *,
    workspace_id: str,
    record_id: str,
    if_match: str | None,
) -> View:
    """The record as it was before its delete (a live or unknown id: the kind's 404). What
    the delete set is undone; a change like any other: the version moves, and so do the
    kind's touched columns (an opportunity's updatedDate)."""
    if not is_id(record_id):
        raise kind.not_found(record_id)
    await conn.begin()
    stored = await statements.lock_deleted(conn, kind, workspace_id, record_id)
    if stored is None:
        raise kind.not_found(record_id)
    check_if_match(if_match, stored["version"])
    await kind.before_restore(conn, workspace_id, stored)
    now = utcnow()
    columns: dict[str, Any] = {
        "deleted_at": None,
        "deleted_by": None,
        "modified_at": now,
        **dict.fromkeys(kind.touch, now),
        **kind.restored,
    }
    if kind.restore_to_column_end:
        # Its old place may be taken: the end of its column, computed while it is still
        # deleted (so it does not count itself).
        columns["order_in_cards"] = await statements.next_card_position(
            conn, kind, workspace_id, stored["stage_id"]
        )
        columns["order_in_cards_updated_at"] = now
    try:
        await statements.undelete(conn, kind, workspace_id, record_id, columns)
    except UniqueViolation:
        # A concurrent writer took its phone or email after the check: the kind's 409.
        await conn.recover()
        await kind.before_restore(conn, workspace_id, stored)
        raise
    view = await get(conn, kind, workspace_id, record_id, shape=kind.written_shape)
    await record_event(conn, kind, "restored", workspace_id, view, now=now)
    return view
