"""Upsert of contacts in batches (contract E.2): each item is matched against the workspace's
live contacts by phone (normalised) or email (any case); a match is updated (the fields
given overwrite, tags and variables given are added), no match is created.

No item costs a round trip of its own. The items are validated in Python; the references,
the matching contacts (row-locked) and the ends of the stage columns are read with a few
statements for the whole batch (contacts/upsert_state.py); the items are decided in order
against that state in memory, so an item sees what the items before it did; the decisions
are then written together — one INSERT and one UPDATE per set of columns, each sent once
per contact, the tag rows, then the events with the records read back in one SELECT.

An item touching a contact that an earlier item of the same round touched starts a new
round, so that each event shows its own version. Each round runs in a savepoint: when a
concurrent writer took a phone or an email meanwhile (a unique index refuses the round),
the round is undone and the remaining items are done one at a time, each in its own
savepoint, an item refused again failing alone. So each item is atomic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import insert

from chatcrm.contacts.errors import DuplicateContact
from chatcrm.contacts.kind import CONTACT
from chatcrm.contacts.upsert_state import Batch, Contact, Op, load_batch
from chatcrm.core.errors import BadRequest, FieldError, ServiceError, require_valid
from chatcrm.core.ids import new_id
from chatcrm.db.database import Connection
from chatcrm.db.errors import UniqueViolation
from chatcrm.db.schema import contact_tags
from chatcrm.events.outbox import NewEvent, write_events
from chatcrm.records import bodies, phones, statements
from chatcrm.records.bodies import Given

MAX_ITEMS = 500
MATCH_BY = ("auto", "phone", "email")
STATUSES = ("created", "updated", "unchanged", "failed")
_KEYS = ("workspaceId", "matchBy", "dryRun", "contacts")
_INSERT_TAG = insert(contact_tags)


@dataclass
class Item:
    """One item of the batch: its validated values, or why it fails before matching."""

    index: int
    given: Given
    errors: list[FieldError]  # fail the item whatever it matches
    missing: list[FieldError]  # required fields absent: fail it only if it creates


@dataclass
class Result:
    index: int
    status: str = "failed"
    id: str | None = None
    errors: list[FieldError] = field(default_factory=list)

    def wire(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "status": self.status,
            "id": self.id,
            "errors": [{"field": e.field, "message": e.message} for e in self.errors],
        }


def read_request(body: dict[str, Any]) -> tuple[str, bool, list[Any]]:
    """`matchBy`, `dryRun` and the items of an upsert body (400 unknown keys, one 422 for
    every bad value)."""
    for key in body:
        if key not in _KEYS:
            raise BadRequest.field(
                key, f"Unexpected body key '{key}'. Accepted keys: {', '.join(sorted(_KEYS))}."
            )
    errors: list[FieldError] = []
    match_by = body.get("matchBy")
    if match_by is None:
        match_by = "auto"
    elif match_by not in MATCH_BY:
        errors.append(FieldError("matchBy", f"must be one of {', '.join(MATCH_BY)}"))
    dry_run = body.get("dryRun")
    if dry_run is None:
        dry_run = False
    elif not isinstance(dry_run, bool):
        errors.append(FieldError("dryRun", "must be true or false"))
    items = body.get("contacts")
    if items is None:
        errors.append(FieldError("contacts", "is required"))
    elif not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS:
        errors.append(
            FieldError("contacts", f"must be an array of 1 to {MAX_ITEMS} contact objects")
        )
    require_valid(errors)
    assert isinstance(items, list)
    return str(match_by), bool(dry_run), items


def _item(index: int, raw: Any, workspace_id: str) -> Item:
    """An item validated as a Create Contact body; the required fields' absence is kept
    apart (an item updating a contact need not name it)."""
    if not isinstance(raw, dict):
        return Item(index, Given(), [FieldError("contact", "must be a JSON object")], [])
    try:
        given = bodies.create_body(CONTACT.fields, raw)
    except ServiceError as exc:  # an unknown key: this item fails, not the batch
        return Item(index, Given(), exc.errors or [FieldError("contact", exc.message)], [])
    absent = {w for w in CONTACT.fields.required if w not in given.clean}
    missing = [e for e in given.errors if e.field in absent and e.message == "is required"]
    errors = [e for e in given.errors if e not in missing]
    if raw.get("workspaceId") not in (None, "", workspace_id):
        errors.append(FieldError("workspaceId", "must be the workspace of the request"))
    return Item(index, given, errors, missing)


async def upsert_batch(
    conn: Connection, *, workspace_id: str, key_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    match_by, dry_run, raw_items = read_request(body)
    keys = phones.phone_keys(CONTACT.fields)
    texts = [raw.get(k) for raw in raw_items if isinstance(raw, dict) for k in keys]
    await phones.read_in_workspace(conn, workspace_id, texts)
    items = [_item(i, raw, workspace_id) for i, raw in enumerate(raw_items)]

    async def run() -> list[Result]:
        await conn.begin()
        # Plans made for this batch's sizes and the tables as they are now: a plan cached
        # while the contacts table was small would scan it once per item.
        await conn.plan_for_values()
        return await _upsert(conn, workspace_id, key_id, items, match_by, dry_run)

    # Contacts are locked in one order, by phone then by email (upsert_state.load_batch);
    # a batch matching X by phone and Y by email and another matching Y by phone and X by
    # email still each hold what the other waits for. The database undoes one, which runs
    # again once the other has committed.
    results = await conn.run_again_when_undone(run)
    counts = dict.fromkeys(STATUSES, 0)
    for result in results:
        counts[result.status] += 1
    return {**counts, "results": [r.wire() for r in results]}


async def _upsert(
    conn: Connection,
    workspace_id: str,
    key_id: str,
    items: list[Item],
    match_by: str,
    dry_run: bool,
) -> list[Result]:
    batch = await load_batch(conn, workspace_id, [i.given for i in items if not i.errors])
    results: dict[int, Result] = {}
    round_: list[tuple[Op, Item]] = []
    for n, item in enumerate(items):
        if item.errors:
            results[item.index] = Result(item.index, errors=item.errors)
            continue
        matched = batch.match(item.given, match_by)
        if matched is not None and matched.id in batch.hidden:
            # An assigned-only agent's item matching a contact it may not see (J.2): as a
            # create would be, refused as a duplicate that names no contact.
            results[item.index] = Result(item.index, errors=_hidden_match(item.given))
            continue
        if matched is not None and any(op.contact is matched for op, _ in round_):
            # Its second change in this batch: the first is written (and its event) first.
            if not await _flush(conn, batch, [op for op, _ in round_]):
                return await _redo(conn, workspace_id, key_id, results, round_, items[n:], match_by)
            round_ = []
        result = Result(item.index)
        results[item.index] = result
        op = await _decide(batch, item, matched, result, key_id)
        if op is not None and not dry_run:
            round_.append((op, item))
    if round_ and not await _flush(conn, batch, [op for op, _ in round_]):
        return await _redo(conn, workspace_id, key_id, results, round_, [], match_by)
    if dry_run:
        # Nothing was written: a contact the run would create has no id, neither where it
        # is created nor where a later item of the batch matches it.
        made = {r.id for r in results.values() if r.status == "created"}
        for result in results.values():
            if result.id in made:
                result.id = None
    return sorted(results.values(), key=lambda r: r.index)


def _hidden_match(given: Any) -> list[FieldError]:
    field = (
        "email"
        if not given.clean.get("internalWhatsappNumber")
        else given.key("internalWhatsappNumber")
    )
    error = DuplicateContact(field, None)
    return list(error.errors or [])


async def _redo(
    conn: Connection,
    workspace_id: str,
    key_id: str,
    results: dict[int, Result],
    round_: list[tuple[Op, Item]],
    rest: list[Item],
    match_by: str,
) -> list[Result]:
    """After a round a unique index refused (a concurrent writer): its items and the rest
    done one at a time, each in its own savepoint and against a state read afresh."""
    again = [item for _, item in round_] + rest
    # Every contact they match locked first, in the one order (load_batch): taken item by
    # item, in this batch's order, a lock would be held while another batch redoing the
    # same contacts in its own order waits for it, and it for that batch's.
    await load_batch(conn, workspace_id, [i.given for i in again if not i.errors])
    for item in again:
        try:
            async with conn.savepoint():
                [result] = await _upsert(conn, workspace_id, key_id, [item], match_by, False)
        except UniqueViolation:
            result = Result(item.index, errors=[FieldError("contact", _RACED)])
        results[item.index] = result
    return sorted(results.values(), key=lambda r: r.index)


_RACED = "another request took its phone or email meanwhile; send it again"


async def _decide(
    batch: Batch, item: Item, matched: Contact | None, result: Result, key_id: str
) -> Op | None:
    """The item's outcome against the batch's state (updated in memory); the write it
    needs, if any."""
    try:
        if matched is None:
            if item.missing:
                result.errors = item.missing
                return None
            op = await batch.create(item.given, record_id=new_id(), key_id=key_id, index=item.index)
            result.status, result.id = "created", op.contact.id
            return op
        result.id = matched.id
        update = batch.update(matched, item.given, index=item.index)
    except ServiceError as exc:  # a duplicate (409) or invalid values (422): this item only
        result.errors = exc.errors or [FieldError("contact", exc.message)]
        return None
    result.status = "unchanged" if update is None else "updated"
    return update


async def _flush(conn: Connection, batch: Batch, ops: list[Op]) -> bool:
    """Write a round's decisions and their events; False when a unique index refused
    them (the round is undone)."""
    now = batch.now
    try:
        async with conn.savepoint():
            # New contacts inserted in one order, by phone then email, as existing ones
            # are locked: two batches creating the same contacts in other orders would
            # each take a key the other then waits for (a deadlock, the batch undone).
            creates = sorted((o for o in ops if o.created), key=_insert_order)
            if creates:
                await statements.insert_records(conn, CONTACT, [o.columns for o in creates])
            await statements.update_records(
                conn,
                CONTACT,
                batch.workspace_id,
                [(o.contact.id, o.columns) for o in ops if not o.created],
            )
            tag_rows = [
                {
                    "workspace_id": batch.workspace_id,
                    "contact_id": o.contact.id,
                    "tag_id": tag_id,
                    "position": position,
                    "assigned_at": now,
                }
                for o in ops
                for tag_id, position in o.new_tags
            ]
            if tag_rows:
                await conn.executemany(_INSERT_TAG, tag_rows)
            views = {
                v.id: v
                for v in await statements.get_any(
                    conn,
                    CONTACT,
                    batch.workspace_id,
                    [o.contact.id for o in ops],
                    CONTACT.written_shape,
                )
            }
            await write_events(
                conn,
                [
                    NewEvent(
                        workspace_id=batch.workspace_id,
                        type="contact.created" if o.created else "contact.updated",
                        record_id=o.contact.id,
                        record_version=views[o.contact.id].version,
                        changed=o.changed,
                        data=views[o.contact.id].record,
                        now=now,
                    )
                    for o in ops
                ],
            )
    except UniqueViolation:
        return False
    return True


def _insert_order(op: Op) -> tuple[str, str]:
    columns = op.columns
    return (columns.get("internal_whatsapp_number") or "", columns.get("email_key") or "")
