"""Operations endpoints (contract C): liveness, readiness, Prometheus metrics, the request
log, and the API description (`/openapi.json`; the pages in tests/api/test_docs_pages.py)."""

from __future__ import annotations

import json
import logging
import sys
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from chatcrm.app import create_app
from chatcrm.auth.scopes import ROUTE_SCOPES
from chatcrm.config import Settings
from chatcrm.logs import JsonFormatter
from chatcrm.provisioning import NewAccount
from tests.client import ENVELOPE_KEYS, Api, error, ok_data

REQUESTS = "chatcrm_http_requests_total"
LATENCY = "chatcrm_http_request_duration_seconds"
CONTACT_ROUTE = "/api/contact/{contactId}"
LOG_FIELDS = ("request_id", "method", "path", "route", "status", "duration_ms", "key_id")

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def envelope(response: Any) -> dict[str, Any]:
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert list(body) == ENVELOPE_KEYS, body
    return body


# --- /health and /ready -------------------------------------------------------------------


def test_health_needs_no_key(http: TestClient) -> None:
    response = http.get("/health")
    assert ok_data(response, "Service is healthy.") == {"status": "ok"}
    envelope(response)
    assert response.headers["x-request-id"]
    # No key, a malformed one or an unknown one: liveness does not care.
    for authorization in ("Bearer nope", "Basic abc", "Bearer ccrm_unknown_key"):
        response = http.get("/health", headers={"Authorization": authorization})
        assert ok_data(response, "Service is healthy.") == {"status": "ok"}


def test_health_echoes_the_request_id(http: TestClient) -> None:
    response = http.get("/health", headers={"X-Request-Id": "ops-health-1"})
    assert response.headers["x-request-id"] == "ops-health-1"


def test_ready_names_the_database(http: TestClient, dialect: str) -> None:
    response = http.get("/ready")
    data = ok_data(response, "Service is ready.")
    envelope(response)
    assert data == {"status": "ready", "database": dialect}  # Citus: "postgresql"
    assert data["database"] in ("sqlite", "postgresql")
    assert response.headers["x-request-id"]


def test_ready_needs_no_key(http: TestClient) -> None:
    response = http.get("/ready", headers={"Authorization": "Bearer nope"})
    assert ok_data(response, "Service is ready.")["status"] == "ready"


def test_probes_answer_head_like_get_without_a_body(http: TestClient) -> None:
    for path in ("/health", "/ready"):
        response = http.head(path)
        assert response.status_code == 200, (path, response.status_code)
        assert response.content == b""
        assert response.headers["x-request-id"]


def test_ops_endpoints_answer_unknown_methods_in_the_envelope(http: TestClient) -> None:
    for path in ("/health", "/ready", "/metrics"):
        response = http.post(path, json={})
        body = error(response, 405, "METHOD_NOT_ALLOWED")
        assert body["data"] is None
        assert "GET" in response.headers["allow"]


# --- /metrics -----------------------------------------------------------------------------


def scrape(http: TestClient) -> tuple[str, Samples]:
    response = http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.headers["x-request-id"]
    text = response.text
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return text, samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def test_metrics_is_prometheus_text_not_an_envelope(http: TestClient) -> None:
    http.get("/health")
    text, samples = scrape(http)
    with pytest.raises(ValueError):
        json.loads(text)
    assert "success" not in text.splitlines()[0]
    for family in (REQUESTS, LATENCY, "chatcrm_db_pool_connections_in_use"):
        assert f"# TYPE {family.removesuffix('_total')}" in text
    assert "# HELP chatcrm_db_pool_connections_open " in text
    assert samples


def test_metrics_answer_head_like_get_without_a_body(http: TestClient) -> None:
    got = http.get("/metrics")
    response = http.head("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"] == got.headers["content-type"]
    assert response.content == b""
    assert response.headers["x-request-id"]


def test_metrics_need_no_key(http: TestClient) -> None:
    response = http.get("/metrics", headers={"Authorization": "Bearer nope"})
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")


def test_request_counts_are_labelled_by_route_template(http: TestClient, api: Api) -> None:
    contact = api.create_contact()
    cid = contact["id"]
    _, before = scrape(http)
    found, missing, unauthenticated = 3, 2, 1
    for _ in range(found):
        ok_data(api.get_contact(cid))
    for _ in range(missing):
        error(api.get_contact(str(uuid.uuid4())), 404, "CONTACT_NOT_FOUND")
    for _ in range(unauthenticated):
        error(api.get_contact(cid, auth=None), 401, "UNAUTHORIZED")
    text, after = scrape(http)

    line = f'{REQUESTS}{{method="GET",route="{CONTACT_ROUTE}",status="200"}}'
    assert line in text

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    route = {"method": "GET", "route": CONTACT_ROUTE}
    assert delta(REQUESTS, **route, status="200") == found
    assert delta(REQUESTS, **route, status="404") == missing
    assert delta(REQUESTS, **route, status="401") == unauthenticated
    # The template, never the raw path: one series per route, not one per record.
    assert cid not in text
    assert f'route="/api/contact/{cid}"' not in text

    total = found + missing + unauthenticated
    assert delta(f"{LATENCY}_count", **route) == total
    assert delta(f"{LATENCY}_bucket", **route, le="+Inf") == total
    assert delta(f"{LATENCY}_sum", **route) > 0
    bounds = sorted(
        {dict(labels)["le"] for name, labels in after if name == f"{LATENCY}_bucket"},
        key=lambda le: float("inf") if le == "+Inf" else float(le),
    )
    assert len(bounds) > 3
    cumulative = [delta(f"{LATENCY}_bucket", **route, le=le) for le in bounds]
    assert cumulative == sorted(cumulative) and 0 <= cumulative[0] <= total
    assert f'{LATENCY}_bucket{{le="+Inf",method="GET",route="{CONTACT_ROUTE}"}}' in text


def test_other_routes_and_methods_have_their_own_series(http: TestClient, api: Api) -> None:
    _, before = scrape(http)
    api.create_contact()
    ok_data(api.get("/api/contact"))
    http.get("/health")
    _, after = scrape(http)

    def delta(**labels: str) -> float:
        return value(after, REQUESTS, **labels) - value(before, REQUESTS, **labels)

    assert delta(method="POST", route="/api/contact", status="200") == 1
    assert delta(method="GET", route="/api/contact", status="200") == 1
    assert delta(method="GET", route="/health", status="200") == 1
    # The scrape before this one is counted under its own route.
    assert delta(method="GET", route="/metrics", status="200") == 1


def test_unknown_paths_share_one_series(http: TestClient, api: Api) -> None:
    _, before = scrape(http)
    paths = [f"/api/nothing-{uuid.uuid4().hex}" for _ in range(2)]
    for path in paths:
        error(api.get(path), 404, "NOT_FOUND")
    text, after = scrape(http)
    for path in paths:
        assert path not in text
    labels = {"method": "GET", "route": "unmatched", "status": "404"}
    assert value(after, REQUESTS, **labels) - value(before, REQUESTS, **labels) == 2


def test_pool_gauges_are_exported(http: TestClient, api: Api) -> None:
    api.create_contact()
    text, samples = scrape(http)
    assert "chatcrm_db_pool_connections_in_use " in text
    assert "chatcrm_db_pool_connections_open " in text
    in_use = value(samples, "chatcrm_db_pool_connections_in_use")
    open_ = value(samples, "chatcrm_db_pool_connections_open")
    # Set after the previous request finished: nothing is checked out between requests.
    assert in_use == 0
    assert open_ >= 1  # the pool keeps the connections the requests above opened
    assert open_ == int(open_)


# --- the request log ----------------------------------------------------------------------


@pytest.fixture
def logged(settings: Settings) -> Iterator[TestClient]:
    """An app of its own with the access log on (the shared one has it off)."""
    app = create_app(settings.model_copy(update={"access_log": True}))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def request_records(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "chatcrm.request"]


def test_each_request_logs_one_record(
    logged: TestClient, account: NewAccount, caplog: pytest.LogCaptureFixture
) -> None:
    api = Api(logged, account)
    cid = api.create_contact()["id"]
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="chatcrm.request"):
        response = api.get_contact(cid, headers={"X-Request-Id": "trace-ops-42"})
    assert response.status_code == 200
    records = request_records(caplog)
    assert len(records) == 1
    record = records[0]
    assert record.levelno == logging.INFO
    assert record.getMessage() == "request"
    fields = {name: getattr(record, name) for name in LOG_FIELDS}
    assert fields["request_id"] == "trace-ops-42" == response.headers["x-request-id"]
    assert fields["method"] == "GET"
    assert fields["path"] == f"/api/contact/{cid}"
    assert fields["route"] == CONTACT_ROUTE
    assert fields["status"] == 200
    assert isinstance(fields["duration_ms"], float) and fields["duration_ms"] >= 0
    assert fields["key_id"] == account.key_id


def test_log_records_follow_every_outcome(
    logged: TestClient, account: NewAccount, caplog: pytest.LogCaptureFixture
) -> None:
    api = Api(logged, account)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="chatcrm.request"):
        responses = [
            logged.get("/health"),
            api.get_contact(str(uuid.uuid4())),
            api.get("/api/contact", auth=None),
            api.get("/api/unknown-route"),
            api.post("/api/contact", json={"name": "Ana", "email": "ana.ops@example.com"}),
        ]
    records = request_records(caplog)
    assert len(records) == len(responses)
    expected = [
        ("GET", "/health", "/health", 200, None),
        ("GET", None, CONTACT_ROUTE, 404, account.key_id),
        ("GET", "/api/contact", "/api/contact", 401, None),
        ("GET", "/api/unknown-route", "unmatched", 404, account.key_id),
        ("POST", "/api/contact", "/api/contact", 200, account.key_id),
    ]
    for record, response, (method, path, route, status, key_id) in zip(
        records, responses, expected, strict=True
    ):
        assert response.status_code == status
        assert record.request_id == response.headers["x-request-id"]  # type: ignore[attr-defined]
        assert record.method == method  # type: ignore[attr-defined]
        if path is not None:
            assert record.path == path  # type: ignore[attr-defined]
        assert record.route == route  # type: ignore[attr-defined]
        assert record.status == status  # type: ignore[attr-defined]
        assert record.key_id == key_id  # type: ignore[attr-defined]
    # Generated request ids are distinct.
    assert len({r.request_id for r in records}) == len(records)  # type: ignore[attr-defined]


def test_the_shared_app_logs_no_requests(
    http: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """`access_log=False` turns the per-request record off."""
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="chatcrm.request"):
        assert http.get("/health").status_code == 200
    assert request_records(caplog) == []


def test_request_records_format_as_json_lines(
    logged: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="chatcrm.request"):
        response = logged.get("/ready", headers={"X-Request-Id": "ops-json-1"})
    (record,) = request_records(caplog)
    line = JsonFormatter().format(record)
    assert "\n" not in line
    out = json.loads(line)
    assert out["logger"] == "chatcrm.request"
    assert out["level"] == "info"
    assert out["msg"] == "request"
    assert out["request_id"] == "ops-json-1" == response.headers["x-request-id"]
    assert out["route"] == "/ready" and out["status"] == 200 and out["key_id"] is None


def make_record(
    msg: str, *args: Any, extra: dict[str, Any] | None = None, exc_info: Any = None
) -> logging.LogRecord:
    logger = logging.getLogger("chatcrm.test")
    return logger.makeRecord(
        logger.name, logging.WARNING, __file__, 1, msg, args, exc_info, extra=extra
    )


def test_json_formatter_writes_one_object_per_line() -> None:
    record = make_record(
        "user %s did\nsomething",
        "ana",
        extra={"request_id": "r-1", "status": 201, "ratio": 0.5, "tags": ["a", "b"]},
    )
    line = JsonFormatter().format(record)
    assert "\n" not in line
    out = json.loads(line)
    assert list(out)[:4] == ["ts", "level", "logger", "msg"]
    assert out["level"] == "warning"
    assert out["logger"] == "chatcrm.test"
    assert out["msg"] == "user ana did\nsomething"
    assert out["request_id"] == "r-1"
    assert out["status"] == 201 and out["ratio"] == 0.5 and out["tags"] == ["a", "b"]
    # Only the extra fields: none of LogRecord's own attributes leak into the line.
    assert set(out) == {"ts", "level", "logger", "msg", "request_id", "status", "ratio", "tags"}
    ts = datetime.fromisoformat(out["ts"])
    assert ts.utcoffset() == timedelta(0)
    assert abs(ts.timestamp() - record.created) < 0.001


def test_json_formatter_stringifies_what_json_cannot_hold() -> None:
    class Thing:
        def __str__(self) -> str:
            return "a thing"

    out = json.loads(JsonFormatter().format(make_record("x", extra={"thing": Thing()})))
    assert out["thing"] == "a thing"


def test_json_formatter_includes_the_exception() -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        record = make_record("failed", exc_info=sys.exc_info())
    line = JsonFormatter().format(record)
    assert "\n" not in line  # the traceback is escaped inside the JSON string
    out = json.loads(line)
    assert out["msg"] == "failed"
    assert "RuntimeError: boom" in out["exc"]
    assert out["exc"].startswith("Traceback")


# --- the API description ------------------------------------------------------------------


def test_openapi_document_is_served(http: TestClient) -> None:
    response = http.get("/openapi.json")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["x-request-id"]
    document = response.json()
    assert document["openapi"].startswith("3.")
    assert document["info"]["title"] == "chatcrm"
    assert "/api/contact" in document["paths"]
    schemes = document["components"]["securitySchemes"]
    assert schemes["apiKey"] == {**schemes["apiKey"], "type": "http", "scheme": "bearer"}
    assert schemes["session"] == {
        **schemes["session"],
        "type": "apiKey",
        "in": "cookie",
        "name": "chatcrm_session",
    }
    # Every /api operation asks for a key or a session, with the scope of its route (J.2),
    # but signing in and accepting a link; the operations endpoints ask for nothing.
    open_ones = {"/api/session": {"post"}, "/api/invitation/accept": {"post"}}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            names = {n for requirement in operation.get("security") or [] for n in requirement}
            if path.startswith("/api") and method not in open_ones.get(path, ()):
                assert names == {"apiKey", "session"}, (path, operation.get("security"))
                required = ROUTE_SCOPES[operation["operationId"]]
                assert required is not None
                listed = {s for r in operation["security"] for ss in r.values() for s in ss}
                assert listed == {s for s in required if s}, (path, method)
            else:
                assert not names, path
    operation_ids = [
        operation["operationId"]
        for operations in document["paths"].values()
        for operation in operations.values()
    ]
    # Stable, explicit ids (SDK method names depend on them), each used once.
    assert len(operation_ids) == len(set(operation_ids))
    assert {"updateOpportunity", "getContactById", "updateContact", "health"} <= set(operation_ids)
    assert all("_" not in op for op in operation_ids), operation_ids


def test_docs_page_answers(http: TestClient) -> None:
    response = http.get("/docs")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    assert "/openapi.json" in response.text


def test_text_log_lines_keep_the_request_fields() -> None:
    import logging

    from chatcrm.logs import TextFormatter

    record = logging.makeLogRecord(
        {
            "name": "chatcrm.request",
            "levelname": "INFO",
            "msg": "request",
            "status": 200,
            "request_id": "abc",
        }
    )
    line = TextFormatter().format(record)
    assert line.startswith("INFO chatcrm.request: request")
    assert "status=200" in line and "request_id=abc" in line
