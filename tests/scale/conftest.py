"""Two `chatcrm serve` nodes (two workers each) on one database, started once for the
module: what part I of the contract says of many processes and nodes is checked through
them, on PostgreSQL and on Citus (contract L). Without a reachable server these tests
skip loudly (and fail under CI), as every PostgreSQL and Citus test does
(tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from chatcrm.auth.service import create_key
from chatcrm.config import Settings
from chatcrm.db.database import Database
from chatcrm.provisioning import NewAccount
from tests.conftest import migrated_database, new_account, run_sync
from tests.servers import Server, serve_nodes
from tests.webhooks.receiver import Receiver

pytestmark = pytest.mark.slow

# Receivers on 127.0.0.1; the service's default rate limit stays on (100/s, bursts of 200).
NODE_ENV = {"CHATCRM_WEBHOOK_ALLOW_PRIVATE": "1", "CHATCRM_LOG_LEVEL": "warning"}


@dataclass
class Cluster:
    url: str
    nodes: list[Server]

    def account(self) -> NewAccount:
        return new_account(self.url, "Scale workspace")

    def key(self, account: NewAccount, *, rate_limit: float | None = None) -> tuple[str, str]:
        """Another key of the account, through the code the CLI uses: (key id, API key)."""

        async def run() -> tuple[str, str]:
            db = Database(Settings(database_url=self.url))
            try:
                async with db.transaction() as conn:
                    return await create_key(
                        conn, account_id=account.account_id, rate_limit=rate_limit
                    )
            finally:
                await db.dispose()

        return run_sync(run)

    def clients(self, key: str, workspace: str) -> list[httpx.Client]:
        """A client of each node."""
        headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace}
        return [
            httpx.Client(base_url=node.base_url, headers=headers, timeout=30) for node in self.nodes
        ]


@pytest.fixture(scope="module", params=["postgresql", "citus"])
def cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    with (
        migrated_database(request.param, tmp_path_factory) as url,
        serve_nodes(url, 2, workers=2, env=NODE_ENV) as nodes,
    ):
        yield Cluster(url, nodes)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()
