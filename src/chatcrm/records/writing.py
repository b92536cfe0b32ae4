"""Creating, reading, updating and deleting records of any kind, on the request's connection.

The order of the checks is the contract's (docs/api.md 1.9): body structure (400), values
(422, all collected), the record (404), `If-Match` (412), references (422, all collected),
the kind's own rules (409 duplicates), then the write.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import bindparam, select

from chatcrm.core.errors import require_valid
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.jsontext import to_text
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db.database import Connection
from chatcrm.db.errors import UniqueViolation
from chatcrm.events.outbox import new_event_id, write_event
from chatcrm.records import bodies, phones, statements
from chatcrm.records.bodies import Given
from chatcrm.records.changes import Change
from chatcrm.records.conditional import check_if_match, explain_unmatched, simple_if_match
from chatcrm.records.defaults import Creation, Default
from chatcrm.records.evented_update import update_with_event
from chatcrm.records.fields import FieldTable
from chatcrm.records.kind import RecordKind, Write
from chatcrm.records.references import References
from chatcrm.records.statements import View


async def get(
    conn: Connection, kind: RecordKind, workspace_id: str, record_id: str, *, shape: str
) -> View:
    """A live record in a shape; the kind's 404 otherwise."""
    if not is_id(record_id):
        raise kind.not_found(record_id)
    view = await statements.get(conn, kind, workspace_id, record_id, shape)
    if view is None:
        raise kind.not_found(record_id)
    return view


async def check_references(
    conn: Connection, kind: RecordKind, workspace_id: str, given: Given
) -> None:
    """Every id the body names must be a record of the workspace (one 422 for all)."""
    refs = References(conn, workspace_id, records=kind.linked)
    for wire, value in given.clean.items():
        target = kind.fields[wire].references
        if target is not None:
            await refs.check(target, given.key(wire), value, stage_kind=kind.name)
    refs.raise_errors()


# --- create ------------------------------------------------------------------------------


async def create(
    conn: Connection,
    kind: RecordKind,
    *,
    workspace_id: str,
    key_id: str,
    body: dict[str, Any],
    overrides: dict[str, Any] | None = None,
) -> View:
    """`overrides`: values of fields no body may set, for records the service itself makes
    (a contact created by a channel is not `isManuallyAdded`)."""
    await phones.read_body_in_workspace(conn, workspace_id, kind.fields, body)
    given = bodies.create_body(kind.fields, body)
    kind.check_create(given)
    require_valid(given.errors)
    now = utcnow()
    record_id = new_id()
    await conn.begin()
    await check_references(conn, kind, workspace_id, given)
    creation = Creation(
        conn=conn,
        workspace_id=workspace_id,
        record_id=record_id,
        key_id=key_id,
        now=now,
        values={},
        kind=kind,
    )
    await fill(kind.fields, given, creation)
    creation.values.update(overrides or {})
    write = Write(workspace_id, record_id, given, now, created=True)
    await kind.before_write(conn, write)
    columns: dict[str, Any] = {"version": 1, "modified_at": now, **kind.hidden_defaults(given)}
    for f in kind.fields:
        columns.update(f.store(creation.values[f.wire]))
    try:
        await statements.insert_record(conn, kind, columns)
    except UniqueViolation:
        await conn.recover()
        await kind.explain_conflict(conn, write)
        raise
    for f in kind.fields:
        if f.after is not None:
            await f.after.write(creation, creation.values[f.wire], created=True)
    view = await get(conn, kind, workspace_id, record_id, shape=kind.written_shape)
    await record_event(conn, kind, "created", workspace_id, view, now=now)
    return view


async def record_event(
    conn: Connection,
    kind: RecordKind,
    what: str,
    workspace_id: str,
    view: View,
    *,
    now: datetime,
    changed: list[str] | None = None,
) -> None:
    """The outbox event of a change of a record (`contact.created`, …), in its transaction;
    `data` is the record as the change answers it, `recordVersion` its version after."""
    await write_event(
        conn,
        workspace_id=workspace_id,
        type=f"{kind.name}.{what}",
        record_id=view.id,
        record_version=view.version,
        changed=changed or [],
        data=view.record,
        now=now,
    )


async def fill(fields: FieldTable, given: Given, creation: Creation) -> None:
    """Every field's value: given, or its default (computed ones in their order)."""
    values = creation.values
    later: list[tuple[int, str, Default]] = []
    for f in fields:
        if f.wire in given.clean:
            values[f.wire] = given.clean[f.wire]
        elif isinstance(f.default, Default):
            later.append((f.default.order, f.wire, f.default))
        else:
            default = f.default
            values[f.wire] = list(default) if isinstance(default, list) else default
    for _, wire, default in sorted(later, key=lambda item: item[0]):
        values[wire] = await default.value(creation)


# --- update ------------------------------------------------------------------------------


async def update(
    conn: Connection,
    kind: RecordKind,
    *,
    workspace_id: str,
    record_id: str,
    body: dict[str, Any],
    if_match: str | None,
) -> View:
    names = bodies.update_names(kind.fields, body, record_id=record_id, implicit=True)
    await phones.read_body_in_workspace(conn, workspace_id, kind.fields, body)
    given = bodies.update_values(kind.fields, names, body)
    kind.check_update(given)
    require_valid(given.errors)
    if not is_id(record_id):
        raise kind.not_found(record_id)
    now = utcnow()
    write = Write(workspace_id, record_id, given, now, created=False)
    simple, version = simple_if_match(if_match)
    try:
        if simple and kind.fields.all_direct(names):
            if conn.dialect == "postgresql" and not await conn.is_citus():
                done = await _update_with_event(conn, kind, write, version, if_match)
                if done is not None:
                    return done
                # Changed by another request while the statement waited for its row: the
                # locked path renders the record as it is once locked.
                view, change = await _update_under_lock(conn, kind, write, if_match)
            else:
                view, change = await _update_directly(conn, kind, write, version, if_match)
        else:
            view, change = await _update_under_lock(conn, kind, write, if_match)
    except UniqueViolation:
        # A concurrent writer got there first, or a one-statement update hit a unique
        # index: the kind names the conflict (409), after the failed statement is undone.
        await conn.recover()
        await kind.explain_conflict(conn, write)
        raise
    fields, clean = kind.fields, write.given.clean
    changed = fields.changed(
        clean, columns=change.columns, by_statement=await _set_by_statement(conn, kind, write)
    )
    await record_event(conn, kind, "updated", workspace_id, view, now=now, changed=changed)
    return view


async def _set_by_statement(conn: Connection, kind: RecordKind, write: Write) -> list[str]:
    """What an SQL expression of the update set. An effect decided by a stored flag
    (finalAmount following amount until it is set) is told by the flag, read in this
    transaction after the update: the values alone cannot tell a finalAmount that followed
    from one set apart to the same value."""
    fields, clean = kind.fields, write.given.clean
    flagged = [e for w in clean if (e := fields[w].effect) and e.statement_flag is not None]
    if not flagged or flagged[0].statement_flag is None:
        return []
    t = kind.table
    holds = await conn.fetchrow(
        select(flagged[0].statement_flag(t.c).label("holds")).where(
            t.c.workspace_id == bindparam("_ws"), t.c.id == bindparam("_id")
        ),
        {"_ws": write.workspace_id, "_id": write.record_id},
    )
    return list(flagged[0].sets) if holds is not None and holds["holds"] else []


async def _change(
    conn: Connection, kind: RecordKind, write: Write, *, current: dict[str, Any] | None
) -> Change:
    """The columns an update writes: the named fields' own, their stamps, the kind's
    touched columns, then what each field's effect sets."""
    change = Change(
        conn=conn,
        kind=kind,
        workspace_id=write.workspace_id,
        record_id=write.record_id,
        clean=write.given.clean,
        now=write.now,
        current=current,
    )
    fields = kind.fields
    for wire, value in change.clean.items():
        f = fields[wire]
        change.columns.update(f.store(value))
        for stamped in f.stamps:
            column = fields[stamped].column
            assert column is not None, f"{wire} stamps {stamped}, which has no column"
            change.columns[column] = change.now
    change.columns["modified_at"] = change.now
    for column in kind.touch:
        change.columns[column] = change.now
    for wire in change.clean:
        effect = fields[wire].effect
        if effect is not None:
            await effect.apply(change)
    return change


async def _update_directly(
    conn: Connection, kind: RecordKind, write: Write, version: int | None, if_match: str | None
) -> tuple[View, Change]:
    """Fields whose columns follow from the request alone (most bot updates: a name, a
    flag, the last message, an amount): one UPDATE … RETURNING (then its event), with no
    read before it. A row not matched is explained by a read (404 or 412)."""
    change = await _change(conn, kind, write, current=None)
    await conn.begin()
    view = await statements.update_record(
        conn,
        kind,
        write.workspace_id,
        write.record_id,
        change.columns,
        expressions=change.expressions,
        params=change.params,
        version=version,
        returning=kind.written_shape,
    )
    if view is None:
        record_id = write.record_id
        current = await statements.get(conn, kind, write.workspace_id, record_id, kind.read_shape)
        explain_unmatched(current, if_match, kind.not_found(record_id))
    assert view is not None
    return view, change


async def _update_with_event(
    conn: Connection, kind: RecordKind, write: Write, version: int | None, if_match: str | None
) -> View | None:
    """`_update_directly` and its event as one statement (PostgreSQL, records/evented_update.py).
    None: the record changed between the statement's snapshot and its row lock, and
    nothing was written (the caller takes the locked path)."""
    change = await _change(conn, kind, write, current=None)
    fields, clean = kind.fields, write.given.clean
    flagged = [e for w in clean if (e := fields[w].effect) and e.statement_flag is not None]
    assert len(flagged) <= 1, "one effect decided inside the statement at most"
    event = {
        "_event_id": new_event_id(),
        "_event_type": f"{kind.name}.updated",
        "_created": iso(write.now),
        "_event_at": write.now,
        "_changed": to_text(fields.changed(clean, columns=change.columns)),
    }
    if flagged:
        sets = flagged[0].sets
        event["_changed_flagged"] = to_text(
            fields.changed(clean, columns=change.columns, by_statement=sets)
        )
    view = await update_with_event(
        conn,
        kind,
        workspace_id=write.workspace_id,
        record_id=write.record_id,
        columns=change.columns,
        expressions=change.expressions,
        params=change.params,
        version=version,
        shape=kind.written_shape,
        event=event,
        flag=flagged[0].statement_flag if flagged else None,
    )
    if view is None:
        record_id = write.record_id
        current = await statements.get(conn, kind, write.workspace_id, record_id, kind.read_shape)
        if current is None or version is not None:
            explain_unmatched(current, if_match, kind.not_found(record_id))
        return None  # a live record changed meanwhile: nothing was written
    conn.wrote_events = True
    return view


async def _update_under_lock(
    conn: Connection, kind: RecordKind, write: Write, if_match: str | None
) -> tuple[View, Change]:
    """Fields whose rules read the stored record or the database (stage moves, solved,
    tags, references…): the record is row-locked for the time of the update."""
    record_id = write.record_id
    await conn.begin()
    current = await statements.lock(conn, kind, write.workspace_id, record_id)
    if current is None:
        raise kind.not_found(record_id)
    check_if_match(if_match, current["version"])
    await check_references(conn, kind, write.workspace_id, write.given)
    await kind.before_write(conn, write)
    change = await _change(conn, kind, write, current=current)
    await statements.update_record(
        conn,
        kind,
        write.workspace_id,
        record_id,
        change.columns,
        expressions=change.expressions,
        params=change.params,
    )
    for wire, value in change.clean.items():
        after = kind.fields[wire].after
        if after is not None:
            await after.write(change, value, created=False)
    view = await get(conn, kind, write.workspace_id, record_id, shape=kind.written_shape)
    return view, change


# --- delete ------------------------------------------------------------------------------


async def delete_one(
    conn: Connection,
    kind: RecordKind,
    *,
    workspace_id: str,
    record_id: str,
    key_id: str,
    if_match: str | None,
) -> None:
    """Soft delete of one record, under its row lock (`If-Match` applies)."""
    if not is_id(record_id):
        raise kind.not_found(record_id)
    await conn.begin()
    current = await statements.lock(conn, kind, workspace_id, record_id)
    if current is None:
        raise kind.not_found(record_id)
    check_if_match(if_match, current["version"])
    await delete(conn, kind, workspace_id=workspace_id, record_ids=[record_id], key_id=key_id)


async def delete(
    conn: Connection,
    kind: RecordKind,
    *,
    workspace_id: str,
    record_ids: list[str],
    key_id: str,
    now: datetime | None = None,
) -> set[str]:
    """Soft delete: the rows stay (nothing is lost) but leave every read and list; each
    deleted record's event shows it as deleted."""
    now = now or utcnow()
    deleted = await statements.soft_delete(
        conn, kind, workspace_id, [i for i in record_ids if is_id(i)], key_id=key_id, now=now
    )
    # In the order asked, so a batch's events follow its body.
    ordered = [i for i in dict.fromkeys(record_ids) if i in deleted]
    views = {
        v.id: v
        for v in await statements.get_any(conn, kind, workspace_id, ordered, kind.written_shape)
    }
    for record_id in ordered:
        await record_event(conn, kind, "deleted", workspace_id, views[record_id], now=now)
    return deleted
