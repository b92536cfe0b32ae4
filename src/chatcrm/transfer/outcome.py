"""What an import did: the four counts of its last line, and the rejects file, written as
the failures come."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from chatcrm.transfer.columns import ERROR_COLUMN, IGNORED_COLUMNS, named_width
from chatcrm.transfer.csv_source import Row
from chatcrm.transfer.problems import BadInput

STATUSES = ("created", "updated", "unchanged", "failed")
# How many failed rows are shown on stderr (the rejects file has them all).
SHOWN_FAILURES = 5


@dataclass
class Tally:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0
    # The first failed rows: (line in the file, why), shown on stderr.
    first_failures: list[tuple[int, str]] = field(default_factory=list)
    # Sentences to warn about on stderr (rows matching the same contact).
    warnings: list[str] = field(default_factory=list)

    def add(self, status: str) -> None:
        setattr(self, status, getattr(self, status) + 1)

    @property
    def done(self) -> int:
        return self.created + self.updated + self.unchanged + self.failed

    def line(self) -> str:
        return ", ".join(f"{status} {getattr(self, status)}" for status in STATUSES)


class Rejects:
    """Each failed row as it was read (its columns and values) plus an `error` column
    (contract G), which begins with where the row starts in the file read (`line 3: …`);
    the same delimiter as the file read, so it can be fixed and imported again: the
    columns import reads, so neither the nameless columns at the header's end nor an
    earlier rejects file's error column. Also keeps the first failures for stderr, with
    or without a file."""

    def __init__(
        self, path: Path | None, header: list[str], delimiter: str, *, bom: bool = False
    ) -> None:
        self.handle: TextIO | None = None
        self.first: list[tuple[int, str]] = []
        if path is None:
            return
        try:
            # utf-8-sig writes the byte-order mark Excel needs to read accents.
            encoding = "utf-8-sig" if bom else "utf-8"
            self.handle = path.open("w", encoding=encoding, newline="")
        except OSError as exc:
            raise BadInput(f"{path}: cannot write the rejects file: {exc.strerror}") from exc
        # Past the named columns, cells are a row's extra ones (columns.named_width).
        self.width = named_width(header)
        # A rejects file read back keeps a single error column (and drops the line column
        # that earlier versions wrote first).
        self.keep = [
            i
            for i, name in enumerate(header[: self.width])
            if name.strip().casefold() not in IGNORED_COLUMNS
        ]
        self.writer: Any = csv.writer(self.handle, delimiter=delimiter)
        self.writer.writerow([header[i] for i in self.keep] + [ERROR_COLUMN])

    def write(self, row: Row, error: str) -> None:
        if len(self.first) < SHOWN_FAILURES:
            self.first.append((row.line, error))
        if self.handle is None:
            return
        cells = row.cells
        padded = cells + [""] * (self.width - len(cells))
        kept = [padded[i] for i in self.keep]
        # The error under its own heading; cells beyond the named columns, when one holds
        # something (why such a row failed), after it, kept as they were. Empty ones, as
        # under a spreadsheet's trailing nameless columns, are not written.
        extra = padded[self.width :]
        if not any(cell.strip() for cell in extra):
            extra = []
        self.writer.writerow([*kept, f"line {row.line}: {error}", *extra])

    def close(self) -> None:
        if self.handle is not None:
            self.handle.close()


def api_errors_text(
    errors: list[dict[str, Any]] | None, message: str = "", body: dict[str, Any] | None = None
) -> str:
    """The API's field errors as one readable cell: `email: must be …; phone: …`; a
    variable's (`variables[2].value`) named by the file's column (`var:code`) when the
    row's `body` is given."""
    parts = []
    for error in errors or []:
        field = _column_of(error.get("field") or "", body)
        text = error.get("message") or ""
        parts.append(f"{field}: {text}" if field else text)
    return "; ".join(parts) or message or "failed"


_VARIABLE = re.compile(r"variables\[(\d+)\](?:\.\w+)?", re.ASCII)


def _column_of(field: str, body: dict[str, Any] | None) -> str:
    found = _VARIABLE.fullmatch(field)
    variables = (body or {}).get("variables") or []
    if found is None or int(found[1]) >= len(variables):
        return field
    return f"var:{variables[int(found[1])]['name']}"
