"""Invitation and reset links (contract J.1): single-use tokens, stored as hashes, each
new one of a user ending its earlier ones; `users.find_token` reads them back."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import bindparam, insert, select, update

from chatcrm.db.database import Connection, Row
from chatcrm.people import tokens
from chatcrm.people.tables import user_tokens

INVITE, RESET = "invite", "reset"
INVITATION_LIFETIME = timedelta(days=7)
RESET_LIFETIME = timedelta(hours=1)

_t = user_tokens.c
_INSERT = insert(user_tokens)
_TOKEN = select(user_tokens).where(_t.token_hash == bindparam("_hash"))
_USE = (
    update(user_tokens)
    .where(_t.token_hash == bindparam("_hash"), _t.used_at.is_(None))
    .values(used_at=bindparam("_now"))
)
_RETIRE = (
    update(user_tokens)
    .where(_t.user_id == bindparam("_id"), _t.used_at.is_(None))
    .values(used_at=bindparam("_now"))
)


async def retire(conn: Connection, user_id: str, now: datetime) -> None:
    """Every link of the user not yet used stops working."""
    await conn.execute(_RETIRE, {"_id": user_id, "_now": now})


async def new_link(conn: Connection, user_id: str, purpose: str, *, now: datetime) -> str:
    """A single-use token; every earlier link of the user stops working (J.1), an
    invitation not yet accepted too: the new link sets the password instead."""
    await conn.begin()
    await retire(conn, user_id, now)
    token, token_hash = tokens.new_token()
    lifetime = INVITATION_LIFETIME if purpose == INVITE else RESET_LIFETIME
    await conn.execute(
        _INSERT,
        {
            "token_hash": token_hash,
            "user_id": user_id,
            "purpose": purpose,
            "created_at": now,
            "expires_at": now + lifetime,
            "used_at": None,
        },
    )
    return token


def link(base_url: str, purpose: str, token: str) -> str:
    return f"{base_url}/console/#{purpose}/{token}"


async def stored(conn: Connection, token: str) -> Row | None:
    """The stored link a token is, used or not."""
    return await conn.fetchrow(_TOKEN, {"_hash": tokens.token_hash(token)})


async def use(conn: Connection, token: str, now: datetime) -> bool:
    """Used up now; False when it already was (by a racing request)."""
    return await conn.execute(_USE, {"_hash": tokens.token_hash(token), "_now": now}) == 1
