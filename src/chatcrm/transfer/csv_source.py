"""Reading an import file: UTF-8 with or without BOM, `,` or `;` separated (detected),
quoted cells may hold newlines. Rows are read lazily: memory stays flat whatever the
file's size."""

from __future__ import annotations

import codecs
import csv
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from chatcrm.transfer.problems import BadInput

# `utf-8-sig` reads a file with or without the byte-order mark that spreadsheets write.
ENCODING = "utf-8-sig"
DELIMITERS = ",;"
_SAMPLE_CHARS = 64 * 1024
# Python's csv refuses a cell over 128 Ki characters by default, which would stop the
# whole file at that row (G: a failed row never stops the others): a cell of any size is
# read, and the service judges it with the rest of its row.
csv.field_size_limit(2**31 - 1)


@dataclass(frozen=True)
class Row:
    """One data row: its number among the data rows (from 1), its cells as read, and the
    line of the file it starts on (the header is line 1; a quoted cell may hold newlines,
    so a row may span several lines)."""

    number: int
    cells: list[str]
    line: int = 0


@dataclass(frozen=True)
class CsvFile:
    path: Path
    delimiter: str
    header: list[str]
    # Whether the file starts with a UTF-8 byte-order mark: the files written for it (the
    # rejects file) get one too, so the spreadsheet that wrote it reads their accents.
    bom: bool = False

    def rows(self) -> Iterator[Row]:
        """The data rows, one at a time; blank rows are skipped: empty lines, and lines of
        separators and spaces alone (`,,,`), which spreadsheets write for an empty row."""
        with _open(self.path) as handle:
            reader = csv.reader(handle, delimiter=self.delimiter)
            try:
                next(reader, None)
                number = 0
                ended = reader.line_num  # the line the previous record ended on
                for cells in reader:
                    start, ended = ended + 1, reader.line_num
                    if _blank(cells):
                        continue
                    number += 1
                    yield Row(number, cells, start)
            except UnicodeDecodeError as exc:  # changed since `count_rows` read it whole
                raise not_utf8(self.path) from exc
            except csv.Error as exc:
                raise BadInput(f"{self.path}: line {reader.line_num}: {exc}") from exc

    def count_rows(self) -> int:
        """How many data rows there are, for the progress bar: one quick pass of the C
        reader over the whole file, made before any row is sent. So it is also where a
        file that cannot be read to its end is refused (BadInput): one that stops being
        UTF-8 past the start `open_csv` reads would otherwise be half imported."""
        try:
            with _open(self.path) as handle:
                reader = csv.reader(handle, delimiter=self.delimiter)
                try:
                    return sum(1 for cells in reader if not _blank(cells)) - 1
                except csv.Error as exc:
                    raise BadInput(f"{self.path}: line {reader.line_num}: {exc}") from exc
        except UnicodeDecodeError as exc:
            raise not_utf8(self.path) from exc
        except OSError as exc:
            raise BadInput(f"{self.path}: {exc.strerror or exc}") from exc


def _blank(cells: list[str]) -> bool:
    return not any(cell.strip() for cell in cells)


def _open(path: Path) -> TextIO:
    return path.open(encoding=ENCODING, newline="")


def not_utf8(path: Path) -> BadInput:
    """The refusal of a file that is not UTF-8, naming the line of its first bad byte. The
    decoder's error cannot tell it (it knows its place in the chunk it was decoding), so
    the bytes are read again, line by line: no UTF-8 character holds a `\r` or `\n` byte,
    so each line decodes alone. Lines end at `\n`, `\r\n` or `\r`, as the rows' lines
    count them (the header is line 1)."""
    line = 1
    with path.open("rb") as raw:
        for chunk in raw:  # ends at b"\n": a lone b"\r" inside ends a line too
            try:
                chunk.decode("utf-8")
            except UnicodeDecodeError as exc:
                line += chunk.count(b"\r", 0, exc.start)
                break
            line += chunk.count(b"\n") + chunk.count(b"\r") - chunk.count(b"\r\n")
    return BadInput(f"{path}: not UTF-8 at line {line} (save it as UTF-8 CSV)")


def open_csv(path: Path) -> CsvFile:
    """The file's delimiter and header row; a file that cannot be read is a BadInput."""
    try:
        with path.open("rb") as raw:
            bom = raw.read(len(codecs.BOM_UTF8)) == codecs.BOM_UTF8
        with _open(path) as handle:
            sample = handle.read(_SAMPLE_CHARS)
    except FileNotFoundError as exc:
        raise BadInput(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise BadInput(f"{path}: is a directory") from exc
    except UnicodeDecodeError as exc:
        raise not_utf8(path) from exc
    except OSError as exc:
        raise BadInput(f"{path}: {exc.strerror or exc}") from exc
    if not sample.strip():
        raise BadInput(f"{path}: the file is empty")
    delimiter = sniff_delimiter(sample)
    reader = csv.reader(sample.splitlines(keepends=True), delimiter=delimiter)
    try:
        header = next(reader)
    except csv.Error as exc:
        raise BadInput(f"{path}: the header row cannot be read: {exc}") from exc
    return CsvFile(path, delimiter, header, bom)


def sniff_delimiter(sample: str) -> str:
    """`,` or `;`: csv.Sniffer on the first chunk, restricted to those two. Column names
    hold neither, so the header line settles what the sniffer cannot tell (one column, few
    rows) or gets wrong (a `;` file whose cells hold commas): `,` on a tie."""
    lines = sample.splitlines()
    first_line = lines[0] if lines else ""
    by_header = ";" if first_line.count(";") > first_line.count(",") else ","
    # Cut the sample at a line end so the sniffer never sees half a row.
    cut = max(sample.rfind("\n"), sample.rfind("\r"))
    chunk = sample[: cut + 1] if cut > 0 else sample
    try:
        found = csv.Sniffer().sniff(chunk, delimiters=DELIMITERS).delimiter
    except csv.Error:
        return by_header
    other = ";" if found == "," else ","
    if found not in DELIMITERS or (other in first_line and found not in first_line):
        return by_header
    return found
