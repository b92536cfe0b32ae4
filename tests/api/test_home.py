"""`/` leads a person who opens the service's address to the web console (contract H)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from tests.client import error


def test_root_redirects_to_the_console(http: TestClient) -> None:
    for method in ("GET", "HEAD"):
        response = http.request(method, "/", follow_redirects=False)
        assert response.status_code == 307, method
        assert response.headers["location"] == "/console"
        assert response.content == b""
        assert response.headers["x-request-id"]
    landed = http.get("/")
    assert landed.status_code == 200
    assert landed.url.path == "/console"
    assert landed.headers["content-type"].startswith("text/html")


def test_root_answers_other_methods_in_the_envelope(http: TestClient) -> None:
    response = http.post("/")
    body = error(response, 405, "METHOD_NOT_ALLOWED")
    assert body["data"] is None
    assert response.headers["allow"] == "GET, HEAD"


@pytest.fixture
def behind_a_prefix(settings: Settings) -> Iterator[TestClient]:
    """The app as a proxy that serves it under /crm presents it (ASGI root_path)."""
    with TestClient(create_app(settings), root_path="/crm") as client:
        yield client


def test_redirect_follows_the_proxy_prefix(behind_a_prefix: TestClient) -> None:
    response = behind_a_prefix.get("/", follow_redirects=False)
    assert response.status_code == 307
    assert response.headers["location"] == "/crm/console"
