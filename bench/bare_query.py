"""Floors for the hot calls: bare ASGI apps that send one statement on asyncpg and answer
its result as JSON — no framework, no authentication, no envelope, no events. What chatcrm
adds on top of one of these is its own cost; what a floor costs is the database round trip
and the server, on this machine. A floor that misses a target proves that no code of
chatcrm's could reach it here.

`CHATCRM_BARE_CASE` picks the floor (a request for `/<case>` picks its own, as
bench/in_process.py does to measure several in one process):

- `roundtrip`: `SELECT 1`, the least any call that reads the database costs;
- `get_contact`: chatcrm's own compiled read of a random contact;
- `update_contact`: `UPDATE contacts SET name, modified_at` of a random contact, in
  autocommit — less than Update Contact does (no `RETURNING`, no event, no checks);
- `update_contact_event`: the same `UPDATE` and, in the same statement, the insert of its
  event (a body of the size of a real `contact.updated` event) into the outbox: the least
  an update costs when, as contract D requires, no change commits without its event;
- `update_contact_evented`: chatcrm's own evented update of a contact's name
  (records/evented_update.py), alone: the `UPDATE … RETURNING` of the record in its
  written shape and the insert of its event with the body the database builds from it.
  What the statement itself costs, without the request around it;
- `list_first_page`: chatcrm's own compiled first page of contacts (20 records).

Also configured by the environment: CHATCRM_BARE_URL (PostgreSQL URL),
CHATCRM_BARE_WORKSPACE, CHATCRM_BARE_IDS (a file with one contact id per line).
"""

from __future__ import annotations

import os
import random
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import orjson
from sqlalchemy import text
from sqlalchemy.engine import make_url

from chatcrm.contacts.kind import CONTACT
from chatcrm.core.timestamps import iso
from chatcrm.db import keyset
from chatcrm.db.compiled import Compiled, compiled
from chatcrm.db.pg_pool import PgPool
from chatcrm.events.outbox import SYSTEM_ACTOR, new_event_id
from chatcrm.records import evented_update, listing, statements

_CASE = os.environ.get("CHATCRM_BARE_CASE", "get_contact")
_WORKSPACE = os.environ.get("CHATCRM_BARE_WORKSPACE", "")
_IDS = Path(os.environ.get("CHATCRM_BARE_IDS", "/dev/null")).read_text().split()
_pool: PgPool | None = None


def _list_first_page() -> Compiled:
    base = listing._list_statement(CONTACT, (), (), CONTACT.read_shape, "postgresql")
    c = CONTACT.table.c
    page = keyset._page_statement(base, c.created_at, c.id, after=False, newest_first=True)
    return compiled(page, "postgresql")


_GET = compiled(statements._get_statement(CONTACT, "read", "postgresql"), "postgresql")
_LIST = _list_first_page()
_UPDATE = compiled(
    text(
        "UPDATE contacts SET name = :name, modified_at = now() "
        "WHERE workspace_id = :_ws AND id = :_id"
    ),
    "postgresql",
)

# A data-modifying CTE, as chatcrm's own evented update (records/evented_update.py): one
# round trip, one commit, the event written with the change. It stays unpublished: no
# publisher runs beside a floor.
_UPDATE_EVENT = compiled(
    text(
        "WITH changed AS (UPDATE contacts SET name = :name, modified_at = now() "
        "WHERE workspace_id = :_ws AND id = :_id RETURNING workspace_id, id) "
        "INSERT INTO events (workspace_id, id, seq, type, record_id, created_at, body) "
        "SELECT changed.workspace_id, :event_id, nextval('events_seq'), 'contact.updated', "
        "changed.id, now(), :body FROM changed"
    ),
    "postgresql",
)
# Update Contact's own statement for a name, as records/writing.py sends it.
_EVENTED = compiled(
    evented_update._statement(
        CONTACT, ("modified_at", "name"), (), False, CONTACT.written_shape, None
    ),
    "postgresql",
)
_CHANGED = orjson.dumps(CONTACT.fields.changed({"name": ""}, columns=("modified_at", "name")))
_ACTOR = orjson.dumps(SYSTEM_ACTOR).decode()

# About the size of a contact.updated event's body (docs/performance.md 5: ~1.5 KB).
_BODY = orjson.dumps({"type": "contact.updated", "data": {"padding": "x" * 1400}}).decode()


async def _get_pool() -> PgPool:
    global _pool
    if _pool is None:
        url = make_url(os.environ["CHATCRM_BARE_URL"])

        def connect() -> Any:
            return asyncpg.connect(
                host=url.query.get("host") or url.host,  # ?host=/dir for a Unix socket
                port=url.port,
                user=url.username,
                password=url.password,
                database=url.database,
            )

        # chatcrm's own pool (db/pg_pool.py): a floor lends and takes back its connections
        # exactly as chatcrm does, so what it saves there is not counted as chatcrm's own.
        _pool = PgPool(connect, max_size=4)
    return _pool


async def _answer(conn: asyncpg.Connection, case: str) -> Any:
    if case == "roundtrip":
        return await conn.fetchval("SELECT 1")
    if case == "get_contact":
        args = _GET.args({"_ws": _WORKSPACE, "_id": random.choice(_IDS)})
        return dict(await conn.fetchrow(_GET.sql, *args))
    if case == "update_contact":
        args = _UPDATE.args(
            {"name": f"n{random.random()}", "_ws": _WORKSPACE, "_id": random.choice(_IDS)}
        )
        return await conn.execute(_UPDATE.sql, *args)
    if case == "update_contact_event":
        args = _UPDATE_EVENT.args(
            {
                "name": f"n{random.random()}",
                "_ws": _WORKSPACE,
                "_id": random.choice(_IDS),
                "event_id": f"evt_{uuid.uuid4().hex}",
                "body": _BODY,
            }
        )
        return await conn.execute(_UPDATE_EVENT.sql, *args)
    if case == "update_contact_evented":
        now = datetime.now(UTC)
        args = _EVENTED.args(
            {
                "name": f"n{random.random()}",
                "modified_at": now,
                "_ws": _WORKSPACE,
                "_id": random.choice(_IDS),
                "_event_id": new_event_id(),
                "_event_type": "contact.updated",
                "_created": iso(now),
                "_event_at": now,
                "_changed": _CHANGED.decode(),
                "_actor": _ACTOR,
            }
        )
        # No row: another request changed the contact while the statement waited for it
        # (the statement updates only the version its snapshot saw). chatcrm then takes
        # its locked path; the statement alone is sent again.
        for _ in range(RACED_TRIES):
            row = await conn.fetchrow(_EVENTED.sql, *args)
            if row is not None:
                return dict(row)
        return {}
    if case == "list_first_page":
        args = _LIST.args({"_ws": _WORKSPACE, "_limit": 21})
        return [dict(r) for r in (await conn.fetch(_LIST.sql, *args))[:20]]
    raise ValueError(case)


RACED_TRIES = 5


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    pool = await _get_pool()
    conn = await pool.acquire()
    try:
        answer = await _answer(conn, scope["path"].strip("/") or _CASE)
    finally:
        pool.release(conn)
    body = orjson.dumps(answer, default=str)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})
