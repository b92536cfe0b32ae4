"""`/openapi.json` says what the server does: checked against the server's own answers.

(tests/api/test_schemathesis.py fuzzes every operation against the document; these tests
pin the statements a generator of clients relies on most.)
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from tests.client import ENVELOPE_KEYS, Api


@pytest.fixture(scope="module")
def document(http: TestClient) -> dict[str, Any]:
    response = http.get("/openapi.json")
    assert response.status_code == 200
    result: dict[str, Any] = response.json()
    return result


def _resolve(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    return _resolve(document, document["components"]["schemas"][ref.rsplit("/", 1)[1]])


def _allows_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    if None in schema.get("enum", []):
        return True
    return any(_allows_null(s) for s in schema.get("anyOf", []) + schema.get("oneOf", []))


def _operations(document: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, operation)
        for path, methods in document["paths"].items()
        for method, operation in methods.items()
    ]


def test_every_answer_is_documented_in_the_envelope(document: dict[str, Any]) -> None:
    seen_ids = set()
    for method, path, operation in _operations(document):
        assert operation["operationId"] not in seen_ids
        seen_ids.add(operation["operationId"])
        responses = operation["responses"]
        assert "200" in responses, (method, path)
        for status, response in responses.items():
            assert response["headers"]["X-Request-Id"]["required"] is True
            if path == "/metrics" and status == "200":
                assert list(response["content"]) == ["text/plain"]
                continue
            # Not envelopes: Meta's verification answers its challenge as text; a media
            # answer is the media's bytes.
            if operation["operationId"] == "verifyWhatsappWebhook":
                assert list(response["content"]) == ["text/plain"]
                continue
            if operation["operationId"] == "getMessageMedia" and status == "200":
                assert list(response["content"]) == ["application/octet-stream"]
                continue
            schema = _resolve(document, response["content"]["application/json"]["schema"])
            # The envelope, never the framework's {"detail": [...]}.
            assert schema["required"] == ENVELOPE_KEYS, (method, path, status)
            assert list(schema["properties"]) == ENVELOPE_KEYS
            assert schema["additionalProperties"] is False
            assert schema["properties"]["code"] == {"const": int(status)}
            if status != "200":
                assert schema["properties"]["success"] == {"const": False}
    assert "detail" not in str(document)


def test_required_parameters_are_marked_required(document: dict[str, Any]) -> None:
    def parameter(method: str, path: str, name: str) -> dict[str, Any]:
        params = document["paths"][path][method.lower()]["parameters"]
        return next(p for p in params if p["name"] == name)

    for path in ("/api/contact", "/api/opportunity"):
        assert parameter("PUT", path, "x-workspace-id")["required"] is True
        assert parameter("PUT", path, "id")["required"] is True
    assert parameter("PUT", "/api/contact", "workspaceId")["required"] is True
    assert parameter("PUT", "/api/opportunity", "workspaceId")["required"] is False
    assert parameter("GET", "/api/contact/searchByEmail", "email")["required"] is True
    assert parameter("GET", "/api/contact/searchByCellphone", "cellphone")["required"] is True
    for method, path, operation in _operations(document):
        for p in operation["parameters"]:
            if p["in"] == "path":
                assert p["required"] is True, (method, path, p["name"])


def _update(api: Api, kind: str, record_id: str, field: str, value: Any) -> int:
    body = {"paramToUpdate": field, field: value}
    if kind == "contact":
        return api.update_contact(record_id, body).status_code
    return api.update_opportunity(record_id, body).status_code


@pytest.mark.parametrize("kind", ["contact", "opportunity"])
def test_the_update_body_allows_null_exactly_where_the_server_does(
    api: Api, document: dict[str, Any], kind: str
) -> None:
    body = _resolve(
        document,
        document["paths"][f"/api/{kind}"]["put"]["requestBody"]["content"]["application/json"][
            "schema"
        ],
    )
    fields = [name for name in body["properties"] if name not in ("paramToUpdate", "id")]
    fields.remove("workspaceId")
    assert fields, body
    for field in fields:
        record = api.create_contact() if kind == "contact" else api.create_opportunity()
        status = _update(api, kind, record["id"], field, None)
        if field == "solvedByAgentId":  # only named together with isSolved (400 alone)
            assert status == 400
            continue
        documented = _allows_null(body["properties"][field])
        assert (status == 200) == documented, (field, status, documented)
        assert status in (200, 422), (field, status)


def test_the_create_body_allows_what_the_server_requires(
    api: Api, document: dict[str, Any]
) -> None:
    for path, required in (("/api/contact", ["name"]), ("/api/opportunity", ["name", "amount"])):
        body = _resolve(
            document,
            document["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"],
        )
        assert body["required"] == required
        assert body["additionalProperties"] is False
        assert "workspaceId" in body["properties"]
        answer = api.post(path, json={})
        assert answer.status_code == 422
        assert [e["field"] for e in answer.json()["data"]["errors"]][: len(required)] == required


# Values that reach the database as they are in a string parameter: NUL (which PostgreSQL
# text cannot hold), LIKE wildcards and escapes, quotes, non-ASCII, control characters and
# a long value.
HOSTILE = ("\x00", "a\x00b", "%_\\", "' OR '1'='1", "Zoë 🙂", "\n\t", "9" * 4000)


def test_hostile_strings_in_every_parameter_get_the_envelope(
    api: Api, document: dict[str, Any]
) -> None:
    contact = api.create_contact()
    opportunity = api.create_opportunity()
    webhook = api.post("/api/webhook", json={"url": "https://receiver.example/hooks"}).json()
    real = {
        "workspaceId": api.ws,
        "contactId": contact["id"],
        "opportunityId": opportunity["id"],
        "webhookId": webhook["data"]["id"],
    }
    for method, path, operation in _operations(document):
        if method not in ("GET", "DELETE") or path == "/metrics":
            continue
        params = operation["parameters"]
        path_names = [p["name"] for p in params if p["in"] == "path"]
        query_names = [p["name"] for p in params if p["in"] == "query"]
        for where, name in [("path", n) for n in path_names] + [("query", n) for n in query_names]:
            for hostile in HOSTILE:
                if where == "path" and hostile.isspace():
                    continue  # HTTP clients strip tabs and newlines from URLs
                values = {n: real.get(n, "x") for n in path_names}
                query = {"workspaceId": api.ws} if "workspaceId" in query_names else {}
                if where == "path":
                    values[name] = quote(hostile, safe="")
                else:
                    query[name] = hostile
                url = path.format(**values)
                response = api.request(method, url, params=query)
                assert response.status_code < 500, (method, path, name, response.text)
                assert response.headers["x-request-id"]
                if operation["operationId"] == "verifyWhatsappWebhook":
                    assert response.status_code == 403  # Meta's handshake: plain text
                    continue
                if response.status_code != 200 or path.startswith("/api/"):
                    body = response.json()
                    assert list(body) == ENVELOPE_KEYS, (method, path, name, body)


def test_a_body_that_can_name_the_workspace_documents_422(document: dict[str, Any]) -> None:
    """A `workspaceId` in the body that is not a string is 422, even in an operation that
    takes no other body field (a restore, a secret's rotation, a retry)."""
    for method, path, operation in _operations(document):
        body = operation.get("requestBody")
        if body is None:
            continue
        schema = _resolve(document, body["content"]["application/json"]["schema"])
        if "workspaceId" in schema.get("properties", {}):
            assert "422" in operation["responses"], (method, path)
    for method, path in (
        ("post", "/api/opportunity/{opportunityId}/restore"),
        ("post", "/api/webhook/{webhookId}/rotate-secret"),
        ("post", "/api/contact/{contactId}/messages/read"),
        ("post", "/api/message/{messageId}/retry"),
    ):
        assert "422" in document["paths"][path][method]["responses"], (method, path)


def test_a_workspace_id_that_is_not_a_string_is_422_where_no_field_is(api: Api) -> None:
    opportunity = api.create_opportunity()
    api.delete(f"/api/opportunity/{opportunity['id']}")
    answer = api.post(f"/api/opportunity/{opportunity['id']}/restore", json={"workspaceId": 1})
    assert answer.status_code == 422, answer.text


# Phones and e-mail addresses as people write them, some the server refuses.
PHONES = (
    "+51 987-654-321",
    "0051 922 333 444",
    "+51 (0) 922 333 445",
    "51.987.654.999",
    "  +44 20 7946 0958 ",
    "",
    "   ",
    "abc",
    "+",
    "51 98x",
    "12345",
    "9" * 16,
    "+51\t987",
    "(+51) 987 654 301",
    "+51\u00a0987\u2013654\u2013302",
    "+44\u00ad20 7946 0903",
    "(+44 20 7946 0904",
)
EMAILS = (
    "ana@example.com",
    " Ana.Torres@Example.COM ",
    "josé@ejemplo.españa",
    "",
    "  ",
    "a b@c.d",
    "a@b@c",
    '"x"@y.z',
    "a@",
    "@b.c",
    "a..b@c.d",
    "a@b c.d",
)


@pytest.mark.not_on_citus  # validation answers before the database is asked
@pytest.mark.parametrize(
    ("field", "values"), [("internalWhatsappNumber", PHONES), ("email", EMAILS)]
)
def test_a_value_the_document_refuses_the_server_refuses_too(
    api: Api, document: dict[str, Any], field: str, values: tuple[str, ...]
) -> None:
    create = document["paths"]["/api/contact"]["post"]["requestBody"]["content"]
    schema = _resolve(document, create["application/json"]["schema"])["properties"][field]
    pattern = re.compile(schema["pattern"])
    for i, value in enumerate(values):
        # The other field set, so that a blank one is not the contact's only way to be reached.
        other = (
            {"email": f"p{i}@patterns.test"}
            if field != "email"
            else {"platformId": 2, "internalWhatsappNumber": f"5199{i:07d}"}
        )
        answer = api.post("/api/contact", json={"name": "Pat", field: value, **other})
        assert answer.status_code in (200, 422), answer.text
        if pattern.search(value) is None:
            assert answer.status_code == 422, (field, value)
        if answer.status_code == 200:  # what the server takes, the document allows
            assert pattern.search(value) is not None, (field, value)
