"""Locks on a name until the transaction ends: a check and the write it allows, made by
two requests at once (on two nodes), must not both pass. PostgreSQL: an advisory lock (on
Citus, of the coordinator, where the transaction starts); SQLite: its write transaction
already holds the one write lock."""

from __future__ import annotations

from sqlalchemy import BigInteger, bindparam, func, select

from chatcrm.db.database import Connection

_LOCK = select(
    func.pg_advisory_xact_lock(
        func.hashtextextended(bindparam("_name"), bindparam("_seed", type_=BigInteger))
    )
)


async def hold(conn: Connection, seed: int, name: str) -> None:
    """Wait for, then hold until the transaction ends, the lock of `name` among the locks
    of `seed` (each kind of lock has its own seed, so their names never meet)."""
    await conn.begin()
    if conn.dialect == "postgresql":
        await conn.fetch(_LOCK, {"_name": name, "_seed": seed})
