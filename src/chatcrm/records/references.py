"""Checks that ids named in a body are records of the same workspace (422 otherwise)."""

from __future__ import annotations

from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.ids import is_id
from chatcrm.db.database import Connection
from chatcrm.workspaces import repository as repo


class References:
    """Collects every bad reference of one request, then raises them together."""

    def __init__(self, conn: Connection, workspace_id: str) -> None:
        self.conn = conn
        self.workspace_id = workspace_id
        self.errors: list[FieldError] = []

    async def stage(self, field: str, stage_id: str, kind: str) -> None:
        found = (
            await repo.stage_kind(self.conn, self.workspace_id, stage_id)
            if is_id(stage_id)
            else None
        )
        if found != kind:
            article = "an" if kind[0] in "aeiou" else "a"
            self.errors.append(
                FieldError(field, f"is not {article} {kind} stage of this workspace")
            )

    async def agent(self, field: str, agent_id: str | None) -> None:
        if agent_id is None:
            return
        if not (
            is_id(agent_id) and await repo.agent_exists(self.conn, self.workspace_id, agent_id)
        ):
            self.errors.append(FieldError(field, "is not an agent of this workspace"))

    async def segmentation(self, field: str, segmentation_id: str | None) -> None:
        if segmentation_id is None:
            return
        if not (
            is_id(segmentation_id)
            and await repo.segmentation_exists(self.conn, self.workspace_id, segmentation_id)
        ):
            self.errors.append(FieldError(field, "is not a segmentation of this workspace"))

    async def tags(self, field: str, tag_ids: list[str]) -> None:
        found = await repo.existing_tags(
            self.conn, self.workspace_id, [t for t in tag_ids if is_id(t)]
        )
        for i, tag_id in enumerate(tag_ids):
            if tag_id not in found:
                self.errors.append(FieldError(f"{field}[{i}]", "is not a tag of this workspace"))

    def check(self) -> None:
        if self.errors:
            raise ValidationFailed(self.errors)
