"""A floor for "GET contact by id": a bare ASGI app that runs chatcrm's own compiled
SELECT for a random contact on asyncpg and answers the row as JSON — no framework, no
authentication, no envelope. What chatcrm adds on top of this is its own cost; what this
costs is the database round trip and the server, on this machine.

Configured by the environment: CHATCRM_BARE_URL (PostgreSQL URL), CHATCRM_BARE_WORKSPACE,
CHATCRM_BARE_IDS (a file with one contact id per line).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import asyncpg
import orjson
from sqlalchemy.engine import make_url

from chatcrm.contacts.kind import CONTACT
from chatcrm.db.compiled import compiled
from chatcrm.records import statements

_QUERY = compiled(statements._get_statement(CONTACT, "read", "postgresql"), "postgresql")
_WORKSPACE = os.environ.get("CHATCRM_BARE_WORKSPACE", "")
_IDS = Path(os.environ.get("CHATCRM_BARE_IDS", "/dev/null")).read_text().split()
_pool: asyncpg.Pool | None = None


async def _get_pool() -> asyncpg.Pool:
    global _pool
    if _pool is None:
        url = make_url(os.environ["CHATCRM_BARE_URL"])
        _pool = await asyncpg.create_pool(
            host=url.query.get("host") or url.host,  # ?host=/dir for a Unix socket
            port=url.port,
            user=url.username,
            password=url.password,
            database=url.database,
            min_size=4,
            max_size=4,
        )
    return _pool


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    pool = await _get_pool()
    args = _QUERY.args({"_ws": _WORKSPACE, "_id": random.choice(_IDS)})
    async with pool.acquire() as conn:
        record = await conn.fetchrow(_QUERY.sql, *args)
    body = orjson.dumps(dict(record), default=str)
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body})
