"""The two kinds of failure of an import or export: the whole run (exit 2) or one row."""

from __future__ import annotations


class BadInput(Exception):
    """A bad file, option or connection: nothing (more) can be done; the command exits 2
    with this one-line message."""


class RowError(Exception):
    """One row cannot be sent: the row fails, the others go on. `errors` are
    `(column, message)` pairs, shown in the rejects file."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        super().__init__(errors_text(errors))
        self.errors = errors


def errors_text(errors: list[tuple[str, str]]) -> str:
    """`field: message; field: message` — one readable cell."""
    return "; ".join(f"{field}: {message}" if field else message for field, message in errors)
