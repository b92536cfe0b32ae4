"""Checks that the ids a body names are records of the same workspace (422 otherwise).

Every bad reference of a request is collected, then raised together. The error names the
body key the client used (an alias included).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from sqlalchemy import Select, bindparam, select
from sqlalchemy.sql.elements import BindParameter

from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.ids import is_id
from chatcrm.db.database import Connection
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import agents, segmentations, stages, tags
from chatcrm.records import visibility

_WS: BindParameter[str] = bindparam("_ws")
_ID: BindParameter[str] = bindparam("_id")
_STAGE_KIND = select(stages.c.kind).where(stages.c.workspace_id == _WS, stages.c.id == _ID)
_AGENT = select(agents.c.id).where(agents.c.workspace_id == _WS, agents.c.id == _ID)
_SEGMENTATION = select(segmentations.c.id).where(
    segmentations.c.workspace_id == _WS, segmentations.c.id == _ID
)


@cache
def _tags_statement(dialect: str) -> Select[Any]:
    return select(tags.c.id).where(
        tags.c.workspace_id == _WS, in_id_list(tags.c.id, "_ids", dialect)
    )


@cache
def _live_record_statement(table: Any, for_write: bool) -> Select[Any]:
    c = table.c
    statement = select(c.id).where(c.workspace_id == _WS, c.id == _ID, c.deleted_at.is_(None))
    # A write that will point at the record (an opportunity's contact, an activity) keeps
    # it from being deleted or merged away until it commits, and one that waited for a
    # merge finds the record gone: never a link to a contact deleted meanwhile.
    return statement.with_for_update(read=True) if for_write else statement


async def live_record_exists(
    conn: Connection, table: Any, workspace_id: str, record_id: str, *, for_write: bool = False
) -> bool:
    """A record of the table (contacts, opportunities) that is not deleted (`for_write`:
    and stays so until the transaction ends)."""
    if not is_id(record_id):
        return False
    row = await conn.fetchrow(
        _live_record_statement(table, for_write), {"_ws": workspace_id, "_id": record_id}
    )
    return row is not None


def not_in_workspace(target: str, *, stage_kind: str) -> str:
    """The message of a reference to nothing of the workspace: "is not an agent of this
    workspace", "is not a contact stage of this workspace"."""
    what = f"{stage_kind} stage" if target == "stage" else target
    article = "an" if what[0] in "aeiou" else "a"
    return f"is not {article} {what} of this workspace"


class References:
    """The reference checks of one request. `records`: the record tables a field may name
    by id (an opportunity's contact)."""

    def __init__(
        self, conn: Connection, workspace_id: str, *, records: Mapping[str, Any] | None = None
    ) -> None:
        self.conn = conn
        self.workspace_id = workspace_id
        self.records = records or {}
        self.errors: list[FieldError] = []

    async def check(self, target: str, key: str, value: Any, *, stage_kind: str) -> None:
        """Check one field's value; `key` is the body key it came under."""
        if value is None:
            return
        if target == "stage":
            await self.stage(key, value, stage_kind)
        elif target == "tag":
            await self.tags(key, value)
        elif target in self.records:
            table = self.records[target]
            if not (
                await live_record_exists(self.conn, table, self.workspace_id, value, for_write=True)
                and await visibility.sees_contact(self.conn, table, self.workspace_id, value)
            ):
                self.errors.append(FieldError(key, not_in_workspace(target, stage_kind="")))
        else:
            statement = _AGENT if target == "agent" else _SEGMENTATION
            if not (is_id(value) and await self._exists(statement, value)):
                self.errors.append(FieldError(key, not_in_workspace(target, stage_kind="")))

    async def _exists(self, statement: Select[Any], record_id: str) -> bool:
        row = await self.conn.fetchrow(statement, {"_ws": self.workspace_id, "_id": record_id})
        return row is not None

    async def stage(self, key: str, stage_id: str, kind: str) -> None:
        found = None
        if is_id(stage_id):
            found = await self.conn.fetchval(
                _STAGE_KIND, {"_ws": self.workspace_id, "_id": stage_id}
            )
        if found != kind:
            self.errors.append(FieldError(key, not_in_workspace("stage", stage_kind=kind)))

    async def tags(self, key: str, tag_ids: list[str]) -> None:
        wanted = [t for t in tag_ids if is_id(t)]
        found: set[str] = set()
        if wanted:
            rows = await self.conn.fetch(
                _tags_statement(self.conn.dialect),
                {"_ws": self.workspace_id, "_ids": id_list(wanted, self.conn.dialect)},
            )
            found = {row["id"] for row in rows}
        for i, tag_id in enumerate(tag_ids):
            if tag_id not in found:
                message = not_in_workspace("tag", stage_kind="")
                self.errors.append(FieldError(f"{key}[{i}]", message))

    def raise_errors(self) -> None:
        if self.errors:
            raise ValidationFailed(self.errors)
