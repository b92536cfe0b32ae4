"""Keyset pages: newest first by (created_at, id) — or oldest first — and never OFFSET.

The page statements are derived once per base statement and kept, with the position and
the page size as bound parameters, so SQLAlchemy's compiled cache serves every page.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, String, bindparam, tuple_

from chatcrm.core.pagination import Position, TokenCodec
from chatcrm.core.timestamps import parse_iso
from chatcrm.db.database import Connection, Row
from chatcrm.db.types import UTCDateTime

# Keyed by the base statement's identity (bases are cached for the life of the process, and
# each entry keeps its base alive, so an id is never reused while its entry exists).
_page_statements: dict[tuple[int, bool, bool], tuple[Select[Any], Select[Any]]] = {}


def _page_statement(
    base: Select[Any], created: Any, ident: Any, *, after: bool, newest_first: bool
) -> Select[Any]:
    key = (id(base), after, newest_first)
    cached = _page_statements.get(key)
    if cached is not None and cached[0] is base:
        return cached[1]
    stmt = base
    if after:
        position = tuple_(
            bindparam("_after_at", type_=UTCDateTime), bindparam("_after_id", type_=String)
        )
        sort_key = tuple_(created, ident)
        stmt = stmt.where(sort_key < position if newest_first else sort_key > position)
    order = (created.desc(), ident.desc()) if newest_first else (created.asc(), ident.asc())
    stmt = stmt.order_by(*order).limit(bindparam("_limit"))
    _page_statements[key] = (base, stmt)
    return stmt


async def list_with_token(
    conn: Connection,
    codec: TokenCodec,
    base: Select[Any],
    params: dict[str, Any],
    *,
    scope: str,
    digest: str,
    token: str | None,
    size: int,
    created: Any,
    ident: Any,
    newest_first: bool = True,
    created_key: str = "created_at",
) -> tuple[list[Row], str | None]:
    """A page of `base` (a long-lived statement; `params` are its bound values) after the
    position a continuation token names, and the token of the page that follows — None
    when no record follows, also when this page is exactly full."""
    after = codec.decode(token, scope=scope, digest=digest) if token else None
    stmt = _page_statement(base, created, ident, after=after is not None, newest_first=newest_first)
    values = {**params, "_limit": size + 1}
    if after is not None:
        values.update(_after_at=after.created_at, _after_id=after.id)
    rows = await conn.fetch(stmt, values)
    if len(rows) <= size:
        return rows, None
    rows = rows[:size]
    last = rows[-1]
    created = last[created_key]
    if isinstance(created, str):  # records are read in wire form (core/timestamps.py)
        created = parse_iso(created)
    position = Position(created_at=created, id=last["id"])
    return rows, codec.encode(scope=scope, digest=digest, position=position)
