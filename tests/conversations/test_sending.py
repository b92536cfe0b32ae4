"""Sending (contract K.1, K.2): the 24-hour window, the Cloud API bodies, and what each
answer of the Graph API makes of a message — a message is never sent twice."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import bindparam, select, update

from chatcrm.channels.send_claims import claim_sends
from chatcrm.channels.tables import channels
from chatcrm.db.database import Database
from chatcrm.messages.service import keep_early_status
from chatcrm.messages.tables import early_statuses
from tests.client import error, ok_data, unique_phone
from tests.conftest import on_database, run_sync
from tests.conversations import meta
from tests.conversations.conftest import Conversation, conversation_settings, new_sender_number
from tests.conversations.fake_graph import TOKEN, WINDOW_CLOSED, Reply


def _open_conversation(conv: Conversation) -> tuple[dict[str, Any], str]:
    number = new_sender_number()
    conv.inbound(number, "hi there")
    return conv.contact_of(number), number


def _last(conv: Conversation, contact_id: str) -> dict[str, Any]:
    message: dict[str, Any] = conv.messages(contact_id)["messages"][-1]
    return message


def test_a_text_is_sent_as_the_cloud_api_wants(conv: Conversation) -> None:
    contact, number = _open_conversation(conv)
    queued = ok_data(
        conv.send(contact["id"], text="Our price is 10"), "Message queued successfully."
    )
    message = queued["message"]
    assert message["status"] == "queued" and message["direction"] == "out"
    assert message["sentBy"]["type"] == "key" and message["externalId"] is None
    assert conv.contact(contact["id"])["lastMessage"] == "Our price is 10"
    conv.send_all()
    request = conv.graph.sends()[-1]
    assert request.path == f"/v21.0/{conv.phone_number_id}/messages"
    assert request.headers["authorization"] == f"Bearer {TOKEN}"
    assert request.body == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": number,
        "type": "text",
        "text": {"body": "Our price is 10"},
    }
    sent = _last(conv, contact["id"])
    assert sent["id"] == message["id"] and sent["status"] == "sent"
    assert sent["externalId"].startswith("wamid.fake")
    events = ok_data(conv.api.get("/api/events", params={"recordId": message["id"]}))["events"]
    assert [e["type"] for e in events] == ["message.created", "message.updated"]
    assert events[1]["changed"] == ["status", "externalId", "statusAt"]  # record key order
    assert events[1]["recordVersion"] == 2


def test_a_contact_s_messages_go_out_one_after_the_other_in_their_order(
    conv: Conversation,
) -> None:
    """Queued together, a contact's messages were sent at once and could reach Meta in
    any order: each now waits until the one queued before it is sent (or has failed),
    while another contact's message is not held up behind them."""
    contact, number = _open_conversation(conv)
    other, other_number = _open_conversation(conv)
    for text in ("first", "second", "third"):
        ok_data(conv.send(contact["id"], text=text))
    ok_data(conv.send(other["id"], text="elsewhere"))
    before = len(conv.graph.sends())
    assert conv.send_all() == 2  # the first of each contact
    assert sorted(r.body["to"] for r in conv.graph.sends()[before:]) == sorted(
        [number, other_number]
    )
    assert conv.send_all() == 1 and conv.send_all() == 1 and conv.send_all() == 0
    sent = [r.body["text"]["body"] for r in conv.graph.sends()[before:] if r.body["to"] == number]
    assert sent == ["first", "second", "third"]
    statuses = [m["status"] for m in conv.messages(contact["id"])["messages"][-3:]]
    assert statuses == ["sent"] * 3


def test_a_reply_quotes_the_message(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    inbound = _last(conv, contact["id"])
    ok_data(conv.send(contact["id"], text="About that", replyToId=inbound["id"]))
    conv.send_all()
    assert conv.graph.sends()[-1].body["context"] == {"message_id": inbound["externalId"]}
    other = conv.api.create_contact(name="Else")
    theirs = ok_data(
        conv.api.post(
            f"/api/contact/{other['id']}/messages/record", json={"direction": "in", "text": "x"}
        )
    )
    body = error(
        conv.send(contact["id"], text="x", replyToId=theirs["id"]), 422, "VALIDATION_ERROR"
    )
    assert body["data"]["errors"][0]["field"] == "replyToId"


def test_a_template_is_allowed_outside_the_window(conv: Conversation) -> None:
    number = unique_phone()
    contact = conv.api.create_contact(name="Cold lead", internalWhatsappNumber=number)
    error(conv.send(contact["id"], text="Hello?"), 422, "WINDOW_CLOSED")
    template = {"name": "follow_up", "language": "es", "parameters": ["Ana", "10%"]}
    message = ok_data(conv.send(contact["id"], template=template))["message"]
    assert message["type"] == "template"
    conv.send_all()
    assert conv.graph.sends()[-1].body == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": number,
        "type": "template",
        "template": {
            "name": "follow_up",
            "language": {"code": "es"},
            "components": [
                {
                    "type": "body",
                    "parameters": [
                        {"type": "text", "text": "Ana"},
                        {"type": "text", "text": "10%"},
                    ],
                }
            ],
        },
    }


def test_a_template_s_parameters_null_means_none(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="No params", internalWhatsappNumber=unique_phone())
    template = {"name": "hello_world", "language": "en_US", "parameters": None}
    message = ok_data(conv.send(contact["id"], template=template))["message"]
    assert message["type"] == "template"
    conv.send_all()
    assert conv.graph.sends()[-1].body["template"] == {
        "name": "hello_world",
        "language": {"code": "en_US"},
    }


def test_the_window_is_24_hours_after_the_last_inbound_message(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Old", internalWhatsappNumber=unique_phone())
    old = (datetime.now(UTC) - timedelta(hours=25)).isoformat()
    ok_data(
        conv.api.post(
            f"/api/contact/{contact['id']}/messages/record",
            json={"direction": "in", "text": "old", "createdAt": old},
        )
    )
    error(conv.send(contact["id"], text="late"), 422, "WINDOW_CLOSED")
    recent = (datetime.now(UTC) - timedelta(hours=23)).isoformat()
    ok_data(
        conv.api.post(
            f"/api/contact/{contact['id']}/messages/record",
            json={"direction": "in", "text": "newer", "createdAt": recent},
        )
    )
    ok_data(conv.send(contact["id"], text="in time"))
    conv.send_all()


def test_no_channel(conv: Conversation) -> None:
    no_number = conv.api.create_contact(name="No phone")
    error(conv.send(no_number["id"], template={"name": "t", "language": "en"}), 422, "NO_CHANNEL")
    contact, _ = _open_conversation(conv)
    ok_data(conv.api.put(f"/api/channel/{conv.channel['id']}", json={"enabled": False}))
    error(conv.send(contact["id"], text="x"), 422, "NO_CHANNEL")
    error(conv.send("00000000-0000-7000-8000-000000000000", text="x"), 404, "CONTACT_NOT_FOUND")


def test_send_bodies_are_checked(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    for body in (
        {},
        {"text": "a", "template": {"name": "t", "language": "en"}},
        {"text": "x" * 4097},
        {"text": "   "},
    ):
        error(conv.send(contact["id"], **body), 422, "VALIDATION_ERROR")
    error(conv.send(contact["id"], template={"name": "t"}), 422, "VALIDATION_ERROR")
    error(conv.send(contact["id"], text="a", priority="high"), 400, "BAD_REQUEST")
    # A template's text (`[template t] p, p…`) keeps within the 4,096 of K.5 as a text does.
    longest = "p" * (4096 - len("[template t] ") - 3 * 1024 - 3 * len(", "))
    fits = {"name": "t", "language": "en", "parameters": [*["q" * 1024] * 3, longest]}
    over = {**fits, "parameters": [*["q" * 1024] * 3, longest + "p"]}
    body = error(conv.send(contact["id"], template=over), 422, "VALIDATION_ERROR")
    assert [e["field"] for e in body["data"]["errors"]] == ["template.parameters"]
    sent = ok_data(conv.send(contact["id"], template=fits))["message"]
    assert len(sent["text"]) == 4096
    assert [m["direction"] for m in conv.messages(contact["id"])["messages"]] == ["in", "out"]


def test_an_idempotent_send_is_queued_once(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    headers = {"Idempotency-Key": f"send-{contact['id']}"}
    first = conv.api.post(
        f"/api/contact/{contact['id']}/messages", json={"text": "once"}, headers=headers
    )
    again = conv.api.post(
        f"/api/contact/{contact['id']}/messages", json={"text": "once"}, headers=headers
    )
    assert ok_data(first)["id"] == ok_data(again)["id"]
    assert len(conv.messages(contact["id"])["messages"]) == 2


def test_an_error_answer_fails_the_message(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    conv.graph.script(WINDOW_CLOSED)
    ok_data(conv.send(contact["id"], text="too late?"))
    conv.send_all()
    message = _last(conv, contact["id"])
    assert message["status"] == "failed"
    assert message["error"] == {"code": 131047, "title": "Re-engagement message"}


def test_a_sent_message_whose_id_is_held_is_sent_without_it(conv: Conversation) -> None:
    """Meta answered 2xx: the message went out, so it is `sent` (K.2) even when the id
    Meta gave is one the workspace already holds (a replayed answer, a fake's reused
    ids) — not left to end as UNKNOWN_OUTCOME, which would invite sending it again."""
    number = new_sender_number()
    inbound_wamid = conv.inbound(number, "hi there")
    contact = conv.contact_of(number)
    answer = {"messaging_product": "whatsapp", "messages": [{"id": inbound_wamid}]}
    conv.graph.script(Reply(200, answer))
    ok_data(conv.send(contact["id"], text="its id is taken"))
    conv.send_all()
    message = _last(conv, contact["id"])
    assert (message["status"], message["externalId"]) == ("sent", None)
    assert len(conv.graph.sends()) == 1  # sent once


def test_429_is_retried_then_sent(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    conv.graph.script(
        Reply(429, {"error": {"code": 130429, "message": "Rate limit hit"}}, {"retry-after": "0"})
    )
    ok_data(conv.send(contact["id"], text="patience"))
    conv.send_all()
    assert _last(conv, contact["id"])["status"] == "queued"
    time.sleep(0.3)
    conv.send_all()
    assert len(conv.graph.sends()) == 2
    assert _last(conv, contact["id"])["status"] == "sent"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_a_refused_connection_is_retried_until_the_schedule_ends(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    nowhere = f"http://127.0.0.1:{_closed_port()}/v21.0"
    ok_data(conv.api.put(f"/api/channel/{conv.channel['id']}", json={"apiBaseUrl": nowhere}))
    ok_data(conv.send(contact["id"], text="hello?"))
    for _ in range(5):  # the first attempt and the four retries of the test schedule
        conv.send_all()
        assert _last(conv, contact["id"])["status"] in ("queued", "failed")
        time.sleep(0.3)
    message = _last(conv, contact["id"])
    assert message["status"] == "failed" and message["error"]["code"] == "NOT_SENT"


@contextmanager
def _port_that_never_connects() -> Iterator[int]:
    """A listening port whose queue of connections is full and never accepted: a new
    connection's SYN is dropped, so connecting to it hangs (nothing can be written)."""
    with socket.socket() as server, ExitStack() as stack:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        port: int = server.getsockname()[1]
        for _ in range(4):
            filler = stack.enter_context(socket.socket())
            filler.setblocking(False)
            with suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
        yield port


def test_a_connection_never_made_is_retried(conv: Conversation) -> None:
    """A time-out while connecting is not one after the request was written: nothing was
    sent, so the message waits for its next attempt instead of failing as unknown."""
    contact, _ = _open_conversation(conv)
    with _port_that_never_connects() as port:
        nowhere = f"http://127.0.0.1:{port}/v21.0"
        ok_data(conv.api.put(f"/api/channel/{conv.channel['id']}", json={"apiBaseUrl": nowhere}))
        ok_data(conv.send(contact["id"], text="anyone there?"))
        conv.send_all()
    message = _last(conv, contact["id"])
    assert message["status"] == "queued" and message["error"] is None, message


def test_an_unknown_outcome_is_never_sent_again(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    conv.graph.script(Reply(500), Reply(200, delay=3.0), Reply(hang_up=True))
    for text in ("five hundred", "slow", "hung up"):
        ok_data(conv.send(contact["id"], text=text))
        conv.send_all()
    for _ in range(3):
        time.sleep(0.3)
        conv.send_all()
    assert [r.body["text"]["body"] for r in conv.graph.sends()] == [
        "five hundred",
        "slow",
        "hung up",
    ]
    outbound = [m for m in conv.messages(contact["id"])["messages"] if m["direction"] == "out"]
    assert [m["status"] for m in outbound] == ["failed"] * 3
    assert {m["error"]["code"] for m in outbound} == {"UNKNOWN_OUTCOME"}


def test_a_send_cut_short_by_a_crash_fails_instead_of_repeating(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    ok_data(conv.send(contact["id"], text="mid-crash"))

    async def claim_and_die() -> None:
        db = Database(conversation_settings(conv.url))
        try:
            now = datetime.now(UTC)
            taken = await claim_sends(db, due=now, now=now, lease_seconds=0.1, limit=100)
            assert any(s.text == "mid-crash" for s in taken)
        finally:
            await db.dispose()

    run_sync(claim_and_die)  # leased, and never recorded: the process "died"
    time.sleep(0.2)
    conv.send_all()
    message = _last(conv, contact["id"])
    assert message["status"] == "failed" and message["error"]["code"] == "UNKNOWN_OUTCOME"
    assert [r.body["text"]["body"] for r in conv.graph.sends()] == []


def test_a_person_retries_a_failed_message(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    conv.graph.script(Reply(500))
    message = ok_data(conv.send(contact["id"], text="again"))["message"]
    conv.send_all()
    assert _last(conv, contact["id"])["status"] == "failed"
    retried = ok_data(conv.api.post(f"/api/message/{message['id']}/retry"))
    assert retried["id"] == message["id"]
    assert retried["message"]["status"] == "queued" and retried["message"]["error"] is None
    conv.send_all()
    assert _last(conv, contact["id"])["status"] == "sent"
    assert len(conv.graph.sends()) == 2


def test_a_deleted_contact_s_messages_are_not_retried_until_it_is_restored(
    conv: Conversation,
) -> None:
    """B.3: a deleted contact leaves every read, and its messages with it: by their own
    id too (a retry, their media), until it is restored."""
    contact, _ = _open_conversation(conv)
    conv.graph.script(Reply(500))
    message = ok_data(conv.send(contact["id"], text="again"))["message"]
    conv.send_all()
    ok_data(conv.api.delete(f"/api/contact/{contact['id']}"))
    for answer in (
        conv.api.post(f"/api/message/{message['id']}/retry"),
        conv.api.get(f"/api/message/{message['id']}/media"),
    ):
        error(answer, 404, "MESSAGE_NOT_FOUND")
    assert len(conv.graph.sends()) == 1
    ok_data(conv.api.post(f"/api/contact/{contact['id']}/restore"))
    ok_data(conv.api.post(f"/api/message/{message['id']}/retry"))


def test_a_message_queued_before_its_contact_was_deleted_is_not_sent(
    conv: Conversation,
) -> None:
    """A contact deleted while its message waited to be sent is not written to: the
    message fails (NO_CHANNEL, "the contact was deleted"), and once the contact is restored
    a person may retry it."""
    contact, _ = _open_conversation(conv)
    message = ok_data(conv.send(contact["id"], text="before the delete"))["message"]
    ok_data(conv.api.delete(f"/api/contact/{contact['id']}"))
    conv.send_all()
    assert conv.graph.sends() == []
    ok_data(conv.api.post(f"/api/contact/{contact['id']}/restore"))
    failed = _last(conv, contact["id"])
    assert (failed["id"], failed["status"]) == (message["id"], "failed")
    assert failed["error"] == {"code": "NO_CHANNEL", "title": "not sent: the contact was deleted"}
    ok_data(conv.api.post(f"/api/message/{message['id']}/retry"))
    conv.send_all()
    assert _last(conv, contact["id"])["status"] == "sent"
    assert len(conv.graph.sends()) == 1


def test_a_name_that_does_not_resolve_is_retried(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    ok_data(
        conv.api.put(
            f"/api/channel/{conv.channel['id']}", json={"apiBaseUrl": "http://graph.invalid/v21.0"}
        )
    )
    ok_data(conv.send(contact["id"], text="anyone?"))
    conv.send_all()
    assert _last(conv, contact["id"])["status"] == "queued"


def test_a_recorded_message_is_not_quoted_to_meta(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    recorded = ok_data(
        conv.api.post(
            f"/api/contact/{contact['id']}/messages/record",
            json={"direction": "in", "text": "from the bot", "externalId": "bot-7731"},
        )
    )["message"]
    ok_data(conv.send(contact["id"], text="re: bot", replyToId=recorded["id"]))
    conv.send_all()
    assert "context" not in conv.graph.sends()[-1].body


def test_a_retry_goes_out_through_the_channel_of_now(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    conv.graph.script(Reply(500))
    message = ok_data(conv.send(contact["id"], text="via the new line"))["message"]
    conv.send_all()
    ok_data(conv.api.delete(f"/api/channel/{conv.channel['id']}"))
    ok_data(
        conv.api.post(
            "/api/channel",
            json={
                "type": "whatsapp",
                "name": "New line",
                "phoneNumberId": conv.phone_number_id + "9",
                "accessToken": TOKEN,
                "appSecret": "s",
                "apiBaseUrl": conv.graph.base_url,
            },
        )
    )
    ok_data(conv.api.post(f"/api/message/{message['id']}/retry"))
    conv.send_all()
    assert conv.graph.sends()[-1].path == f"/v21.0/{conv.phone_number_id}9/messages"
    assert _last(conv, contact["id"])["status"] == "sent"


TOKEN_RULE = "must be printable ASCII without spaces, as Meta gives it"


def test_a_pasted_secret_loses_its_spaces_and_other_characters_are_refused(
    conv: Conversation,
) -> None:
    """K.2's secrets are what Meta gives: printable ASCII. One with a space inside or a
    character beyond ASCII could never be sent in a header (the HTTP client's error then
    quoted it): 422, without the value; spaces around a pasted one are dropped."""
    path = f"/api/channel/{conv.channel['id']}"
    for bad in ("EAAG token", "EAAG\u00e9t", "EAAG\u00a0t", "EAAG\u200bt"):
        for field in ("accessToken", "appSecret"):
            refused = conv.api.put(path, json={"paramToUpdate": field, field: bad})
            body = error(refused, 422, "VALIDATION_ERROR")
            assert body["data"]["errors"] == [{"field": field, "message": TOKEN_RULE}]
            assert bad not in refused.text
    pasted = {"paramToUpdate": "accessToken", "accessToken": f" {TOKEN}\u00a0\n"}
    ok_data(conv.api.put(path, json=pasted))
    contact, _ = _open_conversation(conv)
    ok_data(conv.send(contact["id"], text="hello"))
    conv.send_all()
    assert conv.graph.sends()[-1].headers["authorization"] == f"Bearer {TOKEN}"
    assert _last(conv, contact["id"])["status"] == "sent"


def test_a_stored_token_that_cannot_be_sent_fails_the_message_without_logging_it(
    conv: Conversation, caplog: pytest.LogCaptureFixture
) -> None:
    """A token stored before such tokens were refused: the message fails at once, nothing
    sent, with a title that says what to do, and no log line quotes the token."""
    unsendable = "EAAGsecret-token\u00a0"

    async def store(db: Database) -> None:
        async with db.transaction() as conn:
            await conn.execute(
                update(channels).where(channels.c.id == bindparam("_id")),
                {"_id": conv.channel["id"], "access_token": unsendable},
            )

    on_database(conv.url, store)
    contact, _ = _open_conversation(conv)
    message = ok_data(conv.send(contact["id"], text="hello"))["message"]
    with caplog.at_level(logging.DEBUG):
        conv.send_all()
    failed = _last(conv, contact["id"])
    assert failed["id"] == message["id"] and failed["status"] == "failed"
    assert failed["error"] == {
        "code": "INVALID_ACCESS_TOKEN",
        "title": "the channel's accessToken is not printable ASCII: set it again",
    }
    assert conv.graph.sends() == []
    assert "EAAGsecret-token" not in caplog.text


def _status_before_the_answer(conv: Conversation, wamid: str, *statuses: dict[str, Any]) -> Reply:
    """Meta's answer to a send, naming `wamid`, made only after Meta's webhook of the
    message's statuses was answered (200: stored, so never sent again)."""
    answers: list[int] = []

    def webhook() -> None:
        answer = conv.deliver(meta.delivery(conv.phone_number_id, statuses=list(statuses)))
        answers.append(answer.status_code)

    body = {"messaging_product": "whatsapp", "messages": [{"id": wamid}]}
    reply = Reply(200, body, before=webhook)
    conv.graph.script(reply)
    return reply


@pytest.mark.parametrize("then", ["delivered", "read"])
def test_a_status_that_comes_before_the_answer_is_applied_with_it(
    conv: Conversation, then: str
) -> None:
    contact, _ = _open_conversation(conv)
    wamid = meta.wamid()
    later = [meta.status(wamid, "delivered")] + (
        [meta.status(wamid, "read")] if then == "read" else []
    )
    _status_before_the_answer(conv, wamid, *later)
    sent = ok_data(conv.send(contact["id"], text="quick"))
    conv.send_all()
    message = _last(conv, contact["id"])
    assert (message["id"], message["status"], message["externalId"]) == (sent["id"], then, wamid)
    # Each step an event, in order (D.1): queued, sent with its wamid, then what came early.
    page = conv.api.get("/api/events", params={"recordId": sent["id"], "pageSize": "100"})
    events = ok_data(page)["events"]
    steps = [e["data"]["status"] for e in events]
    assert steps == ["queued", "sent", "delivered"] + (["read"] if then == "read" else [])
    # What came early was brought by the channel, applied in the sender's transaction: its
    # events name the channel, as statuses applied at once do (J.4), not the system.
    assert [e["actor"]["type"] for e in events[2:]] == ["channel"] * len(later)
    assert {e["actor"]["id"] for e in events[2:]} == {conv.channel["id"]}
    assert events[1]["actor"]["type"] == "system"


def test_a_failure_that_comes_before_the_answer_fails_the_message(conv: Conversation) -> None:
    contact, _ = _open_conversation(conv)
    wamid = meta.wamid()
    errors = [{"code": 131047, "title": "Re-engagement message"}]
    _status_before_the_answer(conv, wamid, meta.status(wamid, "failed", errors=errors))
    ok_data(conv.send(contact["id"], text="outside the window?"))
    conv.send_all()
    message = _last(conv, contact["id"])
    assert message["status"] == "failed"
    assert message["error"] == {"code": 131047, "title": "Re-engagement message"}


def test_a_status_kept_while_the_answer_was_being_recorded_is_applied_later(
    conv: Conversation,
) -> None:
    """The webhook's transaction and the recording of the answer crossed: the status was
    kept after the answer looked for kept ones. The sender's next round applies it; one
    kept longer than any send can take is forgotten."""
    contact, _ = _open_conversation(conv)
    ok_data(conv.send(contact["id"], text="crossed"))
    conv.send_all()
    sent = _last(conv, contact["id"])
    assert sent["status"] == "sent"
    workspace_id = conv.api.ws

    async def keep(db: Database) -> int:
        now = datetime.now(UTC)
        async with db.transaction() as c:
            for wamid, at in ((sent["externalId"], now), ("wamid.never", now - timedelta(hours=2))):
                change = {"status": "delivered", "at": now, "error": None}
                await keep_early_status(c, workspace_id, external_id=wamid, now=at, **change)
        async with db.session() as c:
            return len(await c.fetch(select(early_statuses)))

    before = on_database(conv.url, keep)
    assert before >= 2
    conv.send_all()
    assert _last(conv, contact["id"])["status"] == "delivered"

    async def left(db: Database) -> list[str]:
        async with db.session() as c:
            rows = await c.fetch(
                select(early_statuses.c.external_id).where(
                    early_statuses.c.workspace_id == workspace_id
                )
            )
        return [r["external_id"] for r in rows]

    assert on_database(conv.url, left) == []
