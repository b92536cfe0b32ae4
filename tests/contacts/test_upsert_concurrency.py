"""Upsert under a concurrent writer (contract E.2, each item atomic): when another
transaction creates the same phone while a batch is being decided, the unique index refuses
the batch's round; its items are redone one at a time against what is now committed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from chatcrm.contacts.upsert import upsert_batch
from chatcrm.db.database import Database
from tests.client import unique_email, unique_phone
from tests.conftest import new_account
from tests.webhooks.processes import with_db


@pytest.mark.postgres_only  # SQLite writes one transaction at a time
def test_a_phone_taken_meanwhile_is_matched_on_the_redo(postgres_url: str) -> None:
    database_url = postgres_url
    workspace = new_account(database_url).workspace_id
    phone, other = unique_phone(), unique_email()

    def batch(name: str, *extra: dict[str, Any]) -> dict[str, Any]:
        item = {"name": name, "platformId": 2, "phone": phone}
        return {"contacts": [item, *extra]}

    async def work(db: Database) -> tuple[dict[str, Any], dict[str, Any]]:
        async def second() -> dict[str, Any]:
            async with db.transaction() as conn:
                body = batch("Second", {"name": "Other", "email": other})
                return await upsert_batch(conn, workspace_id=workspace, key_id="k", body=body)

        async with db.transaction() as conn:
            first = await upsert_batch(
                conn, workspace_id=workspace, key_id="k", body=batch("First")
            )
            racing = asyncio.create_task(second())
            await asyncio.sleep(0.5)  # it read no contact with that phone, and waits on ours
            assert not racing.done()
        return first, await racing

    first, second = with_db(database_url, work)
    assert first["results"][0]["status"] == "created"
    created = first["results"][0]["id"]
    assert [(r["status"], r["id"] == created) for r in second["results"]] == [
        ("updated", True),
        ("created", False),
    ]
    assert (second["updated"], second["created"], second["failed"]) == (1, 1, 0)
