"""Property-based run of the service against its OWN `/openapi.json`, on both backends.

For every documented operation, schemathesis sends its deterministic coverage cases and a
bounded number of generated valid and invalid requests (fixed seed), each with the
account's API key and its workspace header. Every answer must:

- never be a 5xx;
- be the five-key envelope `{success, code, errorCode, message, data}` with `code` equal
  to the HTTP status (except `/metrics`, which is Prometheus text);
- have a status the operation documents (requests with a method the path does not serve
  must be 405 in the envelope).

Half the generated requests address real records of the workspace (ids and workspace in
path and query), so the run gets past the 403/404 gate into the handlers. The statuses
seen per operation are printed at the end of the module, with the documented ones that
were never reached.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.provisioning import NewAccount
from tests.client import ENVELOPE_KEYS, Api

schemathesis = pytest.importorskip("schemathesis")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, Phase, given  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402

# Bounds: per operation and generation mode, and for the deterministic coverage cases.
GENERATED_EXAMPLES = 25
COVERAGE_CASES = 80
NOT_ENVELOPED = {"/metrics", "/openapi.json", "/docs"}


def _operation_labels() -> list[str]:
    """The documented operations, read from the document the app serves."""
    document = create_app(Settings()).openapi()
    return [
        f"{method.upper()} {path}"
        for path, operations in document["paths"].items()
        for method in operations
    ]


OPERATIONS = _operation_labels()

# backend -> operation label -> statuses seen (requests with the operation's own method).
SEEN: dict[str, dict[str, set[int]]] = defaultdict(lambda: defaultdict(set))
DOCUMENTED: dict[str, set[int]] = {}


@dataclass
class Problem:
    operation: str
    reason: str
    request: str
    status: int | None
    body: str

    def key(self) -> tuple[str, str, int | None]:
        return (self.operation, self.reason, self.status)

    def __str__(self) -> str:
        return (
            f"{self.operation}: {self.reason}\n"
            f"  request: {self.request}\n"
            f"  response: {self.status} {self.body[:500]}"
        )


@pytest.fixture(scope="module")
def loaded(settings: Settings, backend: str) -> Iterator[Any]:
    """The schema, loaded from the app itself; requests go to that app in-process."""
    app = create_app(settings)
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    yield schema
    from schemathesis.python import asgi

    asgi.shutdown_lifespans()  # closes the app's database pools


def unreached_report() -> list[str]:
    lines = []
    for backend, operations in sorted(SEEN.items()):
        for label in OPERATIONS:
            seen = operations.get(label)
            if seen is not None:
                never = sorted(DOCUMENTED.get(label, set()) - seen)
                lines.append(f"[{backend}] {label}: seen {sorted(seen)}; never reached {never}")
    return lines


@pytest.fixture(scope="module", autouse=True)
def report(request: pytest.FixtureRequest) -> Iterator[None]:
    """After the run: which documented statuses no request reached (information only)."""
    yield
    reporter = request.config.pluginmanager.getplugin("terminalreporter")
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if reporter is None or capture is None or not SEEN:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_sep("-", "schemathesis: statuses per operation")
        for line in unreached_report():
            reporter.write_line(line)


@dataclass
class Records:
    contact: str
    opportunity: str


@pytest.fixture
def records(http: TestClient, account: NewAccount) -> Records:
    api = Api(http, account)
    return Records(
        contact=api.create_contact(name="Seed")["id"],
        opportunity=api.create_opportunity(name="Seed deal")["id"],
    )


def documented_statuses(operation: Any) -> set[int]:
    out: set[int] = set()
    for status in operation.definition.raw.get("responses", {}):
        text = str(status)
        if text.isdigit():
            out.add(int(text))
        elif len(text) == 3 and text[0].isdigit() and text[1:].upper() == "XX":
            out.update(range(int(text[0]) * 100, int(text[0]) * 100 + 100))
    return out


def parameter_names(operation: Any, location: str) -> set[str]:
    return {
        p["name"] for p in operation.definition.raw.get("parameters", []) if p["in"] == location
    }


def pinned(operation: Any, account: NewAccount, records: Records) -> dict[str, dict[str, str]]:
    """Path and query values naming the workspace and its real records."""
    path_names = parameter_names(operation, "path")
    query_names = parameter_names(operation, "query")
    values = {
        "workspaceId": account.workspace_id,
        "contactId": records.contact,
        "opportunityId": records.opportunity,
    }
    path = {name: values[name] for name in path_names if name in values}
    query: dict[str, str] = {}
    if "workspaceId" in query_names:
        query["workspaceId"] = account.workspace_id
    if "id" in query_names:
        query["id"] = records.contact if "/contact" in operation.path else records.opportunity
    return {"path_parameters": path, "query": query}


def authorize(case: Any, account: NewAccount) -> None:
    """The two headers every request carries, whatever was generated for them."""
    headers = dict(case.headers or {})
    for name in list(headers):
        if name.lower() in ("authorization", "x-workspace-id"):
            del headers[name]
    headers["Authorization"] = f"Bearer {account.api_key}"
    headers["x-workspace-id"] = account.workspace_id
    case.headers = headers


def _header(response: Any, name: str) -> str | None:
    for key, values in response.headers.items():
        if key.lower() == name:
            return values[0] if isinstance(values, list) else values
    return None


def judge(operation: Any, case: Any, response: Any, documented: set[int]) -> list[str]:
    """Everything wrong with one answer (empty when it conforms)."""
    status = response.status_code
    reasons: list[str] = []
    if status >= 500:
        reasons.append(f"server error {status}")
    if not _header(response, "x-request-id"):
        reasons.append("no X-Request-Id header")
    own_method = case.method.upper() == operation.method.upper()
    if own_method and status not in documented:
        reasons.append(f"undocumented status {status}")
    if not own_method and status != 405:
        reasons.append(f"method {case.method} on a path without it answered {status}")
    if operation.path in NOT_ENVELOPED and own_method:
        if status == 200 and operation.path == "/metrics":
            content_type = _header(response, "content-type") or ""
            if not content_type.startswith("text/plain"):
                reasons.append(f"/metrics content type {content_type!r}")
        return reasons
    content_type = _header(response, "content-type") or ""
    if not content_type.startswith("application/json"):
        reasons.append(f"content type {content_type!r}, not JSON")
    try:
        body = json.loads(response.content)
    except ValueError:
        return [*reasons, "body is not JSON"]
    if not isinstance(body, dict) or list(body) != ENVELOPE_KEYS:
        return [
            *reasons,
            f"not the envelope: keys {list(body) if isinstance(body, dict) else body!r}",
        ]
    if body["code"] != status:
        reasons.append(f"envelope code {body['code']} != HTTP status {status}")
    if body["success"] is not (status == 200):
        reasons.append(f"success {body['success']!r} with status {status}")
    if (body["errorCode"] is None) is not (status == 200):
        reasons.append(f"errorCode {body['errorCode']!r} with status {status}")
    if status != 200 and not (isinstance(body["errorCode"], str) and body["errorCode"].isupper()):
        reasons.append(f"errorCode {body['errorCode']!r} is not an UPPER_SNAKE code")
    if not isinstance(body["message"], str) or not body["message"]:
        reasons.append("empty message")
    if status != 200 and body["data"] is not None:
        data = body["data"]
        if not isinstance(data, dict) or not isinstance(data.get("errors"), list):
            reasons.append("error data is neither null nor an object with an errors list")
    return reasons


def describe(case: Any) -> str:
    try:
        return str(case.as_curl_command())
    except Exception:  # pragma: no cover - a case too odd to print as curl
        return f"{case.method} {case.formatted_path} {case.query!r} {case.body!r}"


def _text(response: Any) -> str:
    try:
        return str(response.content.decode("utf-8", "replace"))
    except Exception:  # pragma: no cover
        return repr(response.content)


@pytest.mark.parametrize("label", OPERATIONS)
def test_operation_conforms_to_its_document(
    loaded: Any, backend: str, account: NewAccount, records: Records, label: str
) -> None:
    method, path = label.split(" ", 1)
    operation = loaded[path][method]
    documented = documented_statuses(operation)
    DOCUMENTED[label] = documented
    seen = SEEN[backend][label]
    problems: dict[tuple[str, str, int | None], Problem] = {}
    sent = 0

    def send(case: Any) -> None:
        nonlocal sent
        authorize(case, account)
        response = case.call()
        sent += 1
        if case.method.upper() == method:
            seen.add(response.status_code)
        for reason in judge(operation, case, response, documented):
            problem = Problem(label, reason, describe(case), response.status_code, _text(response))
            problems.setdefault(problem.key(), problem)

    # 1. The deterministic coverage cases (boundaries, missing and wrong-typed values).
    generation = loaded.config.generation_for(operation=operation)
    coverage = list(
        loaded.iter_coverage_cases(
            operation,
            generation_modes=[GenerationMode.POSITIVE, GenerationMode.NEGATIVE],
            generation_config=generation,
        )
    )
    step = max(1, len(coverage) // COVERAGE_CASES)
    for case in coverage[::step][:COVERAGE_CASES]:
        send(case)

    # 2. Generated requests, valid and invalid; half of them aimed at real records.
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        strategy = st.one_of(
            operation.as_strategy(generation_mode=mode),
            operation.as_strategy(generation_mode=mode, **pinned(operation, account, records)),
        )

        @hypothesis_settings(
            max_examples=GENERATED_EXAMPLES,
            derandomize=True,
            database=None,
            deadline=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=strategy)
        def run(case: Any) -> None:
            send(case)

        try:
            run()
        except Unsatisfiable:
            # No parameters and no body: there is no invalid request to make.
            assert mode is GenerationMode.NEGATIVE

    assert sent >= 10
    assert not problems, f"{len(problems)} distinct problem(s):\n" + "\n".join(
        str(p) for p in problems.values()
    )
