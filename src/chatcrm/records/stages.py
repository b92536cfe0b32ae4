"""Stages and card positions, the same for contacts and opportunities (contract B.1, B.2).

A new record goes to its workspace's first stage of its kind unless one is named. Card
positions (`orderInCards`) start at 0 in each stage column; a new or moved card takes
max + 1 of its new column (0 in an empty one); other cards are not renumbered.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import bindparam, select

from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.db.database import Connection
from chatcrm.db.schema import stages
from chatcrm.records import statements
from chatcrm.records.changes import Change, Effect
from chatcrm.records.defaults import Creation, Default

_FIRST_STAGE = (
    select(stages.c.id)
    .where(stages.c.workspace_id == bindparam("_ws"), stages.c.kind == bindparam("_kind"))
    .order_by(stages.c.position, stages.c.id)
    .limit(1)
)


async def first_stage(conn: Connection, workspace_id: str, kind: str) -> str | None:
    value: str | None = await conn.fetchval(_FIRST_STAGE, {"_ws": workspace_id, "_kind": kind})
    return value


def no_stage(kind: str) -> ValidationFailed:
    """A record created in a workspace without a stage of its kind."""
    return ValidationFailed(
        [FieldError("stageId", f"the workspace has no {kind} stage; create one")]
    )


class _FirstStage(Default):
    """The workspace's first stage of the record's kind (422 when it has none)."""

    async def value(self, creation: Creation) -> Any:
        kind = creation.kind.name
        stage_id = await first_stage(creation.conn, creation.workspace_id, kind)
        if stage_id is None:
            raise no_stage(kind)
        return stage_id


class _EndOfColumn(Default):
    """The end of the new record's stage column."""

    # Last: after the stage is known, and after an opportunity's code, whose counter row
    # lock queues concurrent creates of a workspace, so their cards take distinct positions.
    order = 3

    async def value(self, creation: Creation) -> Any:
        return await statements.next_card_position(
            creation.conn, creation.kind, creation.workspace_id, creation.values["stageId"]
        )


class _StageMove(Effect):
    """Moved to another stage: the card goes to the end of its new column (unless a
    position is named with the move) and its position's date is now."""

    sets = ("orderInCards", "orderInCardsLastUpdated")

    async def apply(self, change: Change) -> None:
        assert change.current is not None
        stage_id = change.clean["stageId"]
        if stage_id == change.current["stage_id"] or "orderInCards" in change.clean:
            return
        change.columns["order_in_cards"] = await statements.next_card_position(
            change.conn, change.kind, change.workspace_id, stage_id
        )
        change.columns["order_in_cards_updated_at"] = change.now


FIRST_STAGE = _FirstStage()
END_OF_COLUMN = _EndOfColumn()
STAGE_MOVE = _StageMove()
