"""The audit log (contract J.6): the account's security record, newest first. Entries name
who acted and on what, never a password, token, key or secret."""

from __future__ import annotations

from typing import Any

import orjson
from sqlalchemy import bindparam, insert, select

from chatcrm import __version__
from chatcrm.api.call import Call
from chatcrm.core.ids import new_id
from chatcrm.core.pagination import Position
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db.database import Connection
from chatcrm.events.outbox import SYSTEM_ACTOR
from chatcrm.people.tables import audit_log

_a = audit_log.c
_INSERT = insert(audit_log)
_FIRST_PAGE = (
    select(_a.id, _a.at, _a.actor, _a.action, _a.target, _a.ip, _a.user_agent)
    .where(_a.account_id == bindparam("_account"))
    .order_by(_a.id.desc())  # ids are UUIDv7 text, ordered by time
    .limit(bindparam("_limit"))
)
# The next pages compare ids with ids only: no sentinel "above every id", which a
# database's collation may place below them all (`'0…' < '~'` is false under ICU's).
_PAGE = _FIRST_PAGE.where(_a.id < bindparam("_before"))
KEPT_DAYS = 365


async def record(
    conn: Connection,
    *,
    account_id: str,
    action: str,
    actor: dict[str, Any] | None,
    target: str | None,
    ip: str,
    user_agent: str,
) -> None:
    await conn.begin()
    await conn.execute(
        _INSERT,
        {
            "account_id": account_id,
            "id": new_id(),
            "at": utcnow(),
            "actor": None if actor is None else orjson.dumps(actor).decode(),
            "action": action,
            "target": None if target is None else target[:300],
            "ip": ip[:64],
            "user_agent": user_agent[:500],
        },
    )


async def note(call: Call, action: str, target: str | None) -> None:
    """An entry for what an authenticated request did, in its transaction."""
    request = call.request
    await record(
        call.conn,
        account_id=call.account_id,
        action=action,
        actor=call.principal.actor(),
        target=target,
        ip=request.client.host if request.client else "",
        user_agent=request.headers.get("user-agent", ""),
    )


# What `chatcrm` commands do is done by whoever runs the server, not by a user or key of the
# account: J.4's system actor, from no address.
_COMMAND_LINE_AGENT = f"chatcrm/{__version__} (command line)"


async def note_command(conn: Connection, account_id: str, action: str, target: str) -> None:
    """An entry for what a `chatcrm` command did (a key made or revoked, a user invited, a
    reset link), in the command's transaction: the account's record misses none."""
    await record(
        conn,
        account_id=account_id,
        action=action,
        actor=SYSTEM_ACTOR,
        target=target,
        ip="",
        user_agent=_COMMAND_LINE_AGENT,
    )


async def page(
    conn: Connection, account_id: str, *, before: str | None, size: int
) -> tuple[list[dict[str, Any]], Position | None]:
    """Up to `size` entries older than the entry `before` (None: the newest), and the
    last one's place to continue from when more remain."""
    params = {"_account": account_id, "_limit": size + 1}
    if before is None:
        rows = await conn.fetch(_FIRST_PAGE, params)
    else:
        rows = await conn.fetch(_PAGE, {**params, "_before": before})
    more = len(rows) > size
    entries = [
        {
            "id": r["id"],
            "at": iso(r["at"]),
            "actor": None if r["actor"] is None else orjson.loads(r["actor"]),
            "action": r["action"],
            "target": r["target"],
            "ip": r["ip"],
            "userAgent": r["user_agent"],
        }
        for r in rows[:size]
    ]
    last = rows[size - 1] if more else None
    return entries, None if last is None else Position(created_at=last["at"], id=last["id"])
