"""Importing contacts: rows are read lazily and sent in batches to upsert-batch, which
matches each to a live contact (by phone or email) and creates, updates or leaves it."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from chatcrm.core.phone import PhoneError, normalize_phone
from chatcrm.transfer.bodies import BodyBuilder
from chatcrm.transfer.columns import CONTACT_AFTER_CREATE
from chatcrm.transfer.csv_source import Row
from chatcrm.transfer.outcome import Rejects, Tally, api_errors_text
from chatcrm.transfer.problems import RowError
from chatcrm.transfer.progress import RowProgress
from chatcrm.transfer.remote import Remote, error_text
from chatcrm_client._wire import dumps as exact_json

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
    country: str | None = None,
    dry_run: bool,
    tally: Tally,
    rejects: Rejects,
    progress: RowProgress,
) -> None:
    """One batch in flight while the next is read: the server's time and the reading
    overlap, and batches still apply in file order (a later row sees an earlier one)."""
    in_flight: tuple[Pending, Future[Answer]] | None = None
    same = SameContact(match_by, country)
    with ThreadPoolExecutor(1) as sender:
        for batch in _batches(rows, builder, same):
            sent = sender.submit(_send, batch, remote, match_by=match_by, dry_run=dry_run)
            if in_flight is not None:
                _record(*in_flight, tally=tally, rejects=rejects, progress=progress, same=same)
            in_flight = (batch, sent)
        if in_flight is not None:
            _record(*in_flight, tally=tally, rejects=rejects, progress=progress, same=same)
    tally.warnings += same.warnings()


# How many contacts matched by several rows are named on stderr.
SHOWN_SAME_CONTACT = 5


class SameContact:
    """Which rows would match the same contact: the same phone (as the server reads it:
    `+51 987…`, `0051987…` and `51 (0) 987…` are one number, bare digits read in the
    workspace's `country`) or email (case-insensitive), as `--match` picks it. The server
    applies them in file order, so the last one wins; worth a warning, since it is usually
    a mistake. Rows that fail match nothing and are left out of it. Keeps one entry per
    key seen (a few dozen bytes a row)."""

    def __init__(self, match_by: str, country: str | None = None) -> None:
        self.match_by = match_by
        self.country = country
        self.lines: dict[tuple[str, str], int | list[int]] = {}
        self.failed: set[int] = set()

    def _phone(self, value: Any) -> str:
        text = str(value or "")
        try:
            return normalize_phone(text, country=self.country) if text else ""
        except PhoneError:  # the server refuses the row: its digits, as a key of its own
            return "".join(ch for ch in text if ch.isdigit())

    def key(self, body: dict[str, Any]) -> tuple[str, str] | None:
        phone = self._phone(body.get("internalWhatsappNumber"))
        email = str(body.get("email") or "").strip().casefold()
        if self.match_by in ("auto", "phone") and phone:
            return ("phone", phone)
        if self.match_by in ("auto", "email") and email:
            return ("email", email)
        return None

    def see(self, row: Row, body: dict[str, Any]) -> None:
        key = self.key(body)
        if key is None:
            return
        seen = self.lines.get(key)
        if seen is None:
            self.lines[key] = row.line
        elif isinstance(seen, int):
            self.lines[key] = [seen, row.line]
        else:
            seen.append(row.line)

    def warnings(self) -> list[str]:
        repeated = []
        for key, seen in self.lines.items():
            if isinstance(seen, list):
                applied = [line for line in seen if line not in self.failed]
                if len(applied) > 1:
                    repeated.append((key, applied))
        out = [
            f"lines {_enumerate(lines)} match the same contact ({kind} {value}): "
            "they are applied in order, the last one wins"
            for (kind, value), lines in repeated[:SHOWN_SAME_CONTACT]
        ]
        if len(repeated) > SHOWN_SAME_CONTACT:
            more = len(repeated) - SHOWN_SAME_CONTACT
            out.append(f"{more} more contacts are matched by several rows")
        return out


def _enumerate(lines: list[int]) -> str:
    shown = [str(line) for line in lines[:10]] + (["…"] if len(lines) > 10 else [])
    return ", ".join(shown[:-1]) + " and " + shown[-1]


# A batch's rows in file order, each with its body, or (a row that cannot be sent) why not.
Pending = list[tuple[Row, dict[str, Any] | str]]


def _batches(rows: Iterator[Row], builder: BodyBuilder, same: SameContact) -> Iterator[Pending]:
    """Batches of at most BATCH_ROWS bodies (and BATCH_BYTES of JSON); the rows that fail
    before sending ride along, so the rejects file keeps the file's order."""
    batch: Pending = []
    count = size = 0
    for row in rows:
        try:
            body = builder.body(row)
        except RowError as exc:
            batch.append((row, str(exc)))
            continue
        same.see(row, body)
        item_size = len(exact_json(body)) + 1
        if count and (count >= BATCH_ROWS or size + item_size > BATCH_BYTES):
            yield batch
            batch, count, size = [], 0, 0
        batch.append((row, body))
        count += 1
        size += item_size
    if batch:
        yield batch


# The upsert's results, or why the whole call failed.
Answer = list[dict[str, Any]] | str


def _send(batch: Pending, remote: Remote, *, match_by: str, dry_run: bool) -> Answer:
    from chatcrm_client import ChatcrmError

    bodies = [body for _, body in batch if not isinstance(body, str)]
    if not bodies:
        return []
    # What an upsert does not take is set after it, row by row (CONTACT_AFTER_CREATE).
    later = [{k: body[k] for k in CONTACT_AFTER_CREATE if k in body} for body in bodies]
    items = [{k: v for k, v in body.items() if k not in CONTACT_AFTER_CREATE} for body in bodies]
    try:
        data = remote.upsert_contacts(items, match_by=match_by, dry_run=dry_run)
    except ChatcrmError as exc:
        # The whole call was refused (or the server is gone): each of its rows failed.
        return error_text(exc)
    results: list[dict[str, Any]] = data["results"]
    for result, wanted in zip(results, later, strict=True):
        if wanted and result["status"] != "failed":
            _set_after(result, wanted, remote, dry_run=dry_run)
    return results


def _set_after(
    result: dict[str, Any], wanted: dict[str, Any], remote: Remote, *, dry_run: bool
) -> None:
    """Set what the upsert did not take (a new contact is not solved; a matched one is
    read first, so that a second run of the same file changes nothing)."""
    from chatcrm_client import ChatcrmError

    try:
        if result["status"] == "created":
            current: dict[str, Any] = {"isSolved": False}
        else:
            current = remote.contact(result["id"]) or {}
        left = {k: v for k, v in wanted.items() if current.get(k) != v}
        if not left:
            return
        if not dry_run:
            remote.update_contact(result["id"], left)
    except ChatcrmError as exc:
        done = "created" if result["status"] == "created" else "matched"
        result["status"] = "failed"
        result["errors"] = [
            {"message": f"{done}, but {', '.join(wanted)} not set: {error_text(exc)}"}
        ]
        return
    if result["status"] == "unchanged":
        result["status"] = "updated"


def _record(
    batch: Pending,
    sent: Future[Answer],
    *,
    tally: Tally,
    rejects: Rejects,
    progress: RowProgress,
    same: SameContact,
) -> None:
    answer = sent.result()
    results = iter(answer if isinstance(answer, list) else [])
    for row, body in batch:
        if isinstance(body, str):
            status, error = "failed", body
        elif isinstance(answer, str):
            status, error = "failed", answer
        else:
            result = next(results)
            status = result["status"]
            error = api_errors_text(result.get("errors"), body=body) if status == "failed" else ""
        tally.add(status)
        if status == "failed":
            rejects.write(row, error)
            same.failed.add(row.line)
    progress.advance(len(batch))
