"""The channel sender runs by itself inside the app (as in every `chatcrm serve` worker):
a queued message reaches the Graph API without anyone calling it, well within a second
of the commit when nothing else is going on."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from tests.client import ok_data
from tests.conversations.conftest import Conversation, conversation_settings, new_sender_number
from tests.conversations.fake_graph import FakeGraph


@pytest.fixture
def running(conversation_url: str, graph: FakeGraph) -> Iterator[Conversation]:
    settings = conversation_settings(conversation_url, dispatch=True)
    with TestClient(create_app(settings), raise_server_exceptions=False) as http:
        yield Conversation(http, conversation_url, graph)


def test_a_queued_message_goes_out_by_itself(running: Conversation) -> None:
    number = new_sender_number()
    running.inbound(number, "hello?")
    contact = running.contact_of(number)
    ok_data(running.send(contact["id"], text="Hi, how can we help?"))
    committed = time.monotonic()
    got = running.graph.wait_for(1, timeout=5.0)
    assert [r.body["text"]["body"] for r in got] == ["Hi, how can we help?"]
    assert got[0].at - committed < 2.0
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if running.messages(contact["id"])["messages"][-1]["status"] == "sent":
            break
        time.sleep(0.05)
    assert running.messages(contact["id"])["messages"][-1]["status"] == "sent"
