"""What an import did: the four counts of its last line, and the rejects file, written as
the failures come."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from chatcrm.transfer.columns import ERROR_COLUMN
from chatcrm.transfer.problems import BadInput

STATUSES = ("created", "updated", "unchanged", "failed")


@dataclass
class Tally:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0

    def add(self, status: str) -> None:
        setattr(self, status, getattr(self, status) + 1)

    @property
    def done(self) -> int:
        return self.created + self.updated + self.unchanged + self.failed

    def line(self) -> str:
        return ", ".join(f"{status} {getattr(self, status)}" for status in STATUSES)


class Rejects:
    """Each failed row as it was read (its columns and values), plus an `error` column;
    the same delimiter as the file read, so it can be fixed and imported again."""

    def __init__(self, path: Path | None, header: list[str], delimiter: str) -> None:
        self.handle: TextIO | None = None
        if path is None:
            return
        try:
            self.handle = path.open("w", encoding="utf-8", newline="")
        except OSError as exc:
            raise BadInput(f"{path}: cannot write the rejects file: {exc.strerror}") from exc
        self.width = len(header)
        # A rejects file read back keeps a single error column.
        self.keep = [i for i, name in enumerate(header) if name.strip() != ERROR_COLUMN]
        self.writer: Any = csv.writer(self.handle, delimiter=delimiter)
        self.writer.writerow([header[i] for i in self.keep] + [ERROR_COLUMN])

    def write(self, cells: list[str], error: str) -> None:
        if self.handle is None:
            return
        padded = cells + [""] * (self.width - len(cells))
        kept = [padded[i] for i in self.keep] + padded[self.width :]
        self.writer.writerow([*kept, error])

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


def api_errors_text(errors: list[dict[str, Any]] | None, message: str = "") -> str:
    """The API's field errors as one readable cell: `email: must be …; phone: …`."""
    parts = []
    for error in errors or []:
        field = error.get("field") or ""
        text = error.get("message") or ""
        parts.append(f"{field}: {text}" if field else text)
    return "; ".join(parts) or message or "failed"
