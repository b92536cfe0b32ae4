"""End to end: the real `chatcrm serve` process, spoken to over a socket."""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.client import ENVELOPE_KEYS
from tests.conftest import empty_database
from tests.servers import serve

pytestmark = pytest.mark.slow

READ_SHAPE = [
    "id", "creationDate", "assignedAgentId", "assignedAgentName", "segmentationId",
    "lastMessage", "lastMessageDate", "platformSenderId", "platformSenderName",
    "platformSenderPhone", "isRead", "isBotEnabled", "isManuallyAdded", "avatarColor",
    "orderInCards", "orderInCardsLastUpdated", "tags", "files", "isSolved", "workspaceId",
    "name", "lastname", "email", "platformId", "stageId",
]  # fmt: skip
UPDATE_SHAPE = [
    "id", "creationDate", "assignedAgentId", "assignedAgentName", "segmentationId",
    "lastMessage", "lastMessageDate", "platformSenderId", "platformSenderName",
    "platformSenderPhone", "isRead", "isBotEnabled", "isManuallyAdded", "avatarColor",
    "orderInCards", "orderInCardsLastUpdated", "tags", "files", "variables", "isSolved",
    "solvedByAgentId", "solvedDate", "workspaceId", "internalWhatsappNumber", "name",
    "lastname", "email", "platformId", "stageId",
]  # fmt: skip
OPPORTUNITY_SHAPE = [
    "id", "opportCode", "opportStatus", "winLossStatus", "winLossDate", "finalAmount",
    "creationDate", "creationTypeId", "updatedDate", "deletionDate", "userDeletion",
    "statusId", "files", "orderInCards", "orderInCardsLastUpdated", "activities",
    "segmentationId", "workspaceId", "name", "description", "amount", "userCreation",
    "contactId", "expirationDate", "assignedAgentId", "stageId",
]  # fmt: skip
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$")


@pytest.fixture
def fresh_database_url(backend: str, tmp_path: Path) -> Iterator[str]:
    """A new, empty database: the server migrates it and creates the demo account."""
    with empty_database(backend, tmp_path) as url:
        yield url


def ok(response: httpx.Response, message: str) -> Any:
    assert response.status_code == 200, response.text
    body = response.json()
    assert list(body) == ENVELOPE_KEYS
    assert body["success"] is True and body["code"] == 200 and body["errorCode"] is None
    assert body["message"] == message
    assert response.headers["x-request-id"]
    assert response.headers["content-type"].startswith("application/json")
    return body["data"]


def failed(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert list(body) == ENVELOPE_KEYS
    assert body["success"] is False and body["code"] == status and body["errorCode"] == code
    assert response.headers["x-request-id"]
    assert "Traceback" not in response.text
    return body


def test_serve_creates_a_demo_account_and_serves_the_three_operations(
    fresh_database_url: str, backend: str
) -> None:
    with serve(fresh_database_url) as server:
        workspace_id, key = server.demo()
        stdout = "".join(server.stdout)
        assert "curl" in stdout and key in stdout and server.base_url in stdout
        headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace_id}
        with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as client:
            health = client.get("/health", headers={"X-Request-Id": "e2e-1"})
            assert ok(health, "Service is healthy.") == {"status": "ok"}
            assert health.headers["x-request-id"] == "e2e-1"
            ready = ok(client.get("/ready"), "Service is ready.")
            assert ready["database"] == backend
            workspace = ok(
                client.get(f"/api/workspace/{workspace_id}"), "Workspace obtained successfully."
            )
            assert workspace["name"] == "Demo workspace"
            first_stage = workspace["contactStages"][0]["id"]

            # Create Contact
            created = ok(
                client.post(
                    "/api/contact",
                    json={
                        "name": "Ana",
                        "lastname": "Diaz",
                        "email": "ana@example.com",
                        "phone": "+51 987-654-321",
                    },
                ),
                "Contact created successfully.",
            )
            assert list(created) == ["id", "contact"]
            contact = created["contact"]
            assert list(contact) == UPDATE_SHAPE
            contact_id = created["id"]
            assert contact["id"] == contact_id
            assert contact["internalWhatsappNumber"] == "51987654321"
            assert contact["platformId"] == 7 and contact["stageId"] == first_stage
            assert contact["isBotEnabled"] is True and contact["isRead"] is False
            assert TIMESTAMP.match(contact["creationDate"])

            # Get contact by contact ID
            got = client.get(f"/api/contact/{contact_id}")
            data = ok(got, "Successfully obtained list.")
            assert list(data) == ["contactId", "data"]
            assert data["contactId"] == contact_id
            assert len(data["data"]) == 1 and list(data["data"][0]) == READ_SHAPE
            assert data["data"][0]["lastname"] == "Diaz"
            assert got.headers["etag"] == '"1"'
            # ...also with the workspace in the query only.
            by_query = client.get(
                f"/api/contact/{contact_id}",
                params={"workspaceId": workspace_id},
                headers={"x-workspace-id": ""},
            )
            assert ok(by_query, "Successfully obtained list.")["data"][0]["id"] == contact_id

            # Update Contact
            updated = client.put(
                "/api/contact",
                params={"id": contact_id, "workspaceId": workspace_id},
                json={"paramToUpdate": "name,isRead", "name": "Ana María", "isRead": True},
            )
            data = ok(updated, "Contact updated successfully.")
            assert list(data) == ["id", "contact"] and data["id"] == contact_id
            assert list(data["contact"]) == UPDATE_SHAPE
            assert data["contact"]["name"] == "Ana María" and data["contact"]["isRead"] is True
            assert updated.headers["etag"] == '"2"'

            # Create Opportunity
            response = client.post(
                "/api/opportunity",
                json={"name": "Deal", "amount": 2500.75, "contactId": contact_id},
            )
            data = ok(response, "Opportunity successfully created.")
            assert list(data) == ["id", "opportunity"]
            opportunity = data["opportunity"]
            assert list(opportunity) == OPPORTUNITY_SHAPE
            assert re.fullmatch(r"OPP-\d{4}-0001", opportunity["opportCode"])
            assert '"amount":2500.75' in response.text.replace(" ", "")
            assert opportunity["contactId"] == contact_id
            assert opportunity["finalAmount"] == opportunity["amount"]
            assert opportunity["updatedDate"] is None
            opportunity_id = data["id"]

            # Update Opportunity
            response = client.put(
                "/api/opportunity",
                params={"id": opportunity_id},
                json={"paramToUpdate": "amount,winLossStatus", "amount": 3000, "winLossStatus": 1},
            )
            data = ok(response, "Opportunity successfully updated.")
            assert list(data) == ["id", "oportunity"] and data["id"] == opportunity_id
            updated_opportunity = data["oportunity"]
            assert list(updated_opportunity) == OPPORTUNITY_SHAPE
            assert updated_opportunity["amount"] == 3000
            assert updated_opportunity["finalAmount"] == 3000
            assert updated_opportunity["winLossStatus"] == 1
            assert updated_opportunity["opportStatus"] == 2
            assert TIMESTAMP.match(updated_opportunity["winLossDate"])
            assert TIMESTAMP.match(updated_opportunity["updatedDate"])
            assert updated_opportunity["opportCode"] == opportunity["opportCode"]

            # Errors travel the same way.
            failed(client.get("/api/nothing"), 404, "NOT_FOUND")
            failed(
                client.get(f"/api/contact/{contact_id}", headers={"Authorization": ""}),
                401,
                "UNAUTHORIZED",
            )
            failed(
                client.put(
                    "/api/opportunity",
                    params={"id": opportunity_id},
                    json={"paramToUpdate": "name", "name": "x"},
                    headers={"x-workspace-id": ""},
                ),
                401,
                "WORKSPACE_REQUIRED",
            )
            failed(
                client.post(
                    "/api/contact", content=b"name=x", headers={"Content-Type": "text/plain"}
                ),
                415,
                "UNSUPPORTED_MEDIA_TYPE",
            )
            failed(
                client.post(
                    "/api/contact",
                    content=b"{" + b" " * (1024 * 1024) + b"}",
                    headers={"Content-Type": "application/json"},
                ),
                413,
                "PAYLOAD_TOO_LARGE",
            )

            def chunks() -> Iterator[bytes]:
                yield b'{"name": "'
                for _ in range(20):
                    yield b"a" * 65536
                yield b'"}'

            streamed = client.post(
                "/api/contact", content=chunks(), headers={"Content-Type": "application/json"}
            )
            assert "content-length" not in streamed.request.headers
            failed(streamed, 413, "PAYLOAD_TOO_LARGE")
            # The connection and the data survive all of that.
            data = ok(client.get(f"/api/contact/{contact_id}"), "Successfully obtained list.")
            assert data["data"][0]["name"] == "Ana María"

    # A second start on the same database migrates nothing new and creates no demo account.
    with serve(fresh_database_url) as server:
        assert "API key" not in "".join(server.stdout), server.output()
        headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace_id}
        with httpx.Client(base_url=server.base_url, headers=headers, timeout=30) as client:
            data = ok(client.get(f"/api/contact/{contact_id}"), "Successfully obtained list.")
            assert data["data"][0]["name"] == "Ana María"


def test_two_workers_draw_gap_free_opportunity_codes(fresh_database_url: str) -> None:
    with serve(fresh_database_url, workers=2) as server:
        workspace_id, key = server.demo()
        headers = {"Authorization": f"Bearer {key}", "x-workspace-id": workspace_id}
        with httpx.Client(
            base_url=server.base_url,
            headers=headers,
            timeout=60,
            limits=httpx.Limits(max_connections=48, max_keepalive_connections=48),
        ) as client:
            # Warm both workers' pools so the burst below really overlaps.
            for _ in range(4):
                ok(client.get("/ready"), "Service is ready.")

            def create(i: int) -> httpx.Response:
                return client.post("/api/opportunity", json={"name": f"Deal {i}", "amount": i})

            with ThreadPoolExecutor(max_workers=48) as pool:
                responses = list(pool.map(create, range(48)))
        codes = []
        for response in responses:
            opportunity = ok(response, "Opportunity successfully created.")["opportunity"]
            codes.append(opportunity["opportCode"])
        assert len(set(codes)) == 48, sorted(codes)
        years = {code.split("-")[1] for code in codes}
        assert len(years) == 1
        numbers = sorted(int(code.split("-")[2]) for code in codes)
        assert numbers == list(range(1, 49))
        assert all(re.fullmatch(r"OPP-\d{4}-\d{4}", code) for code in codes)
