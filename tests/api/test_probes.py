"""Health and readiness probes never depend on an API key they may happen to send."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.provisioning import NewAccount
from tests.client import ENVELOPE_KEYS


@pytest.fixture
def limited(settings: Settings) -> Iterator[TestClient]:
    """An app allowing one request per second per key (bursts of one)."""
    app = create_app(settings.model_copy(update={"rate_limit": 1, "rate_burst": 1}))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.mark.parametrize("path", ["/health", "/ready"])
def test_probes_ignore_keys_and_rate_limits(
    limited: TestClient, account: NewAccount, path: str
) -> None:
    auth = {"Authorization": f"Bearer {account.api_key}"}
    assert limited.get("/api/workspace/" + account.workspace_id, headers=auth).status_code == 200
    # The key's bucket is now empty: the API refuses it, the probes do not care.
    assert limited.get("/api/workspace/" + account.workspace_id, headers=auth).status_code == 429
    for headers in (auth, {"Authorization": "Bearer not-a-key"}):
        response = limited.get(path, headers=headers)
        assert response.status_code == 200, response.text
        assert list(response.json()) == ENVELOPE_KEYS
        assert "ratelimit-limit" not in response.headers
