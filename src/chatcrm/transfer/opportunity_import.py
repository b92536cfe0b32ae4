"""Importing opportunities. There is no upsert endpoint for them, so the matching is ours
(docs/import.md): a row matches the live opportunity of the same contact with the same
name; a match whose given values all equal the stored ones is unchanged, else it is updated
with the changed fields only; no match is created (creationTypeId 2, "import").

Each call names one opportunity, so calls are made side by side instead: rows come in
windows; a window's contacts are looked up together, their opportunities listed together,
then its rows are applied by several threads — the rows of one (contact, name) in file
order, by one thread, so a later row sees what an earlier one did."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from itertools import islice
from typing import Any, TypeVar

from chatcrm.opportunities.fields import FIELDS
from chatcrm.records.scalar_types import MoneyAmount, Timestamp
from chatcrm.transfer.bodies import BodyBuilder
from chatcrm.transfer.cells import CellError
from chatcrm.transfer.columns import OPPORTUNITY_AFTER_CREATE, Role
from chatcrm.transfer.csv_source import Row
from chatcrm.transfer.outcome import Rejects, Tally
from chatcrm.transfer.problems import RowError
from chatcrm.transfer.progress import RowProgress
from chatcrm.transfer.remote import Remote, error_text

CREATED_BY_IMPORT = 2
# Contacts whose opportunities (or whose id) are kept in memory at once: enough for any
# file grouped by contact, bounded for files that are not.
CACHE_CONTACTS = 10_000
WINDOW_ROWS = 256
THREADS = 8

Named = dict[str, dict[str, Any]]
K = TypeVar("K")
V = TypeVar("V")


def _fetch_all(pool: ThreadPoolExecutor, keys: Iterable[K], fetch: Callable[[K], V]) -> dict[K, V]:
    """fetch(key) for each key, side by side; a key whose call failed is left out (its rows
    make the call again, and fail with its error)."""

    def attempt(key: K) -> tuple[K, V | Exception]:
        try:
            return key, fetch(key)
        except Exception as exc:  # reported by the row that needs it
            return key, exc

    return {k: v for k, v in pool.map(attempt, list(keys)) if not isinstance(v, Exception)}


class OpportunityIndex:
    """The live opportunities of a contact by name, listed once (contactId filter) when
    the first row of that contact comes. Opportunities of no contact are listed whole,
    once, the first time a row without a contact comes."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.by_contact: OrderedDict[str, Named] = OrderedDict()

    def load(self, contact_id: str) -> Named:
        named: Named = {}
        filters = {"contactId": contact_id} if contact_id else {}
        for page in self.remote.opportunities(filters):
            for record in page:
                if (record.get("contactId") or "") == contact_id:
                    # Newest first: of two with one name, the newest is the one matched.
                    named.setdefault(_key(record["name"]), record)
        return named

    def prefetch(self, contact_ids: set[str], pool: ThreadPoolExecutor) -> None:
        missing = [c for c in contact_ids if c not in self.by_contact]
        for contact_id, named in _fetch_all(pool, missing, self.load).items():
            self._keep(contact_id, named)

    def _keep(self, contact_id: str, named: Named) -> None:
        self.by_contact[contact_id] = named
        if len(self.by_contact) > CACHE_CONTACTS:
            self.by_contact.popitem(last=False)

    def named(self, contact_id: str) -> Named:
        found = self.by_contact.get(contact_id)
        if found is None:
            found = self.load(contact_id)
            self._keep(contact_id, found)
        return found

    def remember(self, record: dict[str, Any]) -> None:
        contact_id = record.get("contactId") or ""
        if contact_id in self.by_contact:
            self.by_contact[contact_id][_key(record["name"])] = record


def _key(name: str) -> str:
    return name.strip()


class ContactFinder:
    """A contact id, phone or email → the contact's id, remembered per value."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.found: OrderedDict[str, str | None] = OrderedDict()

    def prefetch(self, values: set[str], pool: ThreadPoolExecutor) -> None:
        missing = [v for v in values if v not in self.found]
        for value, contact_id in _fetch_all(pool, missing, self.remote.find_contact).items():
            self._keep(value, contact_id)

    def _keep(self, value: str, contact_id: str | None) -> None:
        self.found[value] = contact_id
        if len(self.found) > CACHE_CONTACTS:
            self.found.popitem(last=False)

    def __call__(self, value: str) -> str:
        if value not in self.found:
            self._keep(value, self.remote.find_contact(value))
        contact_id = self.found[value]
        if contact_id is None:
            raise CellError(f'no contact with id, phone or email "{value}"')
        return contact_id


@dataclass
class _Planned:
    row: Row
    body: dict[str, Any] | None = None
    status: str = "failed"
    error: str = ""


def import_opportunities(
    rows: Iterator[Row],
    builder: BodyBuilder,
    remote: Remote,
    *,
    finder: ContactFinder,
    dry_run: bool,
    tally: Tally,
    rejects: Rejects,
    progress: RowProgress,
) -> None:
    index = OpportunityIndex(remote)
    contact_at = [
        i for i, c in enumerate(builder.columns) if c is not None and c.role is Role.CONTACT
    ]
    with ThreadPoolExecutor(THREADS) as pool:
        while window := list(islice(rows, WINDOW_ROWS)):
            values = {
                row.cells[i].strip() for row in window for i in contact_at if i < len(row.cells)
            }
            finder.prefetch(values - {""}, pool)
            planned = [_plan(row, builder) for row in window]
            index.prefetch({p.body.get("contactId") or "" for p in planned if p.body}, pool)
            groups: dict[tuple[str, str], list[_Planned]] = {}
            for p in planned:
                if p.body is not None:
                    key = (p.body.get("contactId") or "", _key(p.body["name"]))
                    groups.setdefault(key, []).append(p)
            apply = _Applier(remote, index, dry_run=dry_run)
            for last in pool.map(apply, groups.items()):
                if last is not None:
                    index.remember(last)
            for p in planned:
                tally.add(p.status)
                if p.status == "failed":
                    rejects.write(p.row, p.error)
            progress.advance(len(window))


def _plan(row: Row, builder: BodyBuilder) -> _Planned:
    from chatcrm_client import ChatcrmError

    planned = _Planned(row)
    try:
        body = builder.body(row)
    except RowError as exc:
        planned.error = str(exc)
        return planned
    except ChatcrmError as exc:
        planned.error = error_text(exc)
        return planned
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        planned.error = "name: is required (it matches the row to an opportunity)"
        return planned
    planned.body = body
    return planned


class _Applier:
    """Applies the rows of one (contact, name), in file order; returns the opportunity as
    the last of them left it (None when nothing was written)."""

    def __init__(self, remote: Remote, index: OpportunityIndex, *, dry_run: bool) -> None:
        self.remote = remote
        self.index = index
        self.dry_run = dry_run

    def __call__(self, group: tuple[tuple[str, str], list[_Planned]]) -> dict[str, Any] | None:
        from chatcrm_client import ChatcrmError

        (contact_id, name), rows = group
        try:
            current = self.index.named(contact_id).get(name)
        except ChatcrmError as exc:
            for p in rows:
                p.error = error_text(exc)
            return None
        written = None
        for p in rows:
            assert p.body is not None
            try:
                p.status, record = self._apply(p.body, current)
            except ChatcrmError as exc:
                p.status, p.error = "failed", error_text(exc)
                continue
            if record is not None:
                current = written = record
            elif p.status == "created":
                # A dry run: later rows of this name match what this one would create.
                current = {**p.body, "contactId": contact_id}
        return written

    def _apply(
        self, body: dict[str, Any], existing: dict[str, Any] | None
    ) -> tuple[str, dict[str, Any] | None]:
        if existing is None:
            if self.dry_run:
                return "created", None
            later = {k: body[k] for k in OPPORTUNITY_AFTER_CREATE if k in body}
            first = {k: v for k, v in body.items() if k not in later}
            created = self.remote.create_opportunity({**first, "creationTypeId": CREATED_BY_IMPORT})
            left = {k: v for k, v in later.items() if not same(k, v, created)}
            if left:
                try:
                    created = self.remote.update_opportunity(created["id"], left)
                except Exception:
                    # A failed row leaves nothing behind: else it is counted failed and
                    # yet there, and the next run (or row) of that name makes another.
                    self.remote.delete_opportunity(created["id"])
                    raise
            return "created", created
        changed = {wire: value for wire, value in body.items() if not same(wire, value, existing)}
        if not changed:
            return "unchanged", None
        if self.dry_run:
            return "updated", None
        return "updated", self.remote.update_opportunity(existing["id"], changed)


def same(wire: str, given: Any, stored: dict[str, Any]) -> bool:
    """Whether a given value equals the stored one, as the API would store it."""
    current = stored.get(wire)
    kind = FIELDS[wire].type
    if isinstance(kind, MoneyAmount):
        return current is not None and Decimal(str(given)) == Decimal(str(current))
    if isinstance(kind, Timestamp):
        return current is not None and _instant(given) == _instant(current)
    if wire == "contactId":
        return (given or "") == (current or "")
    if isinstance(given, str) and isinstance(current, str):
        return given.strip() == current.strip()
    return bool(given == current)


def _instant(text: Any) -> datetime | None:
    try:
        value = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
