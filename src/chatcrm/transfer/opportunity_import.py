"""Importing opportunities. There is no upsert endpoint for them, so the matching is ours
(docs/import.md): a row matches the live opportunity of the same contact with the same
name; a match whose given values all equal the stored ones is unchanged, else it is updated
with the changed fields only; no match is created (creationTypeId 2, "import")."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from chatcrm.opportunities.fields import FIELDS
from chatcrm.records.scalar_types import MoneyAmount, Timestamp
from chatcrm.transfer.bodies import BodyBuilder
from chatcrm.transfer.cells import CellError
from chatcrm.transfer.csv_source import Row
from chatcrm.transfer.outcome import Rejects, Tally
from chatcrm.transfer.problems import RowError
from chatcrm.transfer.progress import RowProgress
from chatcrm.transfer.remote import Remote, error_text

CREATED_BY_IMPORT = 2
# Contacts whose opportunities (or whose id) are kept in memory at once: enough for any
# file grouped by contact, bounded for files that are not.
CACHE_CONTACTS = 10_000

Named = dict[str, dict[str, Any]]


class OpportunityIndex:
    """The live opportunities of a contact by name, listed once (contactId filter) when
    the first row of that contact comes. Opportunities of no contact are listed whole,
    once, the first time a row without a contact comes."""

    def __init__(self, remote: Remote) -> None:
        self.remote = remote
        self.by_contact: OrderedDict[str, Named] = OrderedDict()

    def _named(self, contact_id: str) -> Named:
        named = self.by_contact.get(contact_id)
        if named is not None:
            self.by_contact.move_to_end(contact_id)
            return named
        named = {}
        filters = {"contactId": contact_id} if contact_id else {}
        for page in self.remote.opportunities(filters):
            for record in page:
                if (record.get("contactId") or "") == contact_id:
                    # Newest first: of two with one name, the newest is the one matched.
                    named.setdefault(_key(record["name"]), record)
        self.by_contact[contact_id] = named
        if len(self.by_contact) > CACHE_CONTACTS:
            self.by_contact.popitem(last=False)
        return named

    def find(self, contact_id: str, name: str) -> dict[str, Any] | None:
        return self._named(contact_id).get(_key(name))

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

    def __call__(self, value: str) -> str:
        if value not in self.found:
            self.found[value] = self.remote.find_contact(value)
            if len(self.found) > CACHE_CONTACTS:
                self.found.popitem(last=False)
        contact_id = self.found[value]
        if contact_id is None:
            raise CellError(f'no contact with id, phone or email "{value}"')
        return contact_id


def import_opportunities(
    rows: Iterator[Row],
    builder: BodyBuilder,
    remote: Remote,
    *,
    dry_run: bool,
    tally: Tally,
    rejects: Rejects,
    progress: RowProgress,
) -> None:
    from chatcrm_client import ChatcrmError

    index = OpportunityIndex(remote)
    for row in rows:
        try:
            status = _import_row(row, builder, remote, index, dry_run=dry_run)
        except RowError as exc:
            status = "failed"
            rejects.write(row.cells, str(exc))
        except ChatcrmError as exc:
            status = "failed"
            rejects.write(row.cells, error_text(exc))
        tally.add(status)
        progress.advance(1)


def _import_row(
    row: Row, builder: BodyBuilder, remote: Remote, index: OpportunityIndex, *, dry_run: bool
) -> str:
    body = builder.body(row)
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise RowError([("name", "is required (it matches the row to an opportunity)")])
    existing = index.find(body.get("contactId") or "", name)
    if existing is None:
        if not dry_run:
            index.remember(remote.create_opportunity({**body, "creationTypeId": CREATED_BY_IMPORT}))
        return "created"
    changed = {wire: value for wire, value in body.items() if not same(wire, value, existing)}
    if not changed:
        return "unchanged"
    if not dry_run:
        index.remember(remote.update_opportunity(existing["id"], changed))
    return "updated"


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
