"""Importing contacts: rows are read lazily and sent in batches to upsert-batch, which
matches each to a live contact (by phone or email) and creates, updates or leaves it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from chatcrm.transfer.bodies import BodyBuilder
from chatcrm.transfer.csv_source import Row
from chatcrm.transfer.outcome import Rejects, Tally, api_errors_text
from chatcrm.transfer.problems import RowError
from chatcrm.transfer.progress import RowProgress
from chatcrm.transfer.remote import Remote, error_text

# The API takes at most 500 items a call, and bodies up to 1 MiB: a batch also ends
# before its JSON would pass BATCH_BYTES.
BATCH_ROWS = 500
BATCH_BYTES = 900_000


def import_contacts(
    rows: Iterator[Row],
    builder: BodyBuilder,
    remote: Remote,
    *,
    match_by: str,
    dry_run: bool,
    tally: Tally,
    rejects: Rejects,
    progress: RowProgress,
) -> None:
    for batch in _batches(rows, builder, tally, rejects, progress):
        _send(batch, remote, match_by=match_by, dry_run=dry_run, tally=tally, rejects=rejects)
        progress.advance(len(batch))


Pending = list[tuple[Row, dict[str, Any]]]


def _batches(
    rows: Iterator[Row], builder: BodyBuilder, tally: Tally, rejects: Rejects, progress: RowProgress
) -> Iterator[Pending]:
    """Batches of (row, body); a row that cannot be sent fails here, on its own."""
    batch: Pending = []
    size = 0
    for row in rows:
        try:
            body = builder.body(row)
        except RowError as exc:
            tally.add("failed")
            rejects.write(row.cells, str(exc))
            progress.advance(1)
            continue
        item_size = len(orjson.dumps(body)) + 1
        if batch and (len(batch) >= BATCH_ROWS or size + item_size > BATCH_BYTES):
            yield batch
            batch, size = [], 0
        batch.append((row, body))
        size += item_size
    if batch:
        yield batch


def _send(
    batch: Pending, remote: Remote, *, match_by: str, dry_run: bool, tally: Tally, rejects: Rejects
) -> None:
    from chatcrm_client import ChatcrmError

    try:
        data = remote.upsert_contacts(
            [body for _, body in batch], match_by=match_by, dry_run=dry_run
        )
    except ChatcrmError as exc:
        # The whole call was refused (or the server is gone): each of its rows failed.
        text = error_text(exc)
        for row, _ in batch:
            tally.add("failed")
            rejects.write(row.cells, text)
        return
    for (row, _), result in zip(batch, data["results"], strict=True):
        status = result["status"]
        tally.add(status)
        if status == "failed":
            rejects.write(row.cells, api_errors_text(result.get("errors")))
