"""Importing contacts: rows are read lazily and sent in batches to upsert-batch, which
matches each to a live contact (by phone or email) and creates, updates or leaves it."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
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
    """One batch in flight while the next is read: the server's time and the reading
    overlap, and batches still apply in file order (a later row sees an earlier one)."""
    in_flight: tuple[Pending, Future[Answer]] | None = None
    with ThreadPoolExecutor(1) as sender:
        for batch in _batches(rows, builder, tally, rejects, progress):
            sent = sender.submit(_send, batch, remote, match_by=match_by, dry_run=dry_run)
            if in_flight is not None:
                _record(*in_flight, tally=tally, rejects=rejects, progress=progress)
            in_flight = (batch, sent)
        if in_flight is not None:
            _record(*in_flight, tally=tally, rejects=rejects, progress=progress)


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


# The upsert's results, or why the whole call failed.
Answer = list[dict[str, Any]] | str


def _send(batch: Pending, remote: Remote, *, match_by: str, dry_run: bool) -> Answer:
    from chatcrm_client import ChatcrmError

    try:
        data = remote.upsert_contacts(
            [body for _, body in batch], match_by=match_by, dry_run=dry_run
        )
    except ChatcrmError as exc:
        # The whole call was refused (or the server is gone): each of its rows failed.
        return error_text(exc)
    results: list[dict[str, Any]] = data["results"]
    return results


def _record(
    batch: Pending, sent: Future[Answer], *, tally: Tally, rejects: Rejects, progress: RowProgress
) -> None:
    answer = sent.result()
    if isinstance(answer, str):
        for row, _ in batch:
            tally.add("failed")
            rejects.write(row.cells, answer)
    else:
        for (row, _), result in zip(batch, answer, strict=True):
            status = result["status"]
            tally.add(status)
            if status == "failed":
                rejects.write(row.cells, api_errors_text(result.get("errors")))
    progress.advance(len(batch))
