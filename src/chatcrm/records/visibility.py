"""Assigned-only agents (contract J.2): in a workspace with `agentsSeeOnlyAssigned`, a user
with the role agent sees and changes only the contacts assigned to one of its agents or to
none, and the opportunities assigned to one of its agents or whose contact it sees. Any
other record is answered exactly as an unknown one.

The restriction of a request is found once its workspace is known (api/call.py) and kept
in a context variable, so the list, board, search, pipeline and feed statements take it
as one more condition (`_mine`: the user's agent ids) without each caller passing it down.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, bindparam, exists, or_, select

from chatcrm.auth.scopes import AGENT
from chatcrm.db.database import Connection
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import agents, workspaces
from chatcrm.records.kind import RecordKind

# A list variant of its own (never a query parameter's name).
ASSIGNED_ONLY = "~assignedOnly"
MINE = "_mine"


@dataclass(frozen=True)
class Restriction:
    workspace_id: str
    agent_ids: tuple[str, ...]


_current: ContextVar[Restriction | None] = ContextVar("chatcrm_restriction", default=None)


_SEE_ONLY_ASSIGNED = select(workspaces.c.agents_see_only_assigned).where(
    workspaces.c.id == bindparam("_ws")
)
_AGENTS_OF = select(agents.c.id, agents.c.email).where(agents.c.workspace_id == bindparam("_ws"))


async def find(conn: Connection, workspace_id: str, *, role: str, email: str) -> None:
    """Work out (and keep) the request's restriction once its workspace is known: only a
    user with the role agent in a workspace that asks for it is restricted, to the
    agents of that workspace whose e-mail is its own."""
    restriction = None
    if role == AGENT and await conn.fetchval(_SEE_ONLY_ASSIGNED, {"_ws": workspace_id}):
        rows = await conn.fetch(_AGENTS_OF, {"_ws": workspace_id})
        restriction = Restriction(workspace_id, tuple(r["id"] for r in rows if _is(r, email)))
    _current.set(restriction)


def _is(agent: Any, email_key: str) -> bool:
    """Whether an agent's e-mail is the user's (`email_key`: lowered by Python). Lowered
    here as well, never by the database: a PostgreSQL database whose ctype is C lowers
    ASCII letters alone, and an agent "ÖZGE@…" was not the user özge@…."""
    return (agent["email"] or "").lower() == email_key


def restrict(restriction: Restriction | None) -> None:
    """The request's restriction (None: it sees the whole workspace)."""
    _current.set(restriction)


def current() -> Restriction | None:
    return _current.get()


def params(dialect: str) -> dict[str, Any]:
    r = _current.get()
    return {} if r is None else {MINE: id_list(list(r.agent_ids), dialect)}


def _contact_visible(table: Any, dialect: str) -> ColumnElement[bool]:
    return or_(
        table.c.assigned_agent_id.is_(None), in_id_list(table.c.assigned_agent_id, MINE, dialect)
    )


def condition(kind: RecordKind, dialect: str) -> ColumnElement[bool]:
    """The records of `kind` a restricted agent sees (the statement binds `_mine`)."""
    c = kind.table.c
    if kind.name == "contact":
        return _contact_visible(kind.table, dialect)
    contacts = kind.linked.get("contact")
    if contacts is None:
        return in_id_list(c.assigned_agent_id, MINE, dialect)
    contact_seen = exists(
        select(contacts.c.id).where(
            contacts.c.workspace_id == bindparam("_ws"),
            contacts.c.id == c.contact_id,
            _contact_visible(contacts, dialect),
        )
    )
    return or_(
        in_id_list(c.assigned_agent_id, MINE, dialect),
        and_(c.contact_id.is_not(None), contact_seen),
    )


def _by_id(table: Any, seen: ColumnElement[bool]) -> Select[Any]:
    c = table.c
    return select(c.id).where(c.workspace_id == bindparam("_ws"), c.id == bindparam("_id"), seen)


@cache
def _visible_statement(kind: RecordKind, dialect: str) -> Select[Any]:
    return _by_id(kind.table, condition(kind, dialect))


@cache
def _linked_contact_statement(table: Any, dialect: str) -> Select[Any]:
    return _by_id(table, _contact_visible(table, dialect))


async def _seen(
    conn: Connection, statement: Select[Any], workspace_id: str, record_id: str
) -> bool:
    """Whether the request may see the record `statement` finds (always, unless
    restricted)."""
    r = _current.get()
    if r is None or r.workspace_id != workspace_id:
        return True
    found = await conn.fetchrow(
        statement, {"_ws": workspace_id, "_id": record_id, **params(conn.dialect)}
    )
    return found is not None


async def sees(conn: Connection, kind: RecordKind, workspace_id: str, record_id: str) -> bool:
    """Whether the request may see the record (always, unless restricted)."""
    return await _seen(conn, _visible_statement(kind, conn.dialect), workspace_id, record_id)


async def check(conn: Connection, kind: RecordKind, workspace_id: str, record_id: str) -> None:
    """404 (the kind's own) for a record the request's agent may not see, live or not."""
    if not await sees(conn, kind, workspace_id, record_id):
        raise kind.not_found(record_id)


async def sees_contact(conn: Connection, table: Any, workspace_id: str, contact_id: str) -> bool:
    """Whether the request may name this contact (an opportunity's `contactId`): one it
    cannot see is answered as an unknown id there too, or naming it would tell."""
    statement = _linked_contact_statement(table, conn.dialect)
    return await _seen(conn, statement, workspace_id, contact_id)
