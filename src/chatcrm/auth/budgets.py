"""The rate budget of each API key, shared by every process and node (PostgreSQL).

One statement per check: a token bucket kept in `rate_budgets`, refilled by the time since
its last check on the database's clock (so the nodes' clocks do not matter), from which the
check takes up to the tokens it asks for (whole ones, as many as are there), all under the
row's lock in a single `INSERT … ON CONFLICT DO UPDATE … RETURNING`. Checks of one key
queue on that row for the few microseconds of the statement; requests of other keys do not
meet at all. A process may ask for more than one token and spend the rest on the key's
next requests (api/ratelimit.py): every token spent was taken here first, so all processes
together never spend more than the bucket gives.
"""

from __future__ import annotations

from sqlalchemy import Float, Integer, bindparam, cast, extract, func, literal_column
from sqlalchemy.dialects.postgresql import insert as pg_insert

from chatcrm.db.database import Connection
from chatcrm.db.schema import rate_budgets

_b = rate_budgets.c
_RATE = bindparam("_rate", type_=Float)
_CAPACITY = bindparam("_capacity", type_=Float)
_COUNT = bindparam("_count", type_=Integer)
_RETURNED = bindparam("_returned", type_=Integer)
# The time the statement started on the server, in epoch seconds.
_NOW = cast(extract("epoch", func.statement_timestamp()), Float)


def _taken(available: object) -> object:
    """The whole tokens taken out of `available`: as many as asked for, or all there are."""
    return cast(func.least(_COUNT, func.floor(available)), Integer)


_INSERT = pg_insert(rate_budgets).values(
    key_id=bindparam("_key"),
    tokens=_CAPACITY - _taken(_CAPACITY),
    at=_NOW,
    taken=_taken(_CAPACITY),
)
_now = _INSERT.excluded.at  # the statement's time, computed once, in the proposed row
# Two checks may take the row lock in the other order than their statements started: the
# later one then refills nothing (never a negative time), and the clock never runs back.
# Tokens a process gives back (the rest of a lease it no longer holds) go back in too.
_refilled = func.least(
    _CAPACITY,
    _b.tokens + func.greatest(literal_column("0", Float), _now - _b.at) * _RATE + _RETURNED,
)

_SPEND = _INSERT.on_conflict_do_update(
    index_elements=[_b.key_id],
    set_={
        "tokens": _refilled - _taken(_refilled),
        "at": func.greatest(_b.at, _now),
        "taken": _taken(_refilled),
    },
).returning(_b.taken, _b.tokens)


async def spend(
    conn: Connection,
    key_id: str,
    *,
    rate: float,
    capacity: float,
    count: int = 1,
    returned: int = 0,
) -> tuple[int, float]:
    """(tokens taken, tokens left) after a check of the key asking for `count` (≥ 1)
    tokens, having given back `returned` tokens taken earlier and not spent; 0 taken when
    not one was there, and then nothing was spent."""
    row = await conn.fetchrow(
        _SPEND,
        {
            "_key": key_id,
            "_rate": rate,
            "_capacity": capacity,
            "_count": count,
            "_returned": returned,
        },
    )
    assert row is not None  # an upsert always returns its row
    return int(row["taken"]), float(row["tokens"])
