"""Stored idempotent answers are purged once past their 24 hours (api/idempotency.py)."""

from __future__ import annotations

import asyncio

from chatcrm.api.idempotency import purge_expired
from chatcrm.config import Settings
from chatcrm.db.database import Database
from tests.client import Api, ok_data
from tests.reliability.conftest import sql


def _keys(database_url: str, account_id: str) -> set[str]:
    rows = sql(
        database_url,
        "SELECT key FROM idempotency_keys WHERE account_id = :account",
        {"account": account_id},
    )
    return {row[0] for row in rows}


def test_expired_answers_are_purged_and_live_ones_kept(api: Api, database_url: str) -> None:
    for key in ("old-1", "old-2", "fresh"):
        ok_data(
            api.post(
                "/api/contact",
                json={"name": key, "email": f"{key}@example.com"},
                headers={"Idempotency-Key": key},
            )
        )
    assert _keys(database_url, api.account.account_id) == {"old-1", "old-2", "fresh"}
    sql(
        database_url,
        "UPDATE idempotency_keys SET expires_at = created_at - (expires_at - created_at) "
        "WHERE account_id = :account AND key LIKE 'old-%'",
        {"account": api.account.account_id},
    )

    async def purge() -> int:
        db = Database(Settings(database_url=database_url))
        try:
            return await purge_expired(db)
        finally:
            await db.dispose()

    assert asyncio.run(purge()) >= 2
    assert _keys(database_url, api.account.account_id) == {"fresh"}
    # The purged key is free again: the same key now creates a new contact.
    again = ok_data(
        api.post(
            "/api/contact",
            json={"name": "old-1 again", "email": "old-1-again@example.com"},
            headers={"Idempotency-Key": "old-1"},
        )
    )
    assert again["contact"]["name"] == "old-1 again"
