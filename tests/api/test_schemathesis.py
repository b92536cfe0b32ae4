"""The service against its OWN `/openapi.json`, with schemathesis, on both backends.

A real `chatcrm serve` process is tested by the schemathesis command line (its examples,
coverage and fuzzing phases, a fixed seed per backend: two seeds a run) with these
checks: every answer is no server error; its status, content type, body and headers are
the ones the document gives for the operation; a request the document says is invalid is
refused; a missing required header is refused; a method the path does not serve is 405
with `Allow`.

The account's key is sent on every request; the workspace and the ids of real records are
given as the values of their parameters, so the requests get past the 403/404 gate into
the handlers.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from chatcrm.provisioning import NewAccount
from tests.conftest import migrated_database, new_account
from tests.servers import serve

# The document is the same on every engine, and every API test behind it runs on the
# Citus tier: the fuzzing (minutes of Citus-planned statements) runs on SQLite and
# PostgreSQL only.
pytestmark = [pytest.mark.slow, pytest.mark.not_on_citus]

CHECKS = (
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
    "response_headers_conformance",
    "negative_data_rejection",
    "missing_required_header",
    "unsupported_method",
)
# A seed per backend: each run explores other values than the other, and the suite takes
# no longer than with one seed (about a minute a backend; CI stays under its 20 minutes).
SEEDS = {"sqlite": 20251125, "postgresql": 20260211}
MAX_EXAMPLES = 30


def _schemathesis() -> str:
    found = Path(sys.executable).parent / "schemathesis"
    assert found.exists(), "schemathesis is not installed (make test installs the dev extras)"
    return str(found)


def _config(account: NewAccount, contact: str, opportunity: str, webhook: str) -> str:
    ws = account.workspace_id
    return f"""
[parameters]
"header.x-workspace-id" = "{ws}"
"query.workspaceId" = "{ws}"
"path.workspaceId" = "{ws}"
"path.contactId" = "{contact}"
"path.opportunityId" = "{opportunity}"
"path.webhookId" = "{webhook}"

[[operations]]
include-name = "PUT /api/contact"
parameters = {{ "query.id" = "{contact}" }}

[[operations]]
include-name = "PUT /api/opportunity"
parameters = {{ "query.id" = "{opportunity}" }}
"""


def test_the_service_conforms_to_its_openapi_document(
    backend: str, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    seed = SEEDS[backend]
    # A database of its own: the fuzzed sign-ins throttle their client address (J.3), which
    # must not hold back the other tests' sign-ins from this machine.
    with migrated_database(backend, tmp_path_factory) as url:
        _conforms(url, new_account(url), tmp_path, seed)


def _conforms(database_url: str, account: NewAccount, tmp_path: Path, seed: int) -> None:
    # Rate limits off: the run sends thousands of requests with one key.
    with serve(
        database_url, env={"CHATCRM_RATE_LIMIT": "0", "CHATCRM_ACCESS_LOG": "false"}
    ) as server:
        headers = {
            "Authorization": f"Bearer {account.api_key}",
            "x-workspace-id": account.workspace_id,
        }
        contact = httpx.post(
            f"{server.base_url}/api/contact",
            json={"name": "Seed", "email": "seed@example.com"},
            headers=headers,
        ).json()["data"]["id"]
        opportunity = httpx.post(
            f"{server.base_url}/api/opportunity",
            json={"name": "Seed deal", "amount": 10, "contactId": contact},
            headers=headers,
        ).json()["data"]["id"]
        # A receiver that does not resolve here: saved, and never sent to.
        webhook = httpx.post(
            f"{server.base_url}/api/webhook",
            json={"url": "https://receiver.example/hooks"},
            headers=headers,
        ).json()["data"]["id"]
        document = httpx.get(f"{server.base_url}/openapi.json").json()
        operations = sum(len(methods) for methods in document["paths"].values())
        config = tmp_path / "schemathesis.toml"
        config.write_text(_config(account, contact, opportunity, webhook))
        result = subprocess.run(
            [
                _schemathesis(),
                "--no-color",
                "--config-file",
                str(config),
                "run",
                f"{server.base_url}/openapi.json",
                "--header",
                f"Authorization: Bearer {account.api_key}",
                "--checks",
                ",".join(CHECKS),
                "--phases",
                "examples,coverage,fuzzing",
                "--max-examples",
                str(MAX_EXAMPLES),
                "--seed",
                str(seed),
                "--suppress-health-check",
                "all",
                "--request-timeout",
                "30",
            ],
            capture_output=True,
            text=True,
            timeout=900,
            stdin=subprocess.DEVNULL,
            cwd=tmp_path,  # its caches go there, not into the repository
        )
    assert result.returncode == 0, result.stdout[-20000:] + result.stderr[-5000:]
    assert f"{operations} selected / {operations} total" in result.stdout, result.stdout
