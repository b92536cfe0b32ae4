"""One module per wire format: the database renders timestamps and money exactly as the
Python side does (core/timestamps.py, core/money.py), on both backends."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import bindparam, select

from chatcrm.config import Settings
from chatcrm.core.money import MAX_AMOUNT, money_sql, money_text
from chatcrm.core.timestamps import iso, iso_sql
from chatcrm.db.database import Database
from chatcrm.db.types import Money, UTCDateTime

_AT = bindparam("_at", type_=UTCDateTime)
_AMOUNT = bindparam("_amount", type_=Money)


def _render(database_url: str, values: list[tuple[datetime, Decimal]]) -> list[tuple[str, str]]:
    async def run() -> list[tuple[str, str]]:
        db = Database(Settings(database_url=database_url))
        try:
            async with db.session() as conn:
                statement = select(
                    iso_sql(_AT, conn.dialect).label("at"),
                    money_sql(_AMOUNT, conn.dialect).label("amount"),
                )
                out = []
                for at, amount in values:
                    # SQLite keeps money as the canonical text itself (db/types.Money).
                    stored = amount if conn.dialect == "postgresql" else money_text(amount)
                    row = await conn.fetchrow(statement, {"_at": at, "_amount": stored})
                    assert row is not None
                    out.append((row["at"], row["amount"]))
                return out
        finally:
            await db.dispose()

    return asyncio.run(run())


_TIMES = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.just(UTC)
)
_MONEY = st.decimals(min_value=0, max_value=MAX_AMOUNT, places=4, allow_nan=False)


@settings(max_examples=25, deadline=None, database=None)
@given(values=st.lists(st.tuples(_TIMES, _MONEY), min_size=1, max_size=20))
def test_the_database_renders_what_python_renders(
    database_url: str, values: list[tuple[datetime, Decimal]]
) -> None:
    rendered = _render(database_url, values)
    for (at, amount), (at_text, amount_text) in zip(values, rendered, strict=True):
        assert at_text == iso(at)
        assert amount_text == money_text(amount.normalize())
