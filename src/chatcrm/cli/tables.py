"""How the `list` commands print: aligned columns for people, one JSON array for programs."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import TypeVar

import click

Item = TypeVar("Item")

json_array_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON array on stdout."
)


def print_list(
    items: Sequence[Item],
    *,
    as_json: bool,
    headings: Sequence[str],
    cells: Callable[[Item], Sequence[str]],
) -> None:
    """`items` as one JSON array, or as a table with a heading line (alone when empty)."""
    if as_json:
        click.echo(json.dumps(list(items)))
        return
    rows = [list(headings)] + [[_printable(cell) for cell in cells(item)] for item in items]
    widths = [max(len(row[column]) for row in rows) for column in range(len(headings))]
    for row in rows:
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        click.echo(line.rstrip())


def _printable(text: str) -> str:
    # A name may hold a newline or a tab; one row stays one line.
    return "".join(ch if ch.isprintable() else " " for ch in text)
