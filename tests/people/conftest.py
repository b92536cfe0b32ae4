"""People tests: an app of their own (its cookie jar is never shared with other tests),
and a "browser" per signed-in person that sends its own session cookie."""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.provisioning import NewAccount
from tests.client import Api, ok_data, unique_email

PASSWORD = "correct horse battery"


class Addressed:
    """The app, with the client address its requests come from chosen by the test: sign-in
    throttling counts failures per address (J.3), so each test gets one of its own and
    no test's failures hold back another's sign-ins."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.address = "testclient"

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, "client": (self.address, 50000)}
        await self.app(scope, receive, send)


@pytest.fixture(scope="module")
def people_http(database_url: str) -> Iterator[TestClient]:
    settings = Settings(
        database_url=database_url,
        rate_limit=0,
        access_log=False,
        dispatch=False,
        public_url="http://console.test",
    )
    with TestClient(
        Addressed(create_app(settings)),
        raise_server_exceptions=False,
        base_url="http://console.test",
    ) as client:
        yield client


@pytest.fixture
def owner_api(people_http: TestClient, account: NewAccount) -> Api:
    """The account's key (every permission), on the people app, from an address of this
    test's own."""
    people_http.cookies.clear()
    people_http.app.address = f"10.9.{next(_addresses) % 250}.{next(_addresses) % 250}"
    return Api(people_http, account)


_addresses = itertools.count(int(uuid.uuid4().int % 60000))


@dataclass
class Browser:
    """One person's console: its own session cookie and CSRF token."""

    http: TestClient
    token: str = ""
    csrf: str = ""
    user: dict[str, Any] = field(default_factory=dict)

    def request(
        self,
        method: str,
        path: str,
        *,
        csrf: bool = True,
        headers: dict[str, str] | None = None,
        **kw: Any,
    ) -> httpx.Response:
        sent = {"cookie": f"chatcrm_session={self.token}"} if self.token else {}
        if csrf and method not in ("GET", "HEAD") and self.csrf:
            sent["x-csrf-token"] = self.csrf
        sent.update(headers or {})
        try:
            return self.http.request(method, path, headers=sent, **kw)
        finally:
            self.http.cookies.clear()

    def signed_in(self, response: httpx.Response) -> Browser:
        data = ok_data(response, "Signed in successfully.")
        self.token = response.cookies.get("chatcrm_session") or _cookie(response)
        self.csrf = data["csrfToken"]
        self.user = data["user"]
        self.http.cookies.clear()
        return self


def _cookie(response: httpx.Response) -> str:
    header = response.headers["set-cookie"]
    return header.split(";", 1)[0].split("=", 1)[1]


def invite(
    api: Api, role: str = "agent", *, email: str | None = None, **extra: Any
) -> dict[str, Any]:
    body = {"email": email or unique_email(), "name": f"{role.title()} person", "role": role}
    if role in ("agent", "viewer"):
        body["workspaceIds"] = [api.ws]
    body.update(extra)
    data: dict[str, Any] = ok_data(api.post("/api/user", json=body, workspace=None))
    return data


def token_of(url: str) -> str:
    return url.rsplit("/", 1)[1]


def person(api: Api, role: str = "agent", *, password: str = PASSWORD, **extra: Any) -> Browser:
    """A user of `api`'s account with this role, invited, accepted and signed in."""
    invited = invite(api, role, **extra)
    browser = Browser(api.http)
    return browser.signed_in(
        browser.request(
            "POST",
            "/api/invitation/accept",
            json={"token": token_of(invited["inviteUrl"]), "password": password},
        )
    )
