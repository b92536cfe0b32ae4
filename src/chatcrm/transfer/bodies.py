"""A data row → the body of a create (or upsert) of its record, the names it holds
resolved against the workspace. Every bad cell of the row is reported, not only the
first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from chatcrm.transfer.cells import (
    CellError,
    read_activities,
    read_cell,
    read_variable,
    sendable,
    split_list,
    unguarded,
)
from chatcrm.transfer.columns import Column, Role
from chatcrm.transfer.csv_source import Row
from chatcrm.transfer.names import Lookup, TagMaker, WorkspaceNames
from chatcrm.transfer.problems import RowError

# A contact id, phone or email → the contact's id (opportunities' `contact` column).
ContactFinder = Callable[[str], str]


class BodyBuilder:
    def __init__(
        self,
        columns: list[Column | None],
        names: WorkspaceNames,
        *,
        stages: Lookup,
        tag_maker: TagMaker | None = None,
        dry_run: bool = False,
        find_contact: ContactFinder | None = None,
    ) -> None:
        self.columns = columns
        self.names = names
        self.stages = stages
        self.tag_maker = tag_maker
        self.dry_run = dry_run
        self.find_contact = find_contact

    def body(self, row: Row) -> dict[str, Any]:
        """The row's body: only the columns whose cell is not empty. Raises RowError."""
        if len(row.cells) > len(self.columns):
            extra = row.cells[len(self.columns) :]
            if any(cell.strip() for cell in extra):
                # Counted to its last cell that is not empty: the empty ones do not count.
                count = max(i for i, cell in enumerate(row.cells, 1) if cell.strip())
                raise RowError([("", f"the row has {count} cells, the header {len(self.columns)}")])
        body: dict[str, Any] = {}
        errors: list[tuple[str, str]] = []
        for column, cell in zip(self.columns, row.cells, strict=False):
            if column is None or not cell.strip():
                continue
            text = unguarded(cell)  # a formula's start export put behind a `'`
            try:
                # Before any lookup, so that no call carries it; a JSON cell's value is
                # checked again once read (`\u0000` is a NUL too).
                sendable(text)
                self._fill(body, column, text)
            except CellError as exc:
                label = f"var:{column.name}" if column.role is Role.VARIABLE else column.name
                errors.append((label, str(exc)))
        if errors:
            raise RowError(errors)
        return body

    def _fill(self, body: dict[str, Any], column: Column, text: str) -> None:
        role = column.role
        if role is Role.FIELD:
            body[column.wire] = sendable(read_cell(column.field, text))
        elif role is Role.STAGE:
            body[column.wire] = self.stages.resolve(text)
        elif role is Role.AGENT:
            body[column.wire] = self.names.agents.resolve(text)
        elif role is Role.SEGMENTATION:
            body[column.wire] = self.names.segmentations.resolve(text)
        elif role is Role.TAGS:
            body[column.wire] = self.names.tag_ids(
                split_list(text), maker=self.tag_maker, dry_run=self.dry_run
            )
        elif role is Role.VARIABLE:
            value = sendable(read_variable(text))
            body.setdefault("variables", []).append({"name": column.name, "value": value})
        elif role is Role.CONTACT:
            assert self.find_contact is not None
            body[column.wire] = self.find_contact(text.strip())
        elif role is Role.ACTIVITIES:
            body[column.wire] = sendable(read_activities(text))
