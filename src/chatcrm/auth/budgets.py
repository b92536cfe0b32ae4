"""The rate budget of each API key, shared by every process and node (PostgreSQL).

One statement per check: a token bucket kept in `rate_budgets`, refilled by the time since
its last request on the database's clock (so the nodes' clocks do not matter), spent by one
token when at least one is there, all under the row's lock in a single
`INSERT … ON CONFLICT DO UPDATE … RETURNING`. Checks of one key queue on that row for the
few microseconds of the statement; requests of other keys do not meet at all.
"""

from __future__ import annotations

from sqlalchemy import Float, Integer, bindparam, case, cast, extract, func, literal_column
from sqlalchemy.dialects.postgresql import insert as pg_insert

from chatcrm.db.database import Connection
from chatcrm.db.schema import rate_budgets

_b = rate_budgets.c
_RATE = bindparam("_rate", type_=Float)
_CAPACITY = bindparam("_capacity", type_=Float)
# The time the statement started on the server, in epoch seconds.
_NOW = cast(extract("epoch", func.statement_timestamp()), Float)
_INSERT = pg_insert(rate_budgets).values(
    key_id=bindparam("_key"),
    tokens=_CAPACITY - literal_column("1", Integer),
    at=_NOW,
    allowed=literal_column("true"),
)
_now = _INSERT.excluded.at  # the statement's time, computed once, in the proposed row
# Two checks may take the row lock in the other order than their statements started: the
# later one then refills nothing (never a negative time), and the clock never runs back.
_refilled = func.least(
    _CAPACITY, _b.tokens + func.greatest(literal_column("0", Float), _now - _b.at) * _RATE
)
_enough = _refilled >= literal_column("1", Integer)

_SPEND = _INSERT.on_conflict_do_update(
    index_elements=[_b.key_id],
    set_={
        "tokens": case((_enough, _refilled - literal_column("1", Integer)), else_=_refilled),
        "at": func.greatest(_b.at, _now),
        "allowed": _enough,
    },
).returning(_b.allowed, _b.tokens)


async def spend(
    conn: Connection, key_id: str, *, rate: float, capacity: float
) -> tuple[bool, float]:
    """(allowed, tokens left) after one request of the key; refused requests spend nothing."""
    row = await conn.fetchrow(_SPEND, {"_key": key_id, "_rate": rate, "_capacity": capacity})
    assert row is not None  # an upsert always returns its row
    return bool(row["allowed"]), float(row["tokens"])
