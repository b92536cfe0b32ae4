"""Fixtures of the conversation tests: an app of their own on each backend (it allows a
Graph API on 127.0.0.1 and names a public URL), a fake Graph API, Meta's deliveries.

The channel sender claims every due message of its database, so these tests run on
databases of their own, and a test runs the sender itself (`Conversation.send_all`)
rather than leaving it to a background task."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.channels.sending import Sender
from chatcrm.config import Settings
from chatcrm.db.database import Database
from tests.client import Api, ok_data, unique
from tests.conftest import databases_per_backend, new_account, run_sync
from tests.conversations import meta
from tests.conversations.fake_graph import TOKEN, FakeGraph

PUBLIC_URL = "https://crm.example.com"
APP_SECRET = "meta-app-secret-for-tests"
_numbers = itertools.count(1)


def conversation_settings(url: str, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "database_url": url,
        "rate_limit": 0,
        "access_log": False,
        "dispatch": False,
        "webhook_allow_private": True,
        "public_url": PUBLIC_URL,
        "channel_retry_schedule": "0.2,0.2,0.2,0.2",
        "channel_timeout": 2.0,
    }
    values.update(overrides)
    return Settings(**values)


conversation_url = databases_per_backend("conversation_url")


@pytest.fixture(scope="session")
def conversation_http(conversation_url: str) -> Iterator[TestClient]:
    app = create_app(conversation_settings(conversation_url))
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


@pytest.fixture
def graph() -> Iterator[FakeGraph]:
    fake = FakeGraph()
    yield fake
    fake.close()


def new_sender_number() -> str:
    return f"51977{next(_numbers):06d}"


class Conversation:
    """One workspace with a WhatsApp channel pointed at the fake Graph API."""

    def __init__(self, http: TestClient, url: str, graph: FakeGraph) -> None:
        self.http = http
        self.url = url
        self.graph = graph
        self.api = Api(http, new_account(url))
        self.phone_number_id = unique("10654")
        self.channel = ok_data(
            self.api.post(
                "/api/channel",
                json={
                    "type": "whatsapp",
                    "name": "Sales line",
                    "phoneNumberId": self.phone_number_id,
                    "displayPhoneNumber": "+1 555 078 3881",
                    "accessToken": TOKEN,
                    "appSecret": APP_SECRET,
                    "apiBaseUrl": graph.base_url,
                },
            )
        )["channel"]

    def deliver(
        self,
        payload: dict[str, Any],
        *,
        secret: str = APP_SECRET,
        channel_id: str | None = None,
        raw: bytes | None = None,
    ) -> httpx.Response:
        body = raw if raw is not None else meta.encoded(payload)
        return self.http.post(
            f"/channels/whatsapp/{channel_id or self.channel['id']}",
            content=body,
            headers={
                "content-type": "application/json",
                "x-hub-signature-256": meta.sign(body, secret),
            },
        )

    def inbound(self, sender: str, text: str, *, name: str | None = None, **kw: Any) -> str:
        """A text from `sender` delivered as Meta would; returns its wamid."""
        message = meta.text_message(sender, text, **kw)
        payload = meta.delivery(
            self.phone_number_id, messages=[message], names={sender: name} if name else None
        )
        assert self.deliver(payload).status_code == 200
        return str(message["id"])

    def contact_of(self, number: str) -> dict[str, Any]:
        found = ok_data(
            self.api.get("/api/contact/searchByCellphone", params={"cellphone": number})
        )
        assert len(found["data"]) == 1, found
        record: dict[str, Any] = found["data"][0]
        return record

    def contact(self, contact_id: str) -> dict[str, Any]:
        found = ok_data(self.api.get_contact(contact_id))["data"]
        record: dict[str, Any] = found[0] if isinstance(found, list) else found
        return record

    def messages(self, contact_id: str, **params: Any) -> dict[str, Any]:
        data: dict[str, Any] = ok_data(
            self.api.get(f"/api/contact/{contact_id}/messages", params=params)
        )
        return data

    def send(self, contact_id: str, **body: Any) -> httpx.Response:
        return self.api.post(f"/api/contact/{contact_id}/messages", json=body)

    def send_all(self, **overrides: Any) -> int:
        """One round of a channel sender over the database, waiting for its sends."""

        async def run() -> int:
            db = Database(conversation_settings(self.url))
            try:
                return await Sender(db, conversation_settings(self.url, **overrides)).run_once()
            finally:
                await db.dispose()

        return run_sync(run)


@pytest.fixture
def conv(conversation_http: TestClient, conversation_url: str, graph: FakeGraph) -> Conversation:
    return Conversation(conversation_http, conversation_url, graph)


@pytest.fixture
def other_conv(
    conversation_http: TestClient, conversation_url: str, graph: FakeGraph
) -> Conversation:
    """Another account's workspace, with a channel of its own."""
    return Conversation(conversation_http, conversation_url, graph)
