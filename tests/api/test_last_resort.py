"""The answers the request context gives itself (contract section 5): a fault past the
route is a 500 `INTERNAL_ERROR` that shows nothing of it, a database that went away is a
503 with `Retry-After`, and either carries the request id and the caller's `RateLimit-*`
headers like any other answer. What the request wrote is there whole, with its event, or
not at all (docs/operations.md 4.3: an update made by one statement commits with it)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from chatcrm.api.routing import ApiRoute, api_routes
from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.errors import Unavailable
from chatcrm.provisioning import NewAccount
from tests.client import Api, error, ok_data
from tests.reliability.test_rate_limit import limits

# What the fault says: none of it may reach the client.
SECRET_DETAIL = "UPDATE contacts SET name = 'x' -- ccrm_0123456789abcdef"


@pytest.fixture
def app_and_api(settings: Settings, account: NewAccount) -> Iterator[tuple[Any, Api]]:
    """An app of its own (the fault is put into its routes), limiter and access log on."""
    app = create_app(
        settings.model_copy(update={"rate_limit": 5, "rate_burst": 100, "access_log": True})
    )
    with TestClient(app, raise_server_exceptions=False) as client:
        yield app, Api(client, account)


def route_of(app: Any, operation_id: str) -> ApiRoute:
    (route,) = [r for r in api_routes(app.router.routes) if r.name == operation_id]
    return route


def fail_after_the_work(
    monkeypatch: pytest.MonkeyPatch, route: ApiRoute, fault: BaseException
) -> None:
    """The route does all its work (its writes included), then `fault` is raised."""
    work: Callable[..., Awaitable[Any]] = route.endpoint_function

    async def failing(*args: Any, **kwargs: Any) -> Any:
        await work(*args, **kwargs)
        raise fault

    monkeypatch.setattr(route, "endpoint_function", failing)


def rename(api: Api, contact_id: str, **kw: Any) -> Any:
    return api.update_contact(contact_id, {"paramToUpdate": "name", "name": "Renamed"}, **kw)


def whole_or_nothing(api: Api, contact_id: str) -> None:
    """The rename that ran before the fault: made with its event, or not at all."""
    name = ok_data(api.get_contact(contact_id))["data"][0]["name"]
    history = ok_data(api.get(f"/api/contact/{contact_id}/history"))
    kinds = [e["type"] for e in history["events"]]
    assert (name, kinds) in [
        ("Kept", ["contact.created"]),
        ("Renamed", ["contact.created", "contact.updated"]),
    ], (name, kinds)


def test_a_fault_past_the_route_is_a_500_that_shows_nothing_and_halves_nothing(
    app_and_api: tuple[Any, Api],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    app, api = app_and_api
    contact = api.create_contact(name="Kept")
    fail_after_the_work(monkeypatch, route_of(app, "updateContact"), RuntimeError(SECRET_DETAIL))

    with caplog.at_level(logging.INFO):
        response = rename(api, contact["id"], headers={"X-Request-Id": "fault-500"})

    body = error(response, 500, "INTERNAL_ERROR")
    assert body["data"] is None
    for leaked in ("UPDATE", "ccrm_", "Traceback", "RuntimeError", "contacts"):
        assert leaked not in response.text, response.text
    assert response.headers["x-request-id"] == "fault-500"
    assert limits(response)[0] == 100
    whole_or_nothing(api, contact["id"])
    # The server's own log has the fault, under the request's id; the access line its 500.
    faults = [r for r in caplog.records if r.getMessage() == "unhandled error"]
    assert len(faults) == 1 and faults[0].request_id == "fault-500"
    assert faults[0].exc_info is not None
    lines = [r for r in caplog.records if r.getMessage() == "request"]
    assert [(r.request_id, r.status) for r in lines][-1] == ("fault-500", 500)


def test_a_database_gone_past_the_route_is_a_503_with_retry_after(
    app_and_api: tuple[Any, Api], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, api = app_and_api
    contact = api.create_contact(name="Kept")
    gone = Unavailable(f"ConnectionError: {SECRET_DETAIL}")
    fail_after_the_work(monkeypatch, route_of(app, "updateContact"), gone)

    response = rename(api, contact["id"])

    body = error(response, 503, "SERVICE_UNAVAILABLE")
    assert "UPDATE" not in response.text and "ccrm_" not in response.text
    assert int(response.headers["retry-after"]) >= 1
    assert limits(response)[0] == 100
    assert body["data"] is None
    whole_or_nothing(api, contact["id"])
