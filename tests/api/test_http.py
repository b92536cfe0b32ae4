"""The HTTP layer (contract sections 0 and 5): the envelope, request ids, unknown routes and
methods, body size, media types and malformed bodies. None of the refused requests may
change data, and no error body may show a stack trace, a driver name or SQL."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Select, bindparam, select

from chatcrm.db.database import Database
from chatcrm.db.idlist import id_list, in_id_list
from chatcrm.db.schema import metadata, workspaces
from tests.client import ENVELOPE_KEYS, Api, error, ok_data, unique_email
from tests.conftest import on_database

MIB = 1024 * 1024

# A request's route, method, media type and body are read (and refused) before the database
# is asked: the same code on every backend. The many cases of that reading run on SQLite and
# PostgreSQL; on the Citus tier they would add nothing but time. Each write path still meets
# Citus below with every body template (no content type, a paired surrogate, the control
# bodies, a NUL in a key).
READ_BEFORE_THE_DATABASE = pytest.mark.not_on_citus

LEAK_PATTERNS = [
    re.compile(p)
    for p in (
        r"Traceback",
        r"(?i)sqlalchemy",
        r"(?i)asyncpg",
        r"(?i)sqlite3",
        r"(?i)aiosqlite",
        r"(?i)psycopg",
        r'File "',
        r"\bSELECT\b",
        r"\bINSERT\s+INTO\b",
        r"\bUPDATE\s+\w+\s+SET\b",
        r"\bDELETE\s+FROM\b",
        r"\bWHERE\b",
    )
]


def assert_no_leak(response: httpx.Response) -> None:
    for pattern in LEAK_PATTERNS:
        assert not pattern.search(response.text), (pattern.pattern, response.text)


def refused(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """An error envelope with this status and code that shows nothing of the internals."""
    body = error(response, status, code)
    assert response.headers["content-type"].startswith("application/json")
    assert_no_leak(response)
    return body


def snapshot(
    database_url: str, account_id: str, *, workspace_id: str | None = None
) -> dict[str, list[tuple[str, ...]]]:
    """Every stored row of the account's workspaces (or of one of them), to prove that a
    request changed nothing."""

    async def run(db: Database) -> dict[str, list[tuple[str, ...]]]:
        async with db.session() as conn:
            query = _workspaces_of(one=workspace_id is not None)
            ws_rows = await conn.fetch(query, {"_account": account_id, "_ws": workspace_id})
            ids = [row["id"] for row in ws_rows]
            out = {"workspaces": sorted(tuple(map(repr, row.values())) for row in ws_rows)}
            for table in metadata.sorted_tables:
                if "workspace_id" not in table.c:
                    continue
                rows = await conn.fetch(
                    _rows_of(table, conn.dialect), {"_ids": id_list(ids, conn.dialect)}
                )
                out[table.name] = sorted(tuple(map(repr, row.values())) for row in rows)
            return out

    return on_database(database_url, run)


@cache
def _workspaces_of(*, one: bool) -> Select[Any]:
    query = select(workspaces).where(workspaces.c.account_id == bindparam("_account"))
    return query.where(workspaces.c.id == bindparam("_ws")) if one else query


@cache
def _rows_of(table: Any, dialect: str) -> Select[Any]:
    # An endpoint's feed place is moved by the publisher in the background: bookkeeping,
    # not a change a request made.
    columns = [c for c in table.c if (table.name, c.name) not in PUBLISHER_COLUMNS]
    return select(*columns).where(in_id_list(table.c.workspace_id, "_ids", dialect))


PUBLISHER_COLUMNS = {("webhooks", "feed_txid"), ("webhooks", "feed_seq")}


# --- write targets: each endpoint that reads a JSON body ---------------------------------


class Target:
    """One endpoint that takes a body, and a body template with one slot for a raw value."""

    def __init__(
        self, method: str, path: str, params: dict[str, str] | None, template: bytes
    ) -> None:
        self.method = method
        self.path = path
        self.params = params
        self.template = template

    def body(self, raw_value: bytes) -> bytes:
        return self.template.replace(b"$VALUE", raw_value)

    def send(
        self,
        api: Api,
        content: Any,
        *,
        content_type: str | None = "application/json",
        extra: dict[str, str] | None = None,
    ) -> httpx.Response:
        headers = dict(extra or {})
        if content_type is not None:
            headers["Content-Type"] = content_type
        return api.request(
            self.method, self.path, params=self.params, headers=headers, content=content
        )


TARGETS = (
    "update_contact",
    "create_contact",
    "update_opportunity",
    "create_opportunity",
    "create_workspace",
    "add_tag",
)


def make_target(api: Api, name: str) -> Target:
    if name == "update_contact":
        contact = api.create_contact(name="Before")
        return Target(
            "PUT",
            "/api/contact",
            {"id": contact["id"], "workspaceId": api.ws},
            b'{"paramToUpdate": "name", "name": $VALUE}',
        )
    if name == "create_contact":
        return Target(
            "POST",
            "/api/contact",
            None,
            b'{"email": "' + unique_email().encode() + b'", "name": $VALUE}',
        )
    if name == "update_opportunity":
        opportunity = api.create_opportunity(name="Before")
        return Target(
            "PUT",
            "/api/opportunity",
            {"id": opportunity["id"]},
            b'{"paramToUpdate": "name", "name": $VALUE}',
        )
    if name == "create_opportunity":
        return Target("POST", "/api/opportunity", None, b'{"amount": 10, "name": $VALUE}')
    if name == "create_workspace":
        return Target("POST", "/api/workspace", None, b'{"name": $VALUE}')
    if name == "add_tag":
        return Target("POST", f"/api/workspace/{api.ws}/tags", None, b'{"name": $VALUE}')
    raise AssertionError(name)


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest, api: Api) -> Target:
    return make_target(api, request.param)


# --- envelope and request ids ------------------------------------------------------------


def test_health_is_enveloped(http: TestClient) -> None:
    response = http.get("/health")
    data = ok_data(response, "Service is healthy.")
    assert data == {"status": "ok"}
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["x-request-id"]


def test_ready_is_enveloped_and_names_the_backend(http: TestClient, dialect: str) -> None:
    response = http.get("/ready")
    data = ok_data(response, "Service is ready.")
    assert data == {"status": "ready", "database": dialect}  # Citus: "postgresql"
    assert response.headers["x-request-id"]


def test_health_and_ready_need_no_api_key(http: TestClient) -> None:
    for path in ("/health", "/ready"):
        response = http.get(path, headers={"Authorization": "Bearer nonsense"})
        assert response.status_code == 200, response.text


def test_success_envelope_has_five_keys_in_order(api: Api) -> None:
    response = api.get(f"/api/workspace/{api.ws}")
    body = response.json()
    assert list(body) == ENVELOPE_KEYS
    assert body["success"] is True
    assert body["code"] == response.status_code == 200
    assert body["errorCode"] is None
    assert isinstance(body["message"], str) and body["message"]
    assert response.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/api/nothing-here", 404, "NOT_FOUND"),
        ("DELETE", "/api/contact", 405, "METHOD_NOT_ALLOWED"),
        ("GET", "/api/contact/01a214de-0000-7000-8000-000000000000", 404, "CONTACT_NOT_FOUND"),
        ("PUT", "/api/contact", 401, "WORKSPACE_REQUIRED"),
    ],
)
def test_error_envelope_has_five_keys_and_code_equals_status(
    api: Api, method: str, path: str, status: int, code: str
) -> None:
    workspace = None if code == "WORKSPACE_REQUIRED" else ""
    response = api.request(method, path, workspace=workspace)
    body = refused(response, status, code)
    assert list(body) == ENVELOPE_KEYS
    assert body["code"] == response.status_code


def test_unauthorized_envelope(http: TestClient) -> None:
    response = http.get(f"/api/workspace/{'0' * 8}-0000-7000-8000-000000000000")
    body = refused(response, 401, "UNAUTHORIZED")
    assert body["data"] is None


def test_request_id_is_generated_when_absent(api: Api, http: TestClient) -> None:
    responses = [
        http.get("/health"),
        http.get("/ready"),
        api.get(f"/api/workspace/{api.ws}"),
        api.get("/api/nothing-here"),
        api.request("DELETE", "/api/contact"),
        api.get(f"/api/workspace/{api.ws}", auth=None),
        api.post("/api/contact", content=b"x" * (MIB + 1)),
        api.post("/api/contact", content=b"[1]"),
    ]
    ids = [r.headers.get("x-request-id") for r in responses]
    assert all(ids), ids
    assert len(set(ids)) == len(ids), "each request gets its own id"


def test_request_id_is_echoed_when_sent(api: Api, http: TestClient) -> None:
    cases = [
        http.get("/health", headers={"X-Request-Id": "client-id-1"}),
        http.get("/ready", headers={"X-Request-Id": "client-id-2"}),
        api.get(f"/api/workspace/{api.ws}", headers={"X-Request-Id": "client-id-3"}),
        api.get("/api/nothing-here", headers={"X-Request-Id": "client-id-4"}),
        api.request("PATCH", "/api/opportunity", headers={"X-Request-Id": "client-id-5"}),
        api.get(f"/api/workspace/{api.ws}", auth=None, headers={"X-Request-Id": "client-id-6"}),
        api.post("/api/contact", content=b"x" * (MIB + 1), headers={"X-Request-Id": "client-id-7"}),
        api.post("/api/contact", content=b"{", headers={"X-Request-Id": "client-id-8"}),
    ]
    assert [r.headers.get("x-request-id") for r in cases] == [f"client-id-{i}" for i in range(1, 9)]
    for response in cases:
        assert response.headers.get_list("x-request-id") == [response.headers["x-request-id"]]


def test_request_id_of_a_uuid_is_echoed(api: Api) -> None:
    rid = "3f2b8c1e-9a4d-4f6e-8b7a-2c1d0e9f8a7b"
    response = api.get(f"/api/workspace/{api.ws}", headers={"x-request-id": rid})
    assert response.headers["x-request-id"] == rid


@pytest.mark.parametrize("rid", ["my trace 1", "x" * 201, "a" * 1024, '{"span": 7}'])
def test_any_printable_request_id_is_echoed(api: Api, rid: str) -> None:
    """Contract 0: echo the client's id; spaces, punctuation and long ids included."""
    response = api.get(f"/api/workspace/{api.ws}", headers={"x-request-id": rid})
    assert response.headers["x-request-id"] == rid


def test_a_request_id_too_long_for_a_log_line_is_replaced(api: Api) -> None:
    response = api.get(f"/api/workspace/{api.ws}", headers={"x-request-id": "a" * 1025})
    assert re.fullmatch(r"[0-9a-f]{32}", response.headers["x-request-id"])


# --- unknown routes and methods ----------------------------------------------------------


@READ_BEFORE_THE_DATABASE
@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/nothing-here"),
        ("GET", "/api"),
        ("GET", "/api/"),
        ("GET", "/nothing-here"),  # `/` itself redirects to the console (test_home.py)
        ("GET", "/api/contact/"),
        ("PUT", "/api/contact/"),
        ("POST", "/api/contact/"),
        ("PUT", "/api/opportunity/"),
        ("POST", "/api/opportunity/"),
        ("GET", "/api/workspace/"),
        ("GET", "/api/contacts"),
        ("GET", "/api/Contact/01a214de-0000-7000-8000-000000000000"),
        ("POST", "/api/workspace/01a214de-0000-7000-8000-000000000000/nothing"),
    ],
)
def test_unknown_route_is_404_not_found_without_redirect(api: Api, method: str, path: str) -> None:
    for auth in ("", None):  # the route is matched before the key is looked at
        response = api.http.request(
            method,
            path,
            headers=api.headers(auth=auth),
            json={"name": "x"} if method in ("PUT", "POST") else None,
            follow_redirects=False,
        )
        body = refused(response, 404, "NOT_FOUND")
        assert "location" not in response.headers
        assert path in body["message"]


@READ_BEFORE_THE_DATABASE
@pytest.mark.parametrize(
    ("method", "path", "must_allow"),
    [
        ("DELETE", "/api/contact", {"PUT", "POST"}),
        ("PATCH", "/api/contact", {"PUT", "POST"}),
        ("PATCH", "/api/opportunity", {"PUT", "POST"}),
        ("DELETE", "/api/opportunity", {"PUT", "POST"}),
        ("PUT", "/api/workspace", {"POST"}),
        ("DELETE", "/api/workspace/01a214de-0000-7000-8000-000000000000", {"GET"}),
        ("GET", "/api/workspace/01a214de-0000-7000-8000-000000000000/tags", {"POST"}),
        ("POST", "/health", {"GET"}),
        # Literal paths are never read as a record's id (`/api/contact/{contactId}`).
        ("GET", "/api/contact/merge", {"POST"}),
        ("GET", "/api/contact/delete-batch", {"POST"}),
        ("GET", "/api/contact/upsert-batch", {"POST"}),
        ("DELETE", "/api/contact/board", {"GET", "HEAD"}),
        ("DELETE", "/api/contact/searchByEmail", {"GET", "HEAD"}),
        ("DELETE", "/api/opportunity/board", {"GET", "HEAD"}),
        ("DELETE", "/api/opportunity/pipeline", {"GET", "HEAD"}),
    ],
)
def test_wrong_method_is_405_with_allow_header(
    api: Api, method: str, path: str, must_allow: set[str]
) -> None:
    for auth in ("", None):  # the method is checked before the key
        response = api.request(method, path, auth=auth)
        body = refused(response, 405, "METHOD_NOT_ALLOWED")
        allow = {m.strip() for m in response.headers.get("allow", "").split(",") if m.strip()}
        # RFC 9110: Allow lists every method the resource supports, not one of them.
        assert must_allow <= allow, (path, response.headers.get("allow"))
        assert method not in allow
        assert method in body["message"]
        if path.startswith(("/api/contact/", "/api/opportunity/")):
            assert allow == must_allow  # not the methods of the `{id}` routes


# --- body size ---------------------------------------------------------------------------


def test_body_over_1_mib_with_content_length_is_413(
    api: Api, target: Target, database_url: str
) -> None:
    before = snapshot(database_url, api.account.account_id)
    response = target.send(api, target.body(b'"' + b"a" * MIB + b'"'))
    assert int(response.request.headers["content-length"]) > MIB
    refused(response, 413, "PAYLOAD_TOO_LARGE")
    assert snapshot(database_url, api.account.account_id) == before


def test_streamed_body_over_1_mib_without_content_length_is_413(
    api: Api, target: Target, database_url: str
) -> None:
    before = snapshot(database_url, api.account.account_id)
    head, tail = target.body(b'"$VALUE"').split(b"$VALUE")

    def chunks() -> Iterator[bytes]:
        yield head
        for _ in range(17):
            yield b"a" * 65536
        yield tail

    response = target.send(api, chunks())
    assert "content-length" not in response.request.headers
    assert response.request.headers["transfer-encoding"] == "chunked"
    refused(response, 413, "PAYLOAD_TOO_LARGE")
    assert snapshot(database_url, api.account.account_id) == before


def test_body_of_exactly_1_mib_is_accepted(api: Api) -> None:
    body = b'{"name": "Padded", "email": "' + unique_email().encode() + b'"}'
    body += b" " * (MIB - len(body))
    assert len(body) == MIB
    response = api.post("/api/contact", content=body, headers={"Content-Type": "application/json"})
    assert ok_data(response, "Contact created successfully.")["contact"]["name"] == "Padded"


def test_streamed_body_under_the_limit_is_accepted(api: Api) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"name": "Streamed", '
        yield b'"email": "' + unique_email().encode() + b'"}'

    response = api.post(
        "/api/contact", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert ok_data(response, "Contact created successfully.")["contact"]["name"] == "Streamed"


# --- media types -------------------------------------------------------------------------


@READ_BEFORE_THE_DATABASE
@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin-1",
        "application/json; charset=iso-8859-1",
        "multipart/form-data; boundary=xyz",
        "application/xml",
        "text/json",
    ],
)
def test_non_json_content_type_is_415(
    api: Api, target: Target, database_url: str, content_type: str
) -> None:
    before = snapshot(database_url, api.account.account_id)
    response = target.send(api, target.body(b'"Changed"'), content_type=content_type)
    body = refused(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert "application/json" in body["message"]
    assert snapshot(database_url, api.account.account_id) == before


@READ_BEFORE_THE_DATABASE
@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
def test_a_compressed_body_is_415(api: Api, target: Target, database_url: str, coding: str) -> None:
    """Bodies are read as sent: a compressed one is refused for its coding, not as bytes
    that are not UTF-8 (identity is no coding at all)."""
    before = snapshot(database_url, api.account.account_id)
    compressed = gzip.compress(target.body(b'"Changed"'))
    response = target.send(api, compressed, extra={"Content-Encoding": coding.upper()})
    body = refused(response, 415, "UNSUPPORTED_MEDIA_TYPE")
    assert body["message"] == (
        f"Content-Encoding '{coding}' is not supported; send the body uncompressed."
    )
    assert snapshot(database_url, api.account.account_id) == before
    plain = target.send(api, target.body(b'"Changed"'), extra={"Content-Encoding": "identity"})
    assert plain.status_code in (200, 409), plain.text


def test_body_without_content_type_is_read_as_json(api: Api, target: Target) -> None:
    response = target.send(api, target.body(b'"Changed"'), content_type=None)
    assert "content-type" not in response.request.headers
    ok_data(response)
    # An empty header declares no type either: read as JSON (a second create of the same
    # body meets the first: 409, not 415).
    for empty in ("", "  "):
        again = target.send(api, target.body(b'"Changed"'), content_type=empty)
        assert again.status_code in (200, 409), again.text


@READ_BEFORE_THE_DATABASE
@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        'application/json; charset="utf-8"',
        "Application/JSON",
        "application/vnd.api+json",
        "application/merge-patch+json",
    ],
)
def test_json_content_types_are_accepted(api: Api, target: Target, content_type: str) -> None:
    response = target.send(api, target.body(b'"Changed"'), content_type=content_type)
    data = ok_data(response)
    record = data.get("contact") or data.get("oportunity") or data.get("opportunity") or data
    assert record["name"] == "Changed"


# --- malformed bodies --------------------------------------------------------------------

# Whole bodies that are not a JSON object.
NOT_AN_OBJECT = {
    "malformed": b'{"name": ',
    "trailing-garbage": b'{"name": "a"} x',
    "single-quotes": b"{'name': 'a'}",
    "array": b'[{"name": "a"}]',
    "empty-array": b"[]",
    "string": b'"name"',
    "number": b"42",
    "true": b"true",
    "null": b"null",
    "invalid-utf8": b'{"name": "\xff\xfe"}',
    "utf16": '{"name": "a"}'.encode("utf-16"),
    "deep-arrays": b"[" * 100_000 + b"]" * 100_000,
    "deep-objects": b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
}

# Values put in the name field of an otherwise valid body.
BAD_VALUES = {
    "NaN": b"NaN",
    "Infinity": b"Infinity",
    "-Infinity": b"-Infinity",
    "nul-escape": b'"a\\u0000b"',
    "raw-nul": b'"a\x00b"',
    "raw-newline": b'"a\nb"',
    "lone-high-surrogate": b'"a\\ud800b"',
    "lone-low-surrogate": b'"\\udc00"',
    "reversed-surrogates": b'"\\udc00\\ud800"',
    "invalid-utf8-in-string": b'"caf\xe9"',
    "deep-value": b"[" * 100_000 + b"]" * 100_000,
}


@READ_BEFORE_THE_DATABASE
@pytest.mark.parametrize("case", list(NOT_AN_OBJECT))
def test_body_that_is_not_a_json_object_is_400(
    api: Api, target: Target, database_url: str, case: str
) -> None:
    before = snapshot(database_url, api.account.account_id)
    refused(target.send(api, NOT_AN_OBJECT[case]), 400, "BAD_REQUEST")
    assert snapshot(database_url, api.account.account_id) == before


@READ_BEFORE_THE_DATABASE
@pytest.mark.parametrize("case", list(BAD_VALUES))
def test_bad_json_value_is_400(api: Api, target: Target, database_url: str, case: str) -> None:
    before = snapshot(database_url, api.account.account_id)
    refused(target.send(api, target.body(BAD_VALUES[case])), 400, "BAD_REQUEST")
    assert snapshot(database_url, api.account.account_id) == before


def test_nul_and_surrogate_in_a_key_are_400(api: Api, target: Target, database_url: str) -> None:
    before = snapshot(database_url, api.account.account_id)
    for key in (b'"na\\u0000me"', b'"\\ud800"'):
        body = target.body(b'"x"')[:-1] + b", " + key + b": 1}"
        refused(target.send(api, body), 400, "BAD_REQUEST")
    assert snapshot(database_url, api.account.account_id) == before


def test_paired_surrogate_escape_is_accepted(api: Api, target: Target) -> None:
    """A correct UTF-16 pair is a real character, not a lone surrogate."""
    response = target.send(api, target.body(b'"Ana \\ud83d\\ude00"'))
    data = ok_data(response)
    record = data.get("contact") or data.get("oportunity") or data.get("opportunity") or data
    assert record["name"] == "Ana \U0001f600"


def test_control_body_of_the_templates_is_accepted(api: Api, target: Target) -> None:
    """The templates above are valid requests: only the value put in them is wrong."""
    ok_data(target.send(api, target.body(b'"Fine name"')))


@pytest.mark.parametrize("where", ["name", "amount", "orderInCards"])
def test_huge_integer_literal_is_400_or_422(api: Api, database_url: str, where: str) -> None:
    digits = b"9" * 5000
    contact = api.create_contact()
    opportunity = api.create_opportunity()
    before = snapshot(database_url, api.account.account_id)
    requests = {
        "name": [
            ("POST", "/api/contact", None, b'{"email": "a@b.co", "name": ' + digits + b"}"),
            ("POST", "/api/workspace", None, b'{"name": ' + digits + b"}"),
        ],
        "amount": [
            ("POST", "/api/opportunity", None, b'{"name": "Deal", "amount": ' + digits + b"}"),
            (
                "PUT",
                "/api/opportunity",
                {"id": opportunity["id"]},
                b'{"paramToUpdate": "amount", "amount": ' + digits + b"}",
            ),
        ],
        "orderInCards": [
            (
                "PUT",
                "/api/contact",
                {"id": contact["id"], "workspaceId": api.ws},
                b'{"paramToUpdate": "orderInCards", "orderInCards": ' + digits + b"}",
            ),
            (
                "PUT",
                "/api/opportunity",
                {"id": opportunity["id"]},
                b'{"paramToUpdate": "orderInCards", "orderInCards": -' + digits + b"}",
            ),
        ],
    }[where]
    for method, path, params, content in requests:
        response = api.request(
            method,
            path,
            params=params,
            content=content,
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code in (400, 422), response.text
        body = refused(
            response,
            response.status_code,
            "BAD_REQUEST" if response.status_code == 400 else "VALIDATION_ERROR",
        )
        # The message is for the API client: a Python interpreter setting is no advice to it.
        assert "sys." not in body["message"] and "int_max_str_digits" not in body["message"]
    assert snapshot(database_url, api.account.account_id) == before


def test_large_but_parseable_numbers_are_422_not_500(api: Api, database_url: str) -> None:
    opportunity = api.create_opportunity()
    contact = api.create_contact()
    before = snapshot(database_url, api.account.account_id)
    cases = [
        ("POST", "/api/opportunity", None, b'{"name": "Deal", "amount": 1' + b"0" * 40 + b"}"),
        ("POST", "/api/opportunity", None, b'{"name": "Deal", "amount": 1e400}'),
        ("POST", "/api/opportunity", None, b'{"name": "Deal", "amount": -1e-400}'),
        (
            "PUT",
            "/api/opportunity",
            {"id": opportunity["id"]},
            b'{"paramToUpdate": "orderInCards", "orderInCards": 1' + b"0" * 30 + b"}",
        ),
        (
            "PUT",
            "/api/contact",
            {"id": contact["id"], "workspaceId": api.ws},
            b'{"paramToUpdate": "orderInCards", "orderInCards": 1' + b"0" * 30 + b"}",
        ),
        ("POST", "/api/contact", None, b'{"name": "A", "email": "a@b.co", "platformId": 1e999}'),
    ]
    for method, path, params, content in cases:
        response = api.request(
            method,
            path,
            params=params,
            content=content,
            headers={"Content-Type": "application/json"},
        )
        refused(response, 422, "VALIDATION_ERROR")
    assert snapshot(database_url, api.account.account_id) == before


@pytest.mark.parametrize(
    "number", [b"1e1000000000000000000", b"0E1000000000000000000", b"-1.5e-99999999999999999999"]
)
def test_a_number_beyond_decimal_exponents_is_400_not_500(
    api: Api, database_url: str, number: bytes
) -> None:
    # Decimal refuses exponents of 19 digits and more (InvalidOperation, not a ValueError):
    # it is malformed JSON for us, wherever the body is read, keyed or not.
    opportunity = api.create_opportunity()
    before = snapshot(database_url, api.account.account_id)
    cases = [
        (
            "PUT",
            "/api/opportunity",
            {"id": opportunity["id"]},
            b'{"paramToUpdate": "amount", "amount": %s}',
            {},
        ),
        ("POST", "/api/contact", None, b'{"name": "A", "email": "a@b.co", "lastname": %s}', {}),
        ("POST", "/api/workspace", None, b'{"name": %s}', {}),
        (
            "POST",
            "/api/opportunity",
            None,
            b'{"name": "Deal", "amount": %s}',
            {"Idempotency-Key": "big-exp"},
        ),
    ]
    for method, path, params, template, extra in cases:
        response = api.request(
            method,
            path,
            params=params,
            content=template % number,
            headers={"Content-Type": "application/json", **extra},
        )
        body = refused(response, 400, "BAD_REQUEST")
        assert body["message"].startswith("The request body is not valid JSON: the number")
    assert snapshot(database_url, api.account.account_id) == before


@READ_BEFORE_THE_DATABASE
@pytest.mark.parametrize("body", [b"", b"   ", b"\r\n\t "])
def test_empty_body_is_400(api: Api, target: Target, database_url: str, body: bytes) -> None:
    before = snapshot(database_url, api.account.account_id)
    response = refused(target.send(api, body), 400, "BAD_REQUEST")
    assert "JSON object" in response["message"]
    assert snapshot(database_url, api.account.account_id) == before


def test_empty_body_without_content_type_on_put_is_400(api: Api) -> None:
    contact = api.create_contact()
    response = api.put("/api/contact", params={"id": contact["id"], "workspaceId": api.ws})
    refused(response, 400, "BAD_REQUEST")
    opportunity = api.create_opportunity()
    response = api.put("/api/opportunity", params={"id": opportunity["id"]})
    refused(response, 400, "BAD_REQUEST")


def test_utf8_bom_is_tolerated(api: Api) -> None:
    body = b'\xef\xbb\xbf{"name": "Bom", "email": "' + unique_email().encode() + b'"}'
    response = api.post("/api/contact", content=body, headers={"Content-Type": "application/json"})
    assert ok_data(response)["contact"]["name"] == "Bom"


def test_error_bodies_of_every_kind_show_no_internals(api: Api, other_api: Api) -> None:
    """A sweep across the catalogue: every answer is an envelope without internals."""
    contact = api.create_contact()
    missing = "01a214de-0000-7000-8000-000000000000"
    responses = [
        api.get("/api/nothing"),
        api.request("DELETE", "/api/contact"),
        api.get(f"/api/contact/{missing}"),
        api.get("/api/contact/' OR 1=1 --"),
        api.get("/api/contact/%00"),
        api.get(f"/api/contact/{contact['id']}", workspace="'; DROP TABLE contacts; --"),
        api.get(f"/api/contact/{contact['id']}", workspace=other_api.ws),
        api.get(f"/api/contact/{contact['id']}", auth="ccrm_' OR 1=1 --"),
        api.put("/api/contact", params={"id": missing, "workspaceId": api.ws}, json=[]),
        api.put(
            "/api/contact",
            params={"id": missing, "workspaceId": api.ws},
            json={"paramToUpdate": "name", "name": "x"},
        ),
        api.put(
            "/api/opportunity",
            params={"id": "x' OR '1'='1"},
            json={"paramToUpdate": "name", "name": "x"},
        ),
        api.post("/api/contact", json={"name": "A", "email": "not an email"}),
        api.post("/api/contact", json={"name": "A", "email": contact["email"]}),
        api.post("/api/opportunity", json={"name": "A", "amount": "1' OR '1'='1"}),
        api.post("/api/opportunity", json={"name": "A", "amount": 1, "stageId": "' OR 1=1"}),
        api.post("/api/contact", content=b'{"name": "\\u0000"}'),
        api.post("/api/contact", content=b"x" * (MIB + 1)),
    ]
    for response in responses:
        assert 400 <= response.status_code < 500, response.text
        body = response.json()
        assert list(body) == ENVELOPE_KEYS
        assert body["code"] == response.status_code
        assert body["success"] is False
        assert_no_leak(response)


def test_a_client_gone_before_its_body_arrived_is_no_server_error(
    http: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """A client that hangs up before its body arrived (a load generator stopping, a tab
    closed): nothing is answered, and no error with a traceback is logged."""
    import logging

    from starlette.requests import ClientDisconnect

    from chatcrm.api.middleware import RequestContextMiddleware

    async def hung_up(scope: Any, receive: Any, send: Any) -> None:
        raise ClientDisconnect()

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "PUT",
        "path": "/api/contact",
        "query_string": b"",
        "headers": [],
        "app": http.app,
    }
    middleware = RequestContextMiddleware(hung_up, max_body_bytes=1024)
    with caplog.at_level(logging.INFO):
        assert http.portal is not None
        http.portal.call(middleware, scope, receive, send)
    assert sent == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    assert "client disconnected" in caplog.text
