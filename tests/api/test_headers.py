"""Headers as RFC 9110 reads them (docs/api.md 1.7): values without the whitespace around
them; a one-value header repeated with different values refused, never read as its first
line; If-Match on several lines one list."""

from __future__ import annotations

import httpx

from tests.client import Api, error, ok_data, unique_email

NAME = {"paramToUpdate": "name", "name": "Bea"}


def _send(
    api: Api, method: str, path: str, headers: list[tuple[str, str]], **kw: object
) -> httpx.Response:
    return api.http.request(method, path, headers=headers, **kw)  # type: ignore[arg-type]


def _auth(api: Api) -> tuple[str, str]:
    return ("Authorization", f"Bearer {api.key}")


def _ws(api: Api) -> tuple[str, str]:
    return ("x-workspace-id", api.ws)


def test_two_workspaces_in_the_header_are_403_whichever_comes_first(
    api: Api, other_api: Api
) -> None:
    contact = api.create_contact()
    path = f"/api/contact/{contact['id']}"
    mine, theirs = ("x-workspace-id", api.ws), ("x-workspace-id", other_api.ws)
    for lines in ([mine, theirs], [theirs, mine]):
        body = error(_send(api, "GET", path, [_auth(api), *lines]), 403, "FORBIDDEN")
        assert "x-workspace-id" in body["message"]
    # The same workspace twice is one workspace.
    ok_data(_send(api, "GET", path, [_auth(api), mine, mine]))


def test_two_different_credentials_are_401(api: Api, other_api: Api) -> None:
    contact = api.create_contact()
    path = f"/api/contact/{contact['id']}"
    ws = ("x-workspace-id", api.ws)
    for second in ("Bearer junk", f"Bearer {other_api.key}"):
        lines = [_auth(api), ("Authorization", second), ws]
        error(_send(api, "GET", path, lines), 401, "UNAUTHORIZED")
    ok_data(_send(api, "GET", path, [_auth(api), _auth(api), ws]))


def test_spaces_around_header_values_are_not_part_of_them(api: Api) -> None:
    contact = api.create_contact()
    lines = [_auth(api), ("x-workspace-id", f"{api.ws} \t ")]
    ok_data(_send(api, "GET", f"/api/contact/{contact['id']}", lines))
    body = {"name": "Ana", "email": unique_email()}
    first, retried = (
        _send(api, "POST", "/api/contact", [*lines, ("Idempotency-Key", key)], json=body)
        for key in ("retry-me  ", "retry-me")
    )
    assert ok_data(retried)["id"] == ok_data(first)["id"]


def test_two_different_idempotency_keys_are_400_and_nothing_is_created(api: Api) -> None:
    email = unique_email()
    lines = [_auth(api), ("x-workspace-id", api.ws), ("Idempotency-Key", "a")]
    response = _send(
        api,
        "POST",
        "/api/contact",
        [*lines, ("Idempotency-Key", "b")],
        json={"name": "Ana", "email": email},
    )
    body = error(response, 400, "BAD_REQUEST")
    assert "Idempotency-Key" in body["message"] or "idempotency-key" in body["message"]
    found = api.get("/api/contact/searchByEmail", params={"email": email})
    assert ok_data(found)["data"] == []


def test_if_match_on_several_lines_is_one_list(api: Api) -> None:
    contact = api.create_contact()
    path = f"/api/contact?id={contact['id']}&workspaceId={api.ws}"
    base = [_auth(api), ("x-workspace-id", api.ws)]
    stale = _send(api, "PUT", path, [*base, ("If-Match", '"7"'), ("If-Match", '"8"')], json=NAME)
    error(stale, 412, "PRECONDITION_FAILED")
    lines = [*base, ("If-Match", '"7"'), ("If-Match", '"1"')]
    ok_data(_send(api, "PUT", path, lines, json=NAME))


def test_a_body_declared_json_and_another_type_is_415_whichever_line_comes_first(
    api: Api,
) -> None:
    contact = api.create_contact()
    path = f"/api/contact?id={contact['id']}&workspaceId={api.ws}"
    body = b'{"paramToUpdate": "name", "name": "Bea"}'
    json_line, text_line = ("Content-Type", "application/json"), ("Content-Type", "text/plain")
    for lines in ([json_line, text_line], [text_line, json_line]):
        answer = error(
            _send(api, "PUT", path, [_auth(api), _ws(api), *lines], content=body),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        )
        assert answer["message"].startswith("Content-Type 'text/plain' is not supported")
    ok_data(_send(api, "PUT", path, [_auth(api), _ws(api), json_line, json_line], content=body))


def test_a_coding_on_any_content_encoding_line_is_415(api: Api) -> None:
    contact = api.create_contact()
    path = f"/api/contact?id={contact['id']}&workspaceId={api.ws}"
    body = b'{"paramToUpdate": "name", "name": "Bea"}'
    json_line = ("Content-Type", "application/json")
    identity, gzip = ("Content-Encoding", "identity"), ("Content-Encoding", "gzip")
    for lines in ([identity, gzip], [gzip, identity]):
        answer = error(
            _send(api, "PUT", path, [_auth(api), _ws(api), json_line, *lines], content=body),
            415,
            "UNSUPPORTED_MEDIA_TYPE",
        )
        assert "gzip" in answer["message"]
    ok_data(
        _send(api, "PUT", path, [_auth(api), _ws(api), json_line, identity, identity], content=body)
    )
