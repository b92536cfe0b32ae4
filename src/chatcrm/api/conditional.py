"""`If-Match` on updates: a stale version is 412 and nothing is changed."""

from __future__ import annotations

from chatcrm.api.errors import PreconditionFailed
from chatcrm.db.database import Row


def etag(row: Row) -> str:
    """Strong tag naming the record's version; the same whichever shape the record is shown in."""
    return f'"{row["version"]}"'


def check_if_match(if_match: str | None, current_etag: str) -> None:
    if if_match is None:
        return
    wanted = [tag.strip() for tag in if_match.split(",") if tag.strip()]
    if "*" in wanted or current_etag in wanted:  # strong comparison: W/ tags never match
        return
    raise PreconditionFailed(
        f"The record has changed: its current ETag is {current_etag}, not {if_match.strip()}. "
        "Read it again and retry the update against the new version."
    )
