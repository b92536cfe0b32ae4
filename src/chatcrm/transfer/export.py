"""Exporting contacts or opportunities in exactly the columns an import reads: stages,
agents, segmentations and tags by name (agents by email), an opportunity's contact by its
phone (else its email), so that importing the file into another workspace with the same
names reproduces the records (ids aside). Read page by page, written row by row."""

from __future__ import annotations

import csv
import heapq
import json
import tempfile
from collections.abc import Iterator
from itertools import pairwise
from typing import Any, TextIO

from chatcrm.transfer.cells import (
    ACTIVITY_KEYS,
    escaped_item,
    guarded,
    variable_text,
    write_cell,
)
from chatcrm.transfer.columns import VARIABLE_PREFIX, Column, RecordColumns, Role
from chatcrm.transfer.names import Lookup, WorkspaceNames
from chatcrm.transfer.progress import RowProgress
from chatcrm.transfer.remote import Remote
from chatcrm_client._wire import dumps as exact_json

# Stored as digits with their country code; written with a '+', so that a workspace whose
# defaultCountry would read bare digits as a national number reads them the same (N).
PHONE_FIELDS = frozenset({"internalWhatsappNumber", "platformSenderPhone"})


def international(digits: str) -> str:
    return f"+{digits}"


class RowWriter:
    """A record (full shape) → its values by column, as JSON values (`typed`, for JSON
    lines) or as cell texts (CSV)."""

    def __init__(
        self,
        columns: RecordColumns,
        names: WorkspaceNames,
        stages: Lookup,
        contacts: dict[str, str] | None = None,
    ) -> None:
        self.columns = [columns.named[name] for name in columns.export_names]
        self.names = names
        self.stages = stages
        self.contacts = contacts or {}

    def values(self, record: dict[str, Any], *, typed: bool) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for column in self.columns:
            value = self._value(column, record)
            if column.role is Role.ACTIVITIES:  # one JSON cell (cells.read_activities)
                out[column.name] = value if typed else (exact_json(value).decode() if value else "")
            else:
                out[column.name] = value if typed else write_cell(value)
        for variable in record.get("variables") or []:
            value = variable.get("value")
            if typed:  # JSON lines: the name as it is
                out[VARIABLE_PREFIX + variable["name"]] = value
            else:  # a header: blanks at the name's edges escaped, as import reads them
                out[VARIABLE_PREFIX + escaped_item(variable["name"])] = variable_text(value)
        return out

    def _value(self, column: Column, record: dict[str, Any]) -> Any:
        value = record.get(column.wire)
        role = column.role
        if role is Role.STAGE:
            return self.stages.shown(value)
        if role is Role.AGENT:
            return self.names.agents.shown(value)
        if role is Role.SEGMENTATION:
            return self.names.segmentations.shown(value)
        if role is Role.CONTACT:
            return self.contacts.get(value, value) if value else ""
        if role is Role.ACTIVITIES:
            # What an activity is created with; its id and author are this workspace's.
            return [{k: a.get(k) for k in ACTIVITY_KEYS} for a in value or []]
        if role is Role.TAGS:
            # By name (ids differ in another workspace); a `;` in one is escaped (cells).
            return [tag["name"] for tag in value or []]
        if column.wire in PHONE_FIELDS and value:
            return international(value)
        if column.wire == "finalAmount" and value == record.get("amount"):
            # Left empty: it follows the amount again in the workspace it is imported into.
            return None
        return value


def contact_labels(remote: Remote) -> dict[str, str]:
    """Each contact's id → its phone, else its email (what an opportunity's `contact`
    column holds). One pass over the contacts, the smallest thing kept per contact."""
    labels: dict[str, str] = {}
    for page in remote.contacts({}):
        for contact in page:
            phone = contact.get("internalWhatsappNumber")
            label = international(phone) if phone else contact.get("email")
            if label:
                labels[contact["id"]] = label
    return labels


def write_jsonl(records: Iterator[dict[str, Any]], writer: RowWriter, out: TextIO) -> int:
    count = 0
    for record in records:
        values = writer.values(record, typed=True)
        # Money arrives as Decimal (never through float on the way in) and leaves as the
        # same digits: the SDK's own writer of request bodies (a float would round it).
        out.write(exact_json(values).decode("utf-8") + "\n")
        count += 1
    return count


def write_csv(
    records: Iterator[dict[str, Any]], writer: RowWriter, out: TextIO, *, variables: bool
) -> int:
    """CSV needs its header first, and the var: columns are known only at the end: the rows
    go to a temporary file (not memory) on the way when the records have variables."""
    fixed = [column.name for column in writer.columns]
    if not variables:
        sink = csv.DictWriter(out, fieldnames=fixed, extrasaction="ignore")
        sink.writeheader()
        count = 0
        for record in records:
            sink.writerow(_guarded(writer.values(record, typed=False)))
            count += 1
        return count
    order = VariableOrder()
    count = 0
    with tempfile.TemporaryFile("w+", encoding="utf-8") as spool:
        for record in records:
            row = writer.values(record, typed=False)
            order.add([name for name in row if name.startswith(VARIABLE_PREFIX)])
            spool.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
        spool.seek(0)
        sink = csv.DictWriter(out, fieldnames=[*fixed, *order.columns()], restval="")
        sink.writeheader()
        for line in spool:
            sink.writerow(_guarded(json.loads(line)))
    return count


def _guarded(row: dict[str, Any]) -> dict[str, Any]:
    """A CSV row's text cells with a formula's start behind a `'` (cells.guarded)."""
    return {k: guarded(v) if isinstance(v, str) else v for k, v in row.items()}


def records(
    pages: Iterator[list[dict[str, Any]]], progress: RowProgress
) -> Iterator[dict[str, Any]]:
    for page in pages:
        yield from page
        progress.advance(len(page))


class VariableOrder:
    """The var: columns in an order that keeps each record's own order of its variables
    wherever the records agree (import adds a row's variables in column order, so export
    then import gives each record its variables back in order): a name comes after every
    name some record holds before it; names no record orders, and records that disagree
    (one holds `a, b`, another `b, a`), go by first appearance."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}  # name → rank of its first appearance
        self.after: dict[str, set[str]] = {}  # name → the names some record holds next

    def add(self, names: list[str]) -> None:
        for name in names:
            self.first.setdefault(name, len(self.first))
            self.after.setdefault(name, set())
        for before, name in pairwise(names):
            self.after[before].add(name)

    def columns(self) -> list[str]:
        waiting = dict.fromkeys(self.first, 0)  # name → how many names must come first
        for names in self.after.values():
            for name in names:
                waiting[name] += 1
        ready = [(rank, name) for name, rank in self.first.items() if not waiting[name]]
        heapq.heapify(ready)
        out: list[str] = []
        placed: set[str] = set()
        while len(out) < len(self.first):
            if not ready:  # records disagree: the earliest name not placed breaks the tie
                name = min((n for n in self.first if n not in placed), key=self.first.__getitem__)
                heapq.heappush(ready, (self.first[name], name))
            _, name = heapq.heappop(ready)
            if name in placed:
                continue
            placed.add(name)
            out.append(name)
            for following in self.after[name]:
                waiting[following] -= 1
                if not waiting[following] and following not in placed:
                    heapq.heappush(ready, (self.first[following], following))
        return out
