"""/docs and /redoc render the whole API in chromium with nothing from outside the server:
every request to another origin is refused, and the pages must not need one."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.browser.conftest import Visit

pytestmark = [pytest.mark.browser, pytest.mark.slow]

METHODS = {"get", "put", "post", "delete", "patch", "head", "options", "trace"}
RENDER_TIMEOUT_MS = 30_000


@pytest.fixture(scope="module")
def document(server: str) -> dict[str, Any]:
    response = httpx.get(f"{server}/openapi.json", timeout=30)
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def operations(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Each documented operation, with its method and path."""
    return [
        {**operation, "method": method, "path": path}
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    ]


def test_swagger_ui_renders_every_operation_offline(visit: Visit, document: dict[str, Any]) -> None:
    expected = sorted((op["method"].upper(), op["path"]) for op in operations(document))
    assert len(expected) > 20
    visit.goto("/docs")
    page = visit.page
    # Swagger UI draws one `.opblock` per operation: its method, and its path in data-path.
    page.wait_for_function(
        "n => document.querySelectorAll('.opblock').length >= n",
        arg=len(expected),
        timeout=RENDER_TIMEOUT_MS,
    )
    rendered = page.eval_on_selector_all(
        ".opblock",
        """blocks => blocks.map(b => [
            b.querySelector('.opblock-summary-method').textContent.trim(),
            b.querySelector('[data-path]').getAttribute('data-path'),
        ])""",
    )
    assert sorted(tuple(pair) for pair in rendered) == expected
    title = page.locator(".info .title").inner_text()
    assert title.startswith(document["info"]["title"])
    assert visit.settle() == []


def test_redoc_renders_every_operation_offline(visit: Visit, document: dict[str, Any]) -> None:
    documented = operations(document)
    assert all(op.get("operationId") and op.get("summary") for op in documented)
    visit.goto("/redoc")
    page = visit.page
    # ReDoc gives each operation a section `operation/<operationId>`.
    sections = [f'[data-section-id="operation/{op["operationId"]}"]' for op in documented]
    page.wait_for_function(
        "selectors => selectors.every(s => document.querySelector(s) !== null)",
        arg=sections,
        timeout=RENDER_TIMEOUT_MS,
    )
    heading = page.locator("h1").first.inner_text()
    assert heading.startswith(document["info"]["title"]), heading
    text = page.locator("body").inner_text()
    missing = [op["summary"] for op in documented if op["summary"] not in text]
    assert missing == []
    # Not even an attempt at another origin: ReDoc's logo is served as a data: URL
    # (api/docs.py), so neither the test's router nor the page's policy refuses anything.
    assert visit.settle() == []
    assert visit.blocked == []
    logo = page.locator('img[alt="redocly logo"]')
    if logo.count():
        assert (logo.get_attribute("src") or "").startswith("data:image/svg+xml")


def test_swagger_ui_try_it_out_reaches_the_server(visit: Visit) -> None:
    """The page's policy lets Swagger UI's own requests through: a person can run a call."""
    visit.goto("/docs")
    page = visit.page
    health = page.locator("#operations-operations-health")  # operations-<tag>-<operationId>
    health.locator(".opblock-summary-control").click()
    health.get_by_role("button", name="Try it out").click()
    health.get_by_role("button", name="Execute").click()
    status = health.locator(".live-responses-table tbody .response-col_status").first
    status.wait_for(timeout=RENDER_TIMEOUT_MS)
    assert status.inner_text().strip() == "200"
    assert '"Service is healthy."' in health.locator(".live-responses-table tbody").inner_text()
    assert visit.settle() == []
