"""Importing opportunities. There is no upsert endpoint for them, so the matching is ours
(docs/import.md): a row matches a live opportunity of the same contact with the same name,
one not matched by another row of the import yet, preferring one whose values all equal
the row's (unchanged); else it takes the next such opportunity, updated with the changed
fields only; with none left it is created (creationTypeId 2, "import"). So the rows of one
name stand for as many opportunities: a file exported and imported elsewhere makes them
all, and imported again changes nothing.

Each call names one opportunity, so calls are made side by side instead: rows come in
windows; a window's contacts are looked up together, their opportunities listed together,
then its rows are applied by several threads, the rows of one (contact, name) by one."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from functools import partial
from itertools import count, islice
from typing import Any, TypeVar

from chatcrm.core.timestamps import parse_iso
from chatcrm.opportunities.fields import FIELDS
from chatcrm.records.bodies import create_body, update_values
from chatcrm.records.scalar_types import MoneyAmount, Timestamp
from chatcrm.transfer.bodies import BodyBuilder
from chatcrm.transfer.cells import CellError, unsendable
from chatcrm.transfer.columns import OPPORTUNITY_AFTER_CREATE, Role
from chatcrm.transfer.csv_source import Row
from chatcrm.transfer.outcome import Rejects, Tally
from chatcrm.transfer.pairing import pairs
from chatcrm.transfer.problems import RowError
from chatcrm.transfer.progress import RowProgress
from chatcrm.transfer.remote import Remote, error_text

CREATED_BY_IMPORT = 2
# Contacts whose opportunities (or whose id) are kept in memory at once: enough for any
# file grouped by contact, bounded for files that are not. What the run has taken is kept
# apart, for the whole run (OpportunityIndex.taken).
CACHE_CONTACTS = 10_000
WINDOW_ROWS = 256
THREADS = 8

K = TypeVar("K")
V = TypeVar("V")


@dataclass
class Listed:
    """A contact's live opportunities by name (newest first, as listed), and the ids that
    rows of this import have matched or made (the run's own set, shared by every contact:
    listed again, a contact's opportunities come back with what was taken still taken)."""

    named: dict[str, list[dict[str, Any]]]
    taken: set[str]

    def free(self, name: str) -> list[dict[str, Any]]:
        return [r for r in self.named.get(name, []) if r["id"] not in self.taken]

    def take(self, record: dict[str, Any]) -> None:
        self.taken.add(record["id"])
        kept = self.named.setdefault(_key(record["name"]), [])
        kept[:] = [r for r in kept if r["id"] != record["id"]] + [record]


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
    """The live opportunities of a contact, listed once (contactId filter) when the first
    row of that contact comes. Opportunities of no contact are listed whole, once, the
    first time a row without a contact comes. A contact dropped from memory is listed
    again when its next row comes; the ids taken are never dropped: forgetting them, a
    later row would match (and update) an opportunity another row made or matched."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.by_contact: OrderedDict[str, Listed] = OrderedDict()
        # At most one id a row, so kept whole. Threads use it side by side: each use is
        # one `add` or `in`, atomic in CPython.
        self.taken: set[str] = set()
        self.made = count()  # the ids a dry run gives the opportunities it would make

    def load(self, contact_id: str) -> Listed:
        named: dict[str, list[dict[str, Any]]] = {}
        filters = {"contactId": contact_id} if contact_id else {}
        for page in self.remote.opportunities(filters):
            for record in page:
                if (record.get("contactId") or "") == contact_id:
                    named.setdefault(_key(record["name"]), []).append(record)
        return Listed(named, self.taken)

    def prefetch(self, contact_ids: set[str], pool: ThreadPoolExecutor) -> None:
        missing = [c for c in contact_ids if c not in self.by_contact]
        for contact_id, listed in _fetch_all(pool, missing, self.load).items():
            self._keep(contact_id, listed)

    def _keep(self, contact_id: str, listed: Listed) -> None:
        self.by_contact[contact_id] = listed
        if len(self.by_contact) > CACHE_CONTACTS:
            self.by_contact.popitem(last=False)

    def listed(self, contact_id: str) -> Listed:
        found = self.by_contact.get(contact_id)
        if found is None:
            found = self.load(contact_id)
            self._keep(contact_id, found)
        return found


def _key(name: str) -> str:
    return name.strip()


class ContactFinder:
    """A contact id, phone or email → the contact's id, remembered per value."""

    def __init__(self, remote: Remote, country: str | None = None) -> None:
        self.remote = remote
        # A phone is read in the workspace's defaultCountry (N), as the server reads it.
        self.find = partial(remote.find_contact, country=country)
        self.found: OrderedDict[str, str | None] = OrderedDict()

    def prefetch(self, values: set[str], pool: ThreadPoolExecutor) -> None:
        # A value that cannot be sent is not looked up: its row fails saying why (bodies).
        missing = [v for v in values if v not in self.found and unsendable(v) is None]
        for value, contact_id in _fetch_all(pool, missing, self.find).items():
            self._keep(value, contact_id)

    def _keep(self, value: str, contact_id: str | None) -> None:
        self.found[value] = contact_id
        if len(self.found) > CACHE_CONTACTS:
            self.found.popitem(last=False)

    def __call__(self, value: str) -> str:
        if value not in self.found:
            self._keep(value, self.find(value))
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
            # Groups of one contact share its Listed, each its own names: no two threads
            # take from one list.
            list(pool.map(_Applier(remote, index, dry_run=dry_run), groups.items()))
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
    """Applies the rows of one (contact, name): first each row equal to an opportunity of
    that name not taken yet (unchanged), then the others in file order, each taking the
    next such opportunity (updated) or, with none left, making one (created)."""

    def __init__(self, remote: Remote, index: OpportunityIndex, *, dry_run: bool) -> None:
        self.remote = remote
        self.index = index
        self.dry_run = dry_run

    def __call__(self, group: tuple[tuple[str, str], list[_Planned]]) -> None:
        from chatcrm_client import ChatcrmError

        (contact_id, name), rows = group
        try:
            listed = self.index.listed(contact_id)
        except ChatcrmError as exc:
            for p in rows:
                p.error = error_text(exc)
            return
        # Rows equal to an opportunity are matched first, each to one, as many as can be
        # (pairing.py): rather those whose activities are exactly the opportunity's, then
        # those it holds among more (added since the export). Else, of two namesakes, a row
        # could take the one its twin's row equals, and that row would copy its activities
        # onto the other.
        free = listed.free(name)
        paired = pairs(
            [p.body or {} for p in rows],
            free,
            partial(_equal, exactly=False),
            rather=partial(_equal, exactly=True),
        )
        for i, j in paired.items():
            listed.take(free[j])
            rows[i].status = "unchanged"
        left = [p for i, p in enumerate(rows) if i not in paired]
        for p in left:
            assert p.body is not None
            free = listed.free(name)
            existing = free[0] if free else None
            refused = value_problems(p.body, existing) if self.dry_run else None
            if refused:
                p.status, p.error = "failed", refused
                continue
            try:
                p.status, record = self._apply(p.body, existing)
            except ChatcrmError as exc:
                p.status, p.error = "failed", error_text(exc)
                continue
            if record is None:  # a dry run: what this row would be, taken
                record = {**(existing or {}), **p.body, "contactId": contact_id}
                record["id"] = existing["id"] if existing else f"dry run {next(self.index.made)}"
            listed.take(record)

    def _apply(
        self, body: dict[str, Any], existing: dict[str, Any] | None
    ) -> tuple[str, dict[str, Any] | None]:
        activities = body.get(ACTIVITIES) or []
        body = {k: v for k, v in body.items() if k != ACTIVITIES}
        if existing is None:
            if self.dry_run:
                return "created", None
            later = {k: body[k] for k in OPPORTUNITY_AFTER_CREATE if k in body}
            first = {k: v for k, v in body.items() if k not in later}
            created = self.remote.create_opportunity({**first, "creationTypeId": CREATED_BY_IMPORT})
            try:
                left = {k: v for k, v in later.items() if not same(k, v, created)}
                if left:
                    created = self.remote.update_opportunity(created["id"], left)
                return "created", self._add(created, activities)
            except Exception:
                # A failed row leaves nothing behind: else it is counted failed and yet
                # there, and the next run (or row) of that name makes another.
                self.remote.delete_opportunity(created["id"])
                raise
        changed = _changes(body, existing)
        missing = _missing(activities, existing.get(ACTIVITIES))
        if not changed and not missing:
            return "unchanged", None
        if self.dry_run:
            return "updated", None
        record = self.remote.update_opportunity(existing["id"], changed) if changed else existing
        return "updated", self._add(record, missing)

    def _add(self, record: dict[str, Any], activities: list[dict[str, Any]]) -> dict[str, Any]:
        """Add the activities to the opportunity; the record as it then is."""
        for activity in activities:
            self.remote.add_opportunity_activity(record["id"], activity)
        if not activities:
            return record
        return {**record, ACTIVITIES: [*(record.get(ACTIVITIES) or []), *activities]}


def value_problems(body: dict[str, Any], existing: dict[str, Any] | None) -> str | None:
    """What the server would refuse in the values a row sends (a dry run sends nothing):
    the API's own field rules (records/bodies.py), its words, one line as `error_text`
    gives a refusal; None when every value passes. (Activities were checked as the cell
    was read.)"""
    body = {k: v for k, v in body.items() if k != ACTIVITIES}
    if existing is None:  # a create, then an update of what a create does not take
        later = {k: body[k] for k in OPPORTUNITY_AFTER_CREATE if k in body}
        first = {k: v for k, v in body.items() if k not in later}
        errors = create_body(FIELDS, first, workspace_key=False).errors
        errors += update_values(FIELDS, list(later), later).errors
    else:
        changed = _changes(body, existing)
        errors = update_values(FIELDS, list(changed), changed).errors
    return "; ".join(f"{e.field}: {e.message}" for e in errors) or None


def _equal(body: dict[str, Any], stored: dict[str, Any], exactly: bool) -> bool:
    """Whether the row changes nothing of the stored opportunity; `exactly`: nor does the
    opportunity hold activities the row does not list (an empty cell lists none)."""
    if _changes(body, stored):
        return False
    return not exactly or len(stored.get(ACTIVITIES) or []) == len(body.get(ACTIVITIES) or [])


def _changes(body: dict[str, Any], stored: dict[str, Any]) -> dict[str, Any]:
    """The row's values that differ from the stored opportunity's."""
    return {wire: value for wire, value in body.items() if not same(wire, value, stored)}


def same(wire: str, given: Any, stored: dict[str, Any]) -> bool:
    """Whether a given value equals the stored one, as the API would store it."""
    current = stored.get(wire)
    if wire == ACTIVITIES:  # the opportunity holds each of them (it may hold more)
        return not _missing(given, current)
    kind = FIELDS[wire].type
    if isinstance(kind, MoneyAmount):
        return current is not None and Decimal(str(given)) == Decimal(str(current))
    if isinstance(kind, Timestamp):
        return current is not None and _instant(given) == _instant(current)
    if wire == "contactId":
        return (given or "") == (current or "")
    if wire == "name" and isinstance(given, str) and isinstance(current, str):
        return given.strip() == current.strip()  # as rows are matched
    return bool(given == current)


def _instant(text: Any) -> datetime | None:
    """The instant a timestamp's text names, read as the API reads it (any ISO 8601 form:
    `z`, ordinal and week dates, the basic form), None when it names none."""
    try:
        return parse_iso(str(text).strip())
    except ValueError:
        return None


ACTIVITIES = "activities"


def _missing(
    given: list[dict[str, Any]], stored: list[dict[str, Any]] | None
) -> list[dict[str, Any]]:
    """The row's activities the opportunity does not hold yet: each matched to one stored
    activity of its category, content and time (any time, when the row gives none)."""
    held = list(stored or [])
    missing = []
    for activity in given:
        found = next((i for i, s in enumerate(held) if _same_activity(activity, s)), None)
        if found is None:
            missing.append(activity)
        else:
            held.pop(found)
    return missing


def _same_activity(given: dict[str, Any], stored: dict[str, Any]) -> bool:
    if given.get("categoryType") != stored.get("categoryType"):
        return False
    if (given.get("content") or "").strip() != (stored.get("content") or "").strip():
        return False
    return given.get("date") is None or _instant(given["date"]) == _instant(stored.get("date"))
