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

from hypothesis import HealthCheck, Phase, given, seed  # noqa: E402
from hypothesis import settings as hypothesis_settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis import GenerationMode  # noqa: E402

# Bounds: per operation and generation mode, and for the deterministic coverage cases.
GENERATED_EXAMPLES = 25
SEED = 20251125
COVERAGE_CASES = 80
# Values that reach the database as they are in a string parameter: NUL (which PostgreSQL
# text cannot hold), LIKE wildcards and escapes, quotes, non-ASCII, control characters and
# a long value.
HOSTILE_STRINGS = ("\x00", "a\x00b", "%_\\", "' OR '1'='1", "Zoë 🙂", "\n\t", "9" * 4000)
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


REPORTED: set[str] = set()


def unreached_report() -> list[str]:
    """Lines for the backends not reported yet (the module's fixtures end once per backend)."""
    lines = []
    for backend, operations in sorted(SEEN.items()):
        if backend in REPORTED:
            continue
        REPORTED.add(backend)
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
    lines = unreached_report()
    if reporter is None or capture is None or not lines:
        return
    with capture.global_and_fixture_disabled():
        reporter.write_sep("-", "schemathesis: statuses per operation")
        for line in lines:
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


def name_the_fields(case: Any, records: Records) -> None:
    """Turn a generated update of a real record into a well-formed one (`paramToUpdate`
    naming the field the body carries), so the handler gets past the 400s."""
    body = case.body
    query = case.query or {}
    if case.method.upper() != "PUT" or not isinstance(body, dict):
        return
    if query.get("id") not in (records.contact, records.opportunity):
        return
    fields = [k for k in body if k not in ("paramToUpdate", "id", "workspaceId")]
    # One field at a time: a single invalid value would otherwise hide every valid one.
    if fields:
        case.body = {"paramToUpdate": fields[0], fields[0]: body[fields[0]]}


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
    # An empty path parameter makes another path (`/api/workspace/`): no route, 404.
    route_miss = any(str(v) == "" for v in (case.path_parameters or {}).values())
    if route_miss and status != 404:
        reasons.append(f"empty path parameter answered {status}, not 404")
    elif not route_miss and own_method and status < 500 and status not in documented:
        reasons.append(f"undocumented status {status}")
    if not own_method and not route_miss and status != 405:
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


def explore(strategy: Any, send: Any) -> None:
    """Send GENERATED_EXAMPLES cases of the strategy, from a fixed seed. Problems are
    collected by `send`, never raised, so nothing is shrunk and every example is sent."""

    @seed(SEED)
    @hypothesis_settings(
        max_examples=GENERATED_EXAMPLES,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        send(case)

    run()


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

    def send(case: Any, mode: Any = None) -> None:
        nonlocal sent
        authorize(case, account)
        if mode is GenerationMode.POSITIVE:
            name_the_fields(case, records)
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
        try:
            explore(strategy, lambda case, mode=mode: send(case, mode))
        except Unsatisfiable:
            # No parameters and no body: there is no invalid request to make.
            assert mode is GenerationMode.NEGATIVE

    # 3. Each hostile string in each string parameter of the path and the query, the
    #    other parameters naming the workspace and its records.
    base = pinned(operation, account, records)
    for location, values in (("path", base["path_parameters"]), ("query", base["query"])):
        for name in sorted(parameter_names(operation, location)):
            for hostile in HOSTILE_STRINGS:
                if location == "path" and hostile.isspace():
                    continue  # HTTP clients strip tabs and newlines from URLs
                if location == "path":
                    case = operation.Case(
                        path_parameters={**values, name: hostile}, query=base["query"]
                    )
                else:
                    case = operation.Case(
                        path_parameters=base["path_parameters"], query={**values, name: hostile}
                    )
                send(case)

    assert sent >= 10
    assert not problems, f"{len(problems)} distinct problem(s):\n" + "\n".join(
        str(p) for p in problems.values()
    )
