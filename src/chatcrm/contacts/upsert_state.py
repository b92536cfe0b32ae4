"""What an upsert batch decides against (contacts/upsert.py): the live contacts its items may
match or collide with, read once and row-locked, then kept up to date in memory as each
item is decided in order; the references the items name; the ends of the stage columns.

The rules are the contact field table's (contacts/fields.py): a field's column, its stamps,
its effect (a stage move takes the end of the new column; variables merge by name) and its
after-write (tags). An upsert adds the tags it gives rather than replacing the set.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import ARRAY, Select, Text, any_, bindparam, func, select, true

from chatcrm.contacts.errors import DuplicateContact
from chatcrm.contacts.fields import FIELDS, PLATFORM_WHATSAPP
from chatcrm.contacts.kind import CONTACT
from chatcrm.contacts.rules import MERGE_VARIABLES, TAGS, merged_variables
from chatcrm.contacts.table import contacts
from chatcrm.core import values as v
from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.ids import is_id
from chatcrm.core.jsontext import load_exact, to_text
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import agents, contact_tags, segmentations, stages, tags
from chatcrm.records import statements, visibility
from chatcrm.records.bodies import Given
from chatcrm.records.defaults import Creation
from chatcrm.records.references import not_in_workspace
from chatcrm.records.stages import STAGE_MOVE, first_stage, no_stage
from chatcrm.records.writing import fill

PHONE, EMAIL = "internalWhatsappNumber", "email"
_PHONE_COLUMN, _EMAIL_KEY = "internal_whatsapp_number", "email_key"
# What a given field may do beyond its own column, and how an upsert does it.
_HANDLED_EFFECTS = (MERGE_VARIABLES, STAGE_MOVE)
for _f in FIELDS:
    if _f.create is not None:
        assert _f.effect in (None, *_HANDLED_EFFECTS), f"upsert: {_f.wire}'s effect"
        assert _f.after in (None, TAGS), f"upsert: {_f.wire}'s after-write"


@dataclass
class Contact:
    """A live contact as the batch sees it: its stored columns, its tags in order."""

    id: str
    columns: dict[str, Any]
    tags: dict[str, None]  # tag ids, in order (an ordered set)


@dataclass
class Op:
    """The write an item needs: a whole new row, or the columns of an update."""

    index: int
    contact: Contact
    created: bool
    columns: dict[str, Any]
    new_tags: list[tuple[str, int]] = field(default_factory=list)  # (tag id, position)
    changed: list[str] = field(default_factory=list)  # the update event's `changed`


c = contacts.c


@cache
def _candidates(dialect: str, column: str) -> Select[Any]:
    """The live contacts holding any of `_values` in `column` (phone, email key)."""
    live = (c.workspace_id == bindparam("_ws"), c.deleted_at.is_(None))
    if dialect == "sqlite":
        return select(contacts).where(*live, in_id_list(c[column], "_values", dialect))
    # One index lookup per value, whatever the planner's statistics say: `= ANY(array)`
    # may be planned as a filter over the whole workspace (seen with no statistics yet).
    # The LIMIT keeps the subquery from being flattened into a join; the value is unique
    # among live contacts.
    values = (
        func.unnest(bindparam("_values", type_=ARRAY(Text)))
        .table_valued("value")
        .render_derived(name="v")
    )
    one = select(contacts).where(*live, c[column] == values.c.value).limit(1).lateral("found")
    return select(one).select_from(values).join(one, true())


@cache
def _lock_in_order() -> Select[Any]:
    """PostgreSQL: the contacts `_ids` locked (FOR UPDATE) one after the other in id order:
    the rows a batch writes stay as read until it commits, and two batches holding some of
    the same contacts wait for each other in one order, never each for the other."""
    return (
        select(c.id)
        .where(
            c.workspace_id == bindparam("_ws"), c.id == any_(bindparam("_ids", type_=ARRAY(Text)))
        )
        .order_by(c.id)
        .with_for_update()
    )


@cache
def _tags_of(dialect: str) -> Select[Any]:
    ct = contact_tags.c
    return (
        select(ct.contact_id, ct.tag_id)
        .where(ct.workspace_id == bindparam("_ws"), in_id_list(ct.contact_id, "_ids", dialect))
        .order_by(ct.contact_id, ct.position)
    )


@cache
def _known(dialect: str, target: str) -> Select[Any]:
    table = {"stage": stages, "agent": agents, "segmentation": segmentations, "tag": tags}[target]
    statement = select(table.c.id).where(
        table.c.workspace_id == bindparam("_ws"), in_id_list(table.c.id, "_ids", dialect)
    )
    if target == "stage":
        statement = statement.where(stages.c.kind == CONTACT.name)
    return statement


class Batch:
    """The state one batch's items are decided against."""

    def __init__(self, workspace_id: str, now: datetime) -> None:
        self.workspace_id = workspace_id
        self.now = now
        self.by_phone: dict[str, Contact] = {}
        self.by_email: dict[str, Contact] = {}
        self.known: dict[str, set[str]] = {}  # reference target → ids of the workspace
        self.first_stage: str | None = None
        self.ends: dict[str, int] = {}  # stage id → the next card position of its column
        # Matches an assigned-only agent may not see (J.2): never updated by its upsert,
        # and never named by its refusals.
        self.hidden: set[str] = set()

    # --- matching ------------------------------------------------------------------------

    def match(self, given: Given, match_by: str) -> Contact | None:
        """`phone`, `email`, or `auto`: the phone when the item has one, else the email."""
        phone, email = given.clean.get(PHONE) or None, given.clean.get(EMAIL) or None
        if match_by == "phone" or (match_by == "auto" and phone):
            return self.by_phone.get(phone) if phone else None
        return self.by_email.get(email.lower()) if email else None

    def _register(self, contact: Contact, old: dict[str, Any]) -> None:
        """Keep the phone and email maps true after a contact's columns changed."""
        for index, column in ((self.by_phone, _PHONE_COLUMN), (self.by_email, _EMAIL_KEY)):
            before, after = old.get(column), contact.columns.get(column)
            if before and index.get(before) is contact:
                del index[before]
            if after:
                index[after] = contact

    def _check_unique(self, contact_id: str, given: Given, columns: dict[str, Any]) -> None:
        for index, column, wire in (
            (self.by_phone, _PHONE_COLUMN, PHONE),
            (self.by_email, _EMAIL_KEY, EMAIL),
        ):
            value = columns.get(column)
            owner = index.get(value) if value else None
            if owner is not None and owner.id != contact_id:
                named = None if owner.id in self.hidden else owner.id
                raise DuplicateContact(given.key(wire) if wire == PHONE else wire, named)

    def _check_references(self, given: Given) -> None:
        errors: list[FieldError] = []
        for wire, value in given.clean.items():
            target = FIELDS[wire].references
            if target is None or value is None:
                continue
            known, key = self.known.get(target, set()), given.key(wire)
            if target == "tag":
                message = not_in_workspace("tag", stage_kind="")
                errors += [FieldError(f"{key}[{i}]", message) for i, t in enumerate(value)
                           if t not in known]  # fmt: skip
            elif value not in known:
                errors.append(FieldError(key, not_in_workspace(target, stage_kind=CONTACT.name)))
        if errors:
            raise ValidationFailed(errors)

    def _take_end(self, stage_id: str) -> int:
        position = self.ends.get(stage_id, 0)
        self.ends[stage_id] = statements.after_card(position)
        return position

    # --- decisions -----------------------------------------------------------------------

    async def create(self, given: Given, *, record_id: str, key_id: str, index: int) -> Op:
        """A new contact, as Create Contact would make it (its rules, its defaults)."""
        self._check_references(given)
        checked = Given(clean=dict(given.clean), keys=given.keys)
        CONTACT.check_create(checked)
        if checked.errors:
            raise ValidationFailed(checked.errors)
        stage_id = given.clean.get("stageId") or self.first_stage
        if stage_id is None:
            raise no_stage(CONTACT.name)
        # Given here, the stage and the card position need no read of their own.
        checked.clean.update(stageId=stage_id, orderInCards=self._take_end(stage_id))
        creation = Creation(
            conn=None,
            workspace_id=self.workspace_id,
            record_id=record_id,
            key_id=key_id,
            now=self.now,
            values={},
            kind=CONTACT,
        )
        await fill(FIELDS, checked, creation)
        columns: dict[str, Any] = {
            "version": 1,
            "modified_at": self.now,
            **CONTACT.hidden_defaults(checked),
        }
        for f in FIELDS:
            columns.update(f.store(creation.values[f.wire]))
        self._check_unique(record_id, given, columns)
        tag_ids = list(dict.fromkeys(creation.values["tags"] or ()))
        contact = Contact(record_id, columns, dict.fromkeys(tag_ids))
        self._register(contact, {})
        return Op(index, contact, True, columns, [(t, i) for i, t in enumerate(tag_ids)])

    def update(self, contact: Contact, given: Given, *, index: int) -> Op | None:
        """The matched contact with the item's fields: given values overwrite, tags and
        variables are added; None when nothing would change."""
        self._check_references(given)
        columns: dict[str, Any] = {}
        named: dict[str, Any] = {}  # the fields that change, for the event's `changed`
        new_tags: list[tuple[str, int]] = []
        for wire, value in given.clean.items():
            f = FIELDS[wire]
            if f.after is TAGS:
                added = [t for t in dict.fromkeys(value) if t not in contact.tags]
                start = len(contact.tags)
                if start + len(added) > v.TAGS_MAX:  # as a create or an update refuses
                    message = f"a contact can hold at most {v.TAGS_MAX} tags"
                    raise ValidationFailed([FieldError(wire, message)])
                new_tags = [(t, start + i) for i, t in enumerate(added)]
                if added:
                    named[wire] = value
                continue
            if f.effect is MERGE_VARIABLES:
                column = str(f.column)
                merged = _merged_variables(contact.columns[column], value)
                if merged is not None:
                    columns[column], named[wire] = merged, value
                continue
            stored = f.store(value)
            if f.column is None or all(contact.columns.get(k) == x for k, x in stored.items()):
                continue
            columns.update(stored)
            named[wire] = value
            for stamped in f.stamps:
                columns[str(FIELDS[stamped].column)] = self.now
            if f.effect is STAGE_MOVE:
                columns["order_in_cards"] = self._take_end(value)
                columns["order_in_cards_updated_at"] = self.now
        if not named:
            return None
        # The channel rule of a create holds for what the item leaves (docs/api.md 2.30):
        # a contact made a WhatsApp one keeps a number to be reached at.
        after = {**contact.columns, **columns}
        if after.get("platform_id") == PLATFORM_WHATSAPP and not after.get(
            "internal_whatsapp_number"
        ):
            message = f"is required for WhatsApp contacts (platformId {PLATFORM_WHATSAPP})"
            raise ValidationFailed([FieldError(given.key("internalWhatsappNumber"), message)])
        self._check_unique(contact.id, given, columns)
        columns["modified_at"] = self.now
        columns.update(dict.fromkeys(CONTACT.touch, self.now))
        old = dict(contact.columns)
        contact.columns.update(columns)
        contact.tags.update(dict.fromkeys(t for t, _ in new_tags))
        self._register(contact, old)
        changed = FIELDS.changed(named, columns=columns)
        return Op(index, contact, False, columns, new_tags, changed)


def _merged_variables(stored: str, given: list[dict[str, Any]]) -> str | None:
    """The stored variables with the given ones set by name (JSON text), or None when
    that changes nothing. Compared as JSON text, numbers as written: a number is kept
    exactly as sent (docs/api.md 3.4), so `3.0` over a stored `3` changes it, as Update
    Contact stores it; `true` is never `1`."""
    merged = to_text(merged_variables(stored, given))
    return None if merged == to_text(load_exact(stored)) else merged


async def load_batch(conn: Connection, workspace_id: str, givens: list[Given]) -> Batch:
    """The state of a batch of valid items: a few statements, whatever its size."""
    batch = Batch(workspace_id, utcnow())
    ws, dialect = workspace_id, conn.dialect
    phones = sorted({p for g in givens if (p := g.clean.get(PHONE))})
    emails = sorted({e.lower() for g in givens if (e := g.clean.get(EMAIL))})

    async def matched() -> dict[str, dict[str, Any]]:
        rows: dict[str, dict[str, Any]] = {}
        for column, values in ((_PHONE_COLUMN, phones), (_EMAIL_KEY, emails)):
            if values:
                params = {"_ws": ws, "_values": id_list(values, dialect)}
                found = await conn.fetch(_candidates(dialect, column), params)
                rows.update({row["id"]: dict(row) for row in found})
        return rows

    rows = await matched()
    if dialect == "postgresql":
        # Locked in id order, whatever the items' order or what matched them (two batches
        # locking as they matched, one X by phone then Y by email, the other Y by phone
        # then X by email, would each hold what the other waits for: a deadlock), then
        # read again as they now stay. A contact that came to match in between is locked
        # in a round of its own; a deadlock that still happens is undone and the batch
        # runs again (upsert.upsert_batch).
        locked: set[str] = set()
        while unlocked := sorted(rows.keys() - locked):
            await conn.fetch(_lock_in_order(), {"_ws": ws, "_ids": unlocked})
            locked.update(unlocked)
            rows = await matched()
    tagged: dict[str, dict[str, None]] = {contact_id: {} for contact_id in rows}
    if rows:
        params = {"_ws": ws, "_ids": id_list(list(rows), dialect)}
        for row in await conn.fetch(_tags_of(dialect), params):
            tagged[row["contact_id"]][row["tag_id"]] = None
    for contact_id, row in rows.items():
        batch._register(Contact(contact_id, row, tagged[contact_id]), {})
    if visibility.current() is not None:
        batch.hidden = {
            contact_id
            for contact_id in rows
            if not await visibility.sees(conn, CONTACT, workspace_id, contact_id)
        }
    wanted: dict[str, set[str]] = {
        "stage": set(),
        "agent": set(),
        "segmentation": set(),
        "tag": set(),
    }
    for g in givens:
        for wire, value in g.clean.items():
            target = FIELDS[wire].references
            if target is not None and value is not None:
                wanted[target].update(value if target == "tag" else [value])
    for target, ids in wanted.items():
        valid = [i for i in ids if is_id(i)]
        found_ids: set[str] = set()
        if valid:
            params = {"_ws": ws, "_ids": id_list(valid, dialect)}
            found_ids = {r["id"] for r in await conn.fetch(_known(dialect, target), params)}
        batch.known[target] = found_ids
    if any(not g.clean.get("stageId") for g in givens):
        batch.first_stage = await first_stage(conn, ws, CONTACT.name)
    columns = [s for s in [*batch.known["stage"], batch.first_stage] if s is not None]
    batch.ends = await statements.next_card_positions(conn, CONTACT, ws, columns)
    return batch
