"""Creating, reading, updating and deleting records of any kind, on the request's connection.

The order of the checks is the contract's (docs/api.md 1.9): body structure (400), values
(422, all collected), the record (404), `If-Match` (412), references (422, all collected),
the kind's own rules (409 duplicates), then the write.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chatcrm.core.errors import require_valid
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection
from chatcrm.db.errors import UniqueViolation
from chatcrm.records import bodies, statements
from chatcrm.records.bodies import Given
from chatcrm.records.changes import Change
from chatcrm.records.conditional import check_if_match, explain_unmatched, simple_if_match
from chatcrm.records.defaults import Creation, Default
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
    conn: Connection, kind: RecordKind, *, workspace_id: str, key_id: str, body: dict[str, Any]
) -> View:
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
    return await get(conn, kind, workspace_id, record_id, shape=kind.written_shape)


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
    names = bodies.update_names(kind.fields, body, record_id=record_id)
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
            return await _update_directly(conn, kind, write, version, if_match)
        return await _update_under_lock(conn, kind, write, if_match)
    except UniqueViolation:
        # A concurrent writer got there first, or a one-statement update hit a unique
        # index: the kind names the conflict (409), after the failed statement is undone.
        await conn.recover()
        await kind.explain_conflict(conn, write)
        raise


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
) -> View:
    """Fields whose columns follow from the request alone (most bot updates: a name, a
    flag, the last message, an amount): one UPDATE … RETURNING, atomic on its own, one
    round trip. A row not matched is explained by a read (404 or 412)."""
    change = await _change(conn, kind, write, current=None)
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
    return view


async def _update_under_lock(
    conn: Connection, kind: RecordKind, write: Write, if_match: str | None
) -> View:
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
    return await get(conn, kind, write.workspace_id, record_id, shape=kind.written_shape)


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
    await statements.soft_delete(conn, kind, workspace_id, [record_id], key_id=key_id, now=utcnow())


async def delete(
    conn: Connection,
    kind: RecordKind,
    *,
    workspace_id: str,
    record_ids: list[str],
    key_id: str,
    now: datetime | None = None,
) -> set[str]:
    """Soft delete: the rows stay (nothing is lost) but leave every read and list."""
    return await statements.soft_delete(
        conn,
        kind,
        workspace_id,
        [i for i in record_ids if is_id(i)],
        key_id=key_id,
        now=now or utcnow(),
    )
