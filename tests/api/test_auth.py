"""Authentication (API keys of an account) and the workspace selection rules of section 0."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.cli import main as cli_main
from chatcrm.config import Settings
from tests.api.test_http import snapshot
from tests.client import Api, error, ok_data, unique_email
from tests.conftest import new_account

MISSING_ID = "01a214de-0000-7000-8000-000000000000"


def unauthorized(response: httpx.Response) -> dict[str, Any]:
    body = error(response, 401, "UNAUTHORIZED")
    assert response.headers["www-authenticate"].lower().startswith("bearer")
    assert body["data"] is None
    return body


def forbidden(response: httpx.Response) -> dict[str, Any]:
    return error(response, 403, "FORBIDDEN")


def new_workspace(api: Api, name: str = "Second workspace") -> str:
    data = ok_data(api.post("/api/workspace", json={"name": name}, workspace=None))
    workspace_id: str = data["id"]
    return workspace_id


def in_workspace(api: Api, workspace_id: str) -> Api:
    """The same key acting in another workspace."""
    other = Api(api.http, api.account)
    other.ws = workspace_id
    return other


# Every authenticated route, as (method, path template, params, json body).
def all_routes(api: Api) -> list[tuple[str, str, dict[str, str] | None, Any]]:
    contact = api.create_contact()
    opportunity = api.create_opportunity()
    return [
        ("GET", f"/api/contact/{contact['id']}", None, None),
        (
            "PUT",
            "/api/contact",
            {"id": contact["id"], "workspaceId": api.ws},
            {"paramToUpdate": "name", "name": "Hacked"},
        ),
        ("POST", "/api/contact", None, {"name": "Ana", "email": unique_email()}),
        (
            "PUT",
            "/api/opportunity",
            {"id": opportunity["id"]},
            {"paramToUpdate": "name", "name": "Hacked"},
        ),
        ("POST", "/api/opportunity", None, {"name": "Deal", "amount": 1}),
        ("GET", f"/api/workspace/{api.ws}", None, None),
        ("POST", "/api/workspace", None, {"name": "Another"}),
        ("POST", f"/api/workspace/{api.ws}/stages", None, {"kind": "contact", "name": "S"}),
        ("POST", f"/api/workspace/{api.ws}/tags", None, {"name": "T", "color": "#000000"}),
        ("POST", f"/api/workspace/{api.ws}/segmentations", None, {"name": "Seg"}),
        ("POST", f"/api/workspace/{api.ws}/agents", None, {"name": "A", "email": unique_email()}),
    ]


def _bad_authorizations(api: Api) -> dict[str, str | None]:
    key = api.key
    last = key[-1]
    wrong_last = "A" if last != "A" else "B"
    key_id_hex = key.split("_")[1]
    return {
        "none": None,
        "empty": "",
        "basic": "Basic dXNlcjpwYXNz",
        "bearer-alone": "Bearer",
        "bearer-space": "Bearer ",
        "token-scheme": f"Token {key}",
        "no-scheme": key,
        "malformed": "Bearer not-a-key",
        "prefix-only": "Bearer ccrm_",
        "short-secret": f"Bearer ccrm_{key_id_hex}_short",
        "unknown": f"Bearer ccrm_{'ab' * 16}_{'x' * 43}",
        "wrong-secret": f"Bearer {key[:-1]}{wrong_last}",
        "truncated": f"Bearer {key[:-1]}",
        "extended": f"Bearer {key}x",
        "two-keys": f"Bearer {key} {key}",
        "other-key-id": f"Bearer ccrm_{'0' * 32}_{key.split('_', 2)[2]}",
    }


def _send(
    api: Api, method: str, path: str, params: Any, body: Any, authorization: str | None
) -> httpx.Response:
    headers = {"x-workspace-id": api.ws}
    if authorization is not None:
        headers["Authorization"] = authorization
    return api.http.request(method, path, params=params, json=body, headers=headers)


# --- API keys ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "case",
    [
        "none",
        "empty",
        "basic",
        "bearer-alone",
        "bearer-space",
        "token-scheme",
        "no-scheme",
        "malformed",
        "prefix-only",
        "short-secret",
        "unknown",
        "wrong-secret",
        "truncated",
        "extended",
        "two-keys",
        "other-key-id",
    ],
)
def test_bad_api_key_is_401_on_every_route(api: Api, database_url: str, case: str) -> None:
    authorization = _bad_authorizations(api)[case]
    routes = all_routes(api)
    before = snapshot(database_url, api.account.account_id)
    for method, path, params, body in routes:
        unauthorized(_send(api, method, path, params, body, authorization))
    assert snapshot(database_url, api.account.account_id) == before


def test_the_scheme_name_is_case_insensitive(api: Api) -> None:
    for scheme in ("bearer", "BEARER", "Bearer"):
        response = api.get(
            f"/api/workspace/{api.ws}", headers={"Authorization": f"{scheme} {api.key}"}
        )
        ok_data(response)


def test_messages_say_what_to_send(api: Api) -> None:
    missing = unauthorized(api.get(f"/api/workspace/{api.ws}", auth=None))
    assert "Authorization" in missing["message"] and "Bearer" in missing["message"]
    wrong = unauthorized(api.get(f"/api/workspace/{api.ws}", auth=api.key[:-1] + "?"))
    assert "API key" in wrong["message"]


def test_key_is_checked_before_the_workspace(api: Api, other_api: Api) -> None:
    """A bad key is 401 whatever the workspace: 403 would tell a stranger the workspace exists."""
    for workspace in (api.ws, other_api.ws, MISSING_ID, "junk", None):
        unauthorized(api.get(f"/api/workspace/{api.ws}", auth="nonsense", workspace=workspace))
        unauthorized(
            api.put(
                "/api/opportunity",
                params={"id": MISSING_ID},
                json={"paramToUpdate": "name", "name": "x"},
                auth=f"{api.key[:-1]}Z" if api.key[-1] != "Z" else f"{api.key[:-1]}Y",
                workspace=workspace,
            )
        )


def test_key_is_checked_before_the_body(api: Api) -> None:
    for content in (b"{", b"[]", b"", b"NaN"):
        unauthorized(
            api.post(
                "/api/contact",
                content=content,
                auth=None,
                headers={"Content-Type": "application/json"},
            )
        )
    unauthorized(
        api.post("/api/contact", content=b"a=b", auth=None, headers={"Content-Type": "text/plain"})
    )


def test_key_serves_every_workspace_of_its_account(api: Api) -> None:
    second = in_workspace(api, new_workspace(api))
    third = in_workspace(api, new_workspace(api, "Third"))
    for client in (api, second, third):
        contact = client.create_contact(name="Local")
        data = ok_data(client.get_contact(contact["id"]))
        assert data["data"][0]["workspaceId"] == client.ws
        opportunity = client.create_opportunity()
        assert opportunity["workspaceId"] == client.ws
        client.set_opportunity(opportunity["id"], name="Renamed")
        client.set_contact(contact["id"], name="Renamed")
        assert client.workspace()["id"] == client.ws
        client.add_tag()


def test_a_new_key_of_the_account_serves_its_workspaces(api: Api, database_url: str) -> None:
    result = CliRunner().invoke(
        cli_main,
        [
            "keys",
            "create",
            "--account",
            api.account.account_id,
            "--json",
            "--database-url",
            database_url,
        ],
    )
    assert result.exit_code == 0, result.output
    new_key = json.loads(result.output)["apiKey"]
    second = new_workspace(api)
    for workspace in (api.ws, second):
        ok_data(api.get(f"/api/workspace/{workspace}", auth=new_key, workspace=None))


def test_workspace_of_another_account_is_403(api: Api, other_api: Api) -> None:
    theirs = other_api.create_contact()
    body = forbidden(api.get(f"/api/contact/{theirs['id']}", workspace=other_api.ws))
    assert other_api.ws in body["message"]
    forbidden(api.get(f"/api/workspace/{other_api.ws}", workspace=None))


def test_unknown_and_foreign_workspaces_get_the_same_answer(api: Api, other_api: Api) -> None:
    """403 FORBIDDEN for both, so a key cannot probe which workspaces exist."""
    foreign = forbidden(api.get(f"/api/workspace/{other_api.ws}", workspace=None))
    unknown = forbidden(api.get(f"/api/workspace/{MISSING_ID}", workspace=None))
    assert foreign["errorCode"] == unknown["errorCode"] == "FORBIDDEN"
    assert foreign["message"].replace(other_api.ws, "X") == unknown["message"].replace(
        MISSING_ID, "X"
    )
    assert foreign["data"] == unknown["data"]


@pytest.mark.parametrize(
    "workspace",
    [MISSING_ID, "not-a-workspace", "01A214DE-0000-7000-8000-000000000000", "'; --", "0" * 36],
)
def test_unusable_workspace_id_is_403_on_every_route(api: Api, workspace: str) -> None:
    routes = all_routes(api)
    for method, path, params, body in routes:
        path = path.replace(api.ws, workspace)
        if params and "workspaceId" in params:
            params = {**params, "workspaceId": workspace}
        response = api.request(method, path, params=params, json=body, workspace=workspace)
        # Also POST /api/workspace: it needs no workspace, but one named must be usable.
        forbidden(response)


def _app_without_key_cache(settings: Settings) -> TestClient:
    return TestClient(
        create_app(settings.model_copy(update={"key_cache_ttl": 0})),
        raise_server_exceptions=False,
    )


@pytest.fixture
def uncached(settings: Settings) -> Iterator[TestClient]:
    """An app that reads keys from the database on every request."""
    with _app_without_key_cache(settings) as client:
        yield client


def _revoke(database_url: str, key_or_id: str) -> None:
    result = CliRunner().invoke(
        cli_main, ["keys", "revoke", key_or_id, "--database-url", database_url]
    )
    assert result.exit_code == 0, result.output


def test_revoked_key_is_401(uncached: TestClient, database_url: str) -> None:
    account = new_account(database_url)
    api = Api(uncached, account)
    contact = api.create_contact()
    ok_data(api.get_contact(contact["id"]))
    _revoke(database_url, account.key_id)
    body = unauthorized(api.get_contact(contact["id"]))
    assert "revoked" in body["message"]
    unauthorized(api.post("/api/contact", json={"name": "Late", "email": unique_email()}))
    unauthorized(api.get(f"/api/workspace/{api.ws}"))


def test_revoking_by_the_key_itself_works_too(uncached: TestClient, database_url: str) -> None:
    account = new_account(database_url)
    api = Api(uncached, account)
    ok_data(api.get(f"/api/workspace/{api.ws}"))
    _revoke(database_url, account.api_key)
    unauthorized(api.get(f"/api/workspace/{api.ws}"))


def test_revoking_one_key_leaves_the_others(uncached: TestClient, database_url: str) -> None:
    account = new_account(database_url)
    result = CliRunner().invoke(
        cli_main,
        [
            "keys",
            "create",
            "--account",
            account.account_id,
            "--json",
            "--database-url",
            database_url,
        ],
    )
    assert result.exit_code == 0, result.output
    second_key = json.loads(result.output)["apiKey"]
    api = Api(uncached, account)
    _revoke(database_url, account.key_id)
    unauthorized(api.get(f"/api/workspace/{api.ws}"))
    ok_data(api.get(f"/api/workspace/{api.ws}", auth=second_key))


def test_revoked_key_stops_working_within_the_cache_ttl(
    settings: Settings, database_url: str
) -> None:
    """With caching on, revocation takes effect within key_cache_ttl seconds."""

    ttl = 0.5
    app = create_app(settings.model_copy(update={"key_cache_ttl": ttl}))
    with TestClient(app, raise_server_exceptions=False) as client:
        account = new_account(database_url)
        api = Api(client, account)
        ok_data(api.get(f"/api/workspace/{api.ws}"))
        _revoke(database_url, account.key_id)
        time.sleep(ttl + 0.2)
        unauthorized(api.get(f"/api/workspace/{api.ws}"))


# --- workspace selection (contract section 0) ------------------------------------------


class TestUpdateOpportunity:
    """Header required; query workspaceId optional and equal to the header."""

    def body(self) -> dict[str, Any]:
        return {"paramToUpdate": "name", "name": "Renamed"}

    def test_header_alone_works(self, api: Api) -> None:
        opp = api.create_opportunity()
        data = ok_data(api.update_opportunity(opp["id"], self.body()))
        assert data["oportunity"]["name"] == "Renamed"

    def test_missing_header_is_401_workspace_required_even_with_the_query(self, api: Api) -> None:
        opp = api.create_opportunity()
        for params in ({"id": opp["id"]}, {"id": opp["id"], "workspaceId": api.ws}):
            body = error(
                api.update_opportunity(opp["id"], self.body(), params=params, workspace=None),
                401,
                "WORKSPACE_REQUIRED",
            )
            assert "x-workspace-id" in body["message"]
        body_ws = {**self.body(), "workspaceId": api.ws}
        error(api.update_opportunity(opp["id"], body_ws, workspace=None), 401, "WORKSPACE_REQUIRED")

    def test_empty_header_counts_as_missing(self, api: Api) -> None:
        opp = api.create_opportunity()
        response = api.update_opportunity(opp["id"], self.body(), headers={"x-workspace-id": ""})
        error(response, 401, "WORKSPACE_REQUIRED")

    def test_query_equal_to_header_works(self, api: Api) -> None:
        opp = api.create_opportunity()
        response = api.update_opportunity(
            opp["id"], self.body(), params={"id": opp["id"], "workspaceId": api.ws}
        )
        ok_data(response, "Opportunity successfully updated.")

    def test_query_differing_from_header_is_403(self, api: Api) -> None:
        opp = api.create_opportunity()
        second = new_workspace(api)
        for other in (second, MISSING_ID, "junk"):
            response = api.update_opportunity(
                opp["id"], self.body(), params={"id": opp["id"], "workspaceId": other}
            )
            forbidden(response)
        assert api.set_opportunity(opp["id"], description="check")["name"] == "Deal"

    def test_body_workspace_must_equal_header(self, api: Api) -> None:
        opp = api.create_opportunity()
        second = new_workspace(api)
        forbidden(api.update_opportunity(opp["id"], {**self.body(), "workspaceId": second}))
        data = ok_data(api.update_opportunity(opp["id"], {**self.body(), "workspaceId": api.ws}))
        assert data["oportunity"]["name"] == "Renamed"

    def test_missing_id_is_400(self, api: Api) -> None:
        body = error(api.update_opportunity("", self.body(), params={}), 400, "BAD_REQUEST")
        assert body["data"]["errors"][0]["field"] == "id"

    def test_workspace_rules_come_before_the_id(self, api: Api) -> None:
        error(
            api.update_opportunity("", self.body(), params={}, workspace=None),
            401,
            "WORKSPACE_REQUIRED",
        )
        forbidden(api.update_opportunity("", self.body(), params={}, workspace=MISSING_ID))


class TestGetContact:
    """Header or query workspaceId; equal when both."""

    def test_header_only(self, api: Api) -> None:
        contact = api.create_contact()
        ok_data(api.get_contact(contact["id"]), "Successfully obtained list.")

    def test_query_only(self, api: Api) -> None:
        contact = api.create_contact()
        data = ok_data(
            api.get_contact(contact["id"], params={"workspaceId": api.ws}, workspace=None),
            "Successfully obtained list.",
        )
        assert data["data"][0]["id"] == contact["id"]

    def test_both_equal(self, api: Api) -> None:
        contact = api.create_contact()
        ok_data(api.get_contact(contact["id"], params={"workspaceId": api.ws}))

    def test_neither_is_401_workspace_required(self, api: Api) -> None:
        contact = api.create_contact()
        error(api.get_contact(contact["id"], workspace=None), 401, "WORKSPACE_REQUIRED")
        error(
            api.get_contact(contact["id"], workspace=None, params={"workspaceId": ""}),
            401,
            "WORKSPACE_REQUIRED",
        )

    def test_both_differing_is_403(self, api: Api) -> None:
        contact = api.create_contact()
        second = new_workspace(api)
        forbidden(api.get_contact(contact["id"], params={"workspaceId": second}))
        # The other order too: the contact's workspace in the query, another in the header.
        forbidden(api.get_contact(contact["id"], params={"workspaceId": api.ws}, workspace=second))

    def test_query_of_another_account_is_403(self, api: Api, other_api: Api) -> None:
        contact = api.create_contact()
        forbidden(
            api.get_contact(contact["id"], params={"workspaceId": other_api.ws}, workspace=None)
        )


class TestUpdateContact:
    """Header required (401), query workspaceId required (400); equal."""

    def body(self) -> dict[str, Any]:
        return {"paramToUpdate": "name", "name": "Renamed"}

    def test_both_equal_works(self, api: Api) -> None:
        contact = api.create_contact()
        data = ok_data(
            api.update_contact(contact["id"], self.body()), "Contact updated successfully."
        )
        assert data["contact"]["name"] == "Renamed"

    def test_missing_header_is_401(self, api: Api) -> None:
        contact = api.create_contact()
        body = error(
            api.update_contact(contact["id"], self.body(), workspace=None),
            401,
            "WORKSPACE_REQUIRED",
        )
        assert "x-workspace-id" in body["message"]

    def test_missing_query_is_400(self, api: Api) -> None:
        contact = api.create_contact()
        body = error(
            api.update_contact(contact["id"], self.body(), params={"id": contact["id"]}),
            400,
            "BAD_REQUEST",
        )
        assert body["data"]["errors"][0]["field"] == "workspaceId"
        assert "workspaceId" in body["message"]
        # A workspaceId in the body does not stand in for the query parameter.
        error(
            api.update_contact(
                contact["id"], {**self.body(), "workspaceId": api.ws}, params={"id": contact["id"]}
            ),
            400,
            "BAD_REQUEST",
        )

    def test_missing_both_is_401(self, api: Api) -> None:
        contact = api.create_contact()
        error(
            api.update_contact(
                contact["id"], self.body(), params={"id": contact["id"]}, workspace=None
            ),
            401,
            "WORKSPACE_REQUIRED",
        )

    def test_differing_is_403(self, api: Api) -> None:
        contact = api.create_contact()
        second = new_workspace(api)
        forbidden(
            api.update_contact(
                contact["id"], self.body(), params={"id": contact["id"], "workspaceId": second}
            )
        )
        forbidden(api.update_contact(contact["id"], self.body(), workspace=second))
        assert ok_data(api.get_contact(contact["id"]))["data"][0]["name"] == "Ana"

    def test_body_workspace_must_match(self, api: Api) -> None:
        contact = api.create_contact()
        second = new_workspace(api)
        forbidden(api.update_contact(contact["id"], {**self.body(), "workspaceId": second}))
        ok_data(api.update_contact(contact["id"], {**self.body(), "workspaceId": api.ws}))

    def test_missing_id_is_400_after_the_workspace_rules(self, api: Api) -> None:
        body = error(
            api.update_contact("", self.body(), params={"workspaceId": api.ws}), 400, "BAD_REQUEST"
        )
        assert body["data"]["errors"][0]["field"] == "id"
        error(
            api.update_contact("", self.body(), params={"workspaceId": api.ws}, workspace=None),
            401,
            "WORKSPACE_REQUIRED",
        )


@pytest.mark.parametrize("kind", ["contact", "opportunity"])
class TestCreate:
    """Body workspaceId or header; equal when both."""

    def send(self, api: Api, kind: str, body: dict[str, Any], **kw: Any) -> httpx.Response:
        full = {
            "name": "New",
            **({"email": unique_email()} if kind == "contact" else {"amount": 5}),
        }
        full.update(body)
        return api.post(f"/api/{kind}", json=full, **kw)

    def record(self, kind: str, data: dict[str, Any]) -> dict[str, Any]:
        return data["contact"] if kind == "contact" else data["opportunity"]

    def test_header_only(self, api: Api, kind: str) -> None:
        data = ok_data(self.send(api, kind, {}))
        assert self.record(kind, data)["workspaceId"] == api.ws

    def test_body_only(self, api: Api, kind: str) -> None:
        second = new_workspace(api)
        data = ok_data(self.send(api, kind, {"workspaceId": second}, workspace=None))
        assert self.record(kind, data)["workspaceId"] == second

    def test_both_equal(self, api: Api, kind: str) -> None:
        data = ok_data(self.send(api, kind, {"workspaceId": api.ws}))
        assert self.record(kind, data)["workspaceId"] == api.ws

    def test_differing_is_403(self, api: Api, kind: str, database_url: str) -> None:
        second = new_workspace(api)
        before = snapshot(database_url, api.account.account_id)
        forbidden(self.send(api, kind, {"workspaceId": second}))
        forbidden(self.send(api, kind, {"workspaceId": api.ws}, workspace=second))
        assert snapshot(database_url, api.account.account_id) == before

    def test_neither_is_401_workspace_required(self, api: Api, kind: str) -> None:
        error(self.send(api, kind, {}, workspace=None), 401, "WORKSPACE_REQUIRED")
        error(
            self.send(api, kind, {"workspaceId": None}, workspace=None), 401, "WORKSPACE_REQUIRED"
        )

    def test_body_workspace_of_another_account_is_403(
        self, api: Api, other_api: Api, kind: str
    ) -> None:
        forbidden(self.send(api, kind, {"workspaceId": other_api.ws}, workspace=None))

    def test_non_string_body_workspace_is_rejected(self, api: Api, kind: str) -> None:
        for value in (123, ["x"], {"id": api.ws}, True):
            response = self.send(api, kind, {"workspaceId": value})
            assert response.status_code in (400, 422), response.text
            assert response.json()["errorCode"] in ("BAD_REQUEST", "VALIDATION_ERROR")


class TestGetWorkspace:
    def test_path_alone(self, api: Api) -> None:
        data = ok_data(api.get(f"/api/workspace/{api.ws}", workspace=None))
        assert data["id"] == api.ws

    def test_header_equal(self, api: Api) -> None:
        assert ok_data(api.get(f"/api/workspace/{api.ws}"))["id"] == api.ws

    def test_header_differing_is_403(self, api: Api) -> None:
        second = new_workspace(api)
        forbidden(api.get(f"/api/workspace/{api.ws}", workspace=second))
        forbidden(api.get(f"/api/workspace/{second}"))
        assert ok_data(api.get(f"/api/workspace/{second}", workspace=second))["id"] == second


@pytest.mark.parametrize("item", ["stages", "tags", "segmentations", "agents"])
def test_setup_routes_take_the_workspace_from_the_path(api: Api, item: str) -> None:
    second = new_workspace(api)
    bodies = {
        "stages": {"kind": "contact", "name": "Extra"},
        "tags": {"name": "vip", "color": "#00ff00"},
        "segmentations": {"name": "Retail"},
        "agents": {"name": "Eva", "email": unique_email()},
    }
    body = bodies[item]
    # Path alone, and path with an equal header: the item lands in the path's workspace.
    created = ok_data(api.post(f"/api/workspace/{second}/{item}", json=body, workspace=None))
    if item == "agents":
        body = {**body, "email": unique_email()}
    created_2 = ok_data(api.post(f"/api/workspace/{second}/{item}", json=body, workspace=second))
    view = ok_data(api.get(f"/api/workspace/{second}", workspace=None))
    key = {"stages": "contactStages"}.get(item, item)
    ids = [x["id"] for x in view[key]]
    assert created["id"] in ids and created_2["id"] in ids
    assert created["id"] not in [x["id"] for x in api.workspace()[key]]
    # A differing header or body workspaceId: 403.
    forbidden(api.post(f"/api/workspace/{second}/{item}", json=body, workspace=api.ws))
    forbidden(
        api.post(
            f"/api/workspace/{second}/{item}", json={**body, "workspaceId": api.ws}, workspace=None
        )
    )
