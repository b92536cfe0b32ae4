"""Shared helpers of the reliability tests: an app of their own driven truly concurrently
(one event loop, `httpx.ASGITransport`), direct SQL on the test database, the real CLI
(tests/cli_forks.py)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.sql import Executable

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.engine import standalone_engine
from chatcrm.provisioning import NewAccount
from tests import cli_forks
from tests.client import ok_data, unique, unique_email
from tests.conftest import new_account

CLI = str(Path(sys.executable).with_name("chatcrm"))


def run_cli(database_url: str, *args: str, timeout: float = 60) -> str:
    """Run `chatcrm ARGS --database-url URL`; assert success; return its stdout."""
    done = cli_forks.run(
        CLI, [*args, "--database-url", database_url], dict(os.environ), timeout=timeout
    )
    assert done.returncode == 0, (done.returncode, done.stdout, done.stderr)
    return done.stdout


def cli_json(database_url: str, *args: str) -> dict[str, Any]:
    out = run_cli(database_url, *args, "--json")
    value: dict[str, Any] = json.loads(out)
    return value


def sql(
    database_url: str, statement: str | Executable, params: dict[str, Any] | None = None
) -> list[Any]:
    """Run one statement (SQL text or Core) on the test database in its own transaction;
    its rows, if it returns any."""
    stmt = text(statement) if isinstance(statement, str) else statement

    async def run() -> list[Any]:
        engine = standalone_engine(database_url, Settings(database_url=database_url))
        try:
            async with engine.begin() as conn:
                result = await conn.execute(stmt, params or {})
                return list(result.all()) if result.returns_rows else []
        finally:
            await engine.dispose()

    return asyncio.run(run())


def add_key(database_url: str, account_id: str, rate_limit: str | None = None) -> tuple[str, str]:
    """Another API key of the account, made by the CLI: (key id, API key)."""
    args = ["--rate-limit", rate_limit] if rate_limit is not None else []
    made = cli_json(database_url, "keys", "create", "--account", account_id, *args)
    assert list(made) == ["keyId", "apiKey"], made
    return made["keyId"], made["apiKey"]


class AsyncApi:
    """Requests of one workspace's key through an in-process app, awaitable concurrently."""

    def __init__(self, client: httpx.AsyncClient, account: NewAccount) -> None:
        self.client = client
        self.account = account
        self.key = account.api_key
        self.ws = account.workspace_id

    def headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        out = {"Authorization": f"Bearer {self.key}", "x-workspace-id": self.ws}
        out.update(extra or {})
        return out

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
        content: bytes | None = None,
    ) -> httpx.Response:
        return await self.client.request(
            method, path, json=json, params=params, headers=self.headers(headers), content=content
        )

    async def post(self, path: str, **kw: Any) -> httpx.Response:
        return await self.request("POST", path, **kw)

    async def get(self, path: str, **kw: Any) -> httpx.Response:
        return await self.request("GET", path, **kw)

    async def update_contact(
        self, contact_id: str, body: Any, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        params = {"id": contact_id, "workspaceId": self.ws}
        return await self.request("PUT", "/api/contact", json=body, params=params, headers=headers)

    async def update_opportunity(
        self, opportunity_id: str, body: Any, headers: dict[str, str] | None = None
    ) -> httpx.Response:
        params = {"id": opportunity_id}
        return await self.request(
            "PUT", "/api/opportunity", json=body, params=params, headers=headers
        )

    async def setup_item(self, kind: str, body: dict[str, Any]) -> dict[str, Any]:
        data: dict[str, Any] = ok_data(
            await self.post(f"/api/workspace/{self.ws}/{kind}", json=body)
        )
        return data

    async def add_tag(self) -> dict[str, Any]:
        return await self.setup_item("tags", {"name": unique("tag"), "color": "#00ff00"})

    async def add_agent(self) -> dict[str, Any]:
        return await self.setup_item("agents", {"name": unique("Agent "), "email": unique_email()})

    async def add_segmentation(self) -> dict[str, Any]:
        return await self.setup_item("segmentations", {"name": unique("seg")})

    async def add_stage(self, kind: str) -> dict[str, Any]:
        return await self.setup_item("stages", {"kind": kind, "name": unique("st")})

    async def create_contact(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "Ana", "email": unique_email(), **fields}
        data = ok_data(await self.post("/api/contact", json=body), "Contact created successfully.")
        contact: dict[str, Any] = data["contact"]
        return contact

    async def create_opportunity(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "Deal", "amount": 100, **fields}
        data = ok_data(
            await self.post("/api/opportunity", json=body), "Opportunity successfully created."
        )
        opportunity: dict[str, Any] = data["opportunity"]
        return opportunity

    async def get_contact(self, contact_id: str) -> httpx.Response:
        return await self.get(f"/api/contact/{contact_id}")

    async def get_opportunity(self, opportunity_id: str) -> httpx.Response:
        return await self.get(f"/api/opportunity/{opportunity_id}")

    async def list_all(self, path: str) -> list[dict[str, Any]]:
        """Every record of a list endpoint, following continuation tokens."""
        out: list[dict[str, Any]] = []
        params: dict[str, str] = {"pageSize": "100"}
        while True:
            data = ok_data(await self.get(path, params=params))
            out.extend(data["data"])
            if data["continuationToken"] is None:
                return out
            params = {"pageSize": "100", "continuationToken": data["continuationToken"]}


@asynccontextmanager
async def app_client(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """A fresh app with its lifespan running, and a client that calls it in-process."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            yield client


@pytest.fixture
async def aapi(settings: Settings, database_url: str) -> AsyncIterator[AsyncApi]:
    """A fresh account on an app of its own, for truly concurrent requests."""
    account = await asyncio.to_thread(new_account, database_url)
    async with app_client(settings) as client:
        yield AsyncApi(client, account)
