"""One page of a keyset-paginated query: newest first by (created_at, id), no OFFSET."""

from __future__ import annotations

from typing import Any

from sqlalchemy import Select, String, literal, tuple_
from sqlalchemy.engine import RowMapping
from sqlalchemy.ext.asyncio import AsyncConnection

from chatcrm.core.pagination import Position, TokenCodec
from chatcrm.db.engine import Database
from chatcrm.db.types import UTCDateTime


async def fetch_page(
    conn: AsyncConnection,
    stmt: Select[Any],
    *,
    created: Any,
    ident: Any,
    after: Position | None,
    size: int,
    newest_first: bool = True,
) -> tuple[list[RowMapping], Position | None]:
    """Rows after `after` in sort order, at most `size`; and where the next page starts
    (None when no record follows, also when this page is exactly full)."""
    if after is not None:
        key = tuple_(created, ident)
        bound = tuple_(literal(after.created_at, UTCDateTime), literal(after.id, String))
        stmt = stmt.where(key < bound if newest_first else key > bound)
    order = (created.desc(), ident.desc()) if newest_first else (created.asc(), ident.asc())
    rows = list((await conn.execute(stmt.order_by(*order).limit(size + 1))).mappings())
    if len(rows) <= size:
        return rows, None
    rows = rows[:size]
    last = rows[-1]
    return rows, Position(created_at=last["created_at"], id=last["id"])


async def list_with_token(
    db: Database,
    codec: TokenCodec,
    stmt: Select[Any],
    *,
    scope: str,
    digest: str,
    token: str | None,
    size: int,
    created: Any,
    ident: Any,
    newest_first: bool = True,
) -> tuple[list[RowMapping], str | None]:
    """A page of `stmt` after the position a continuation token names, and the token of
    the page that follows (None at the end)."""
    after = codec.decode(token, scope=scope, digest=digest) if token else None
    async with db.read() as conn:
        rows, next_position = await fetch_page(
            conn,
            stmt,
            created=created,
            ident=ident,
            after=after,
            size=size,
            newest_first=newest_first,
        )
    if next_position is None:
        return rows, None
    return rows, codec.encode(scope=scope, digest=digest, position=next_position)
