"""`client.messages` and `client.channels` against a real `chatcrm serve` (contract K),
sync and async alike. Sending and media go to a fake Graph API on 127.0.0.1
(tests/sdk/scripted.py) that answers as Meta's Cloud API does; inbound messages arrive
signed as Meta signs them."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from chatcrm_client import Channel, Conflict, Media, Message, NotFound, ValidationFailed
from tests.sdk.scripted import Answer, ScriptedServer
from tests.sdk.shapes import assert_shape
from tests.servers import Server

pytestmark = pytest.mark.slow

UNKNOWN = "01a2170f-0000-7000-8000-000000000000"
PHONE, NUMBER = "+51 987 654 321", "51987654321"  # as given, and as stored
ACCESS_TOKEN, APP_SECRET = "EAAG-test-token", "app-secret"
SEND_WITHIN = 15.0  # seconds: the sender starts within 1 s with no load (K.2)


def phone_number_id() -> str:
    """Meta's id of a number: unique across the service, as a channel's must be."""
    return str(uuid.uuid4().int)[:15]


def sent(external_id: str) -> Answer:
    """The Cloud API's answer to an accepted message."""
    body = {
        "messaging_product": "whatsapp",
        "contacts": [{"input": NUMBER, "wa_id": NUMBER}],
        "messages": [{"id": external_id}],
    }
    return Answer(200, {"content-type": "application/json"}, raw=json.dumps(body).encode())


def refused(code: int, title: str) -> Answer:
    """The Cloud API's answer to a message it will not send."""
    error = {"message": f"(#{code}) {title}", "type": "OAuthException", "code": code}
    body = {"error": {**error, "error_data": {"details": title}, "fbtrace_id": "Az1"}}
    return Answer(400, {"content-type": "application/json"}, raw=json.dumps(body).encode())


def inbound_image(number_id: str, media_id: str) -> bytes:
    """A delivery of Meta's webhook: Ana sends a photo to the channel's number."""
    image = {"id": media_id, "mime_type": "image/jpeg", "sha256": "0" * 64, "caption": "la foto"}
    message = {"from": NUMBER, "id": "wamid.IN1", "timestamp": str(int(time.time()))}
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550100", "phone_number_id": number_id},
        "contacts": [{"profile": {"name": "Ana"}, "wa_id": NUMBER}],
        "messages": [{**message, "type": "image", "image": image}],
    }
    entry = {"id": "waba-1", "changes": [{"field": "messages", "value": value}]}
    return json.dumps({"object": "whatsapp_business_account", "entry": [entry]}).encode()


@pytest.fixture
def graph() -> Iterator[ScriptedServer]:
    server = ScriptedServer()
    yield server
    server.close()


def conversation(client: Any, contact_id: str) -> list[Message]:
    return list(client.messages.list(contact_id))


def settled(client: Any, contact_id: str, message_id: str) -> Message:
    """The message once the channel sender is done with it (no longer queued)."""
    deadline = time.monotonic() + SEND_WITHIN
    while True:
        [found] = [m for m in conversation(client, contact_id) if m.id == message_id]
        if found.status != "queued" or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def test_a_conversation_is_recorded_listed_and_read(client: Any) -> None:
    contact = client.contacts.create(name="Ana", phone=PHONE, platform_id=2)
    first = client.messages.record(
        contact.id,
        "in",
        "hola",
        created_at=datetime(2025, 1, 1, 10, tzinfo=UTC),
        external_id="bot-1",
    )
    assert isinstance(first, Message) and first.contact_id == contact.id
    assert (first.direction, first.status, first.text) == ("in", "received", "hola")
    assert (first.type, first.external_id) == ("text", "bot-1")
    assert first.created_at == datetime(2025, 1, 1, 10, tzinfo=UTC)
    assert_shape(first, "message")
    # The same externalId again changes nothing and answers the first.
    assert client.messages.record(contact.id, "in", "hola!", external_id="bot-1").id == first.id

    later = [client.messages.record(contact.id, ("in", "out")[i % 2], f"m{i}") for i in range(5)]
    assert (later[1].direction, later[1].status) == ("out", "sent")
    newest_first = [m.id for m in reversed([first, *later])]
    assert [m.id for m in client.messages.list(contact.id, page_size=2)] == newest_first
    assert [m.id for m in client.messages.list(contact.id)] == newest_first

    unread = client.contacts.get(contact.id)
    assert (unread.last_message, unread.is_read) == ("m4", False)
    client.messages.mark_read(contact.id)
    assert client.contacts.get(contact.id).is_read is True
    silent = client.contacts.create(name="Bo", phone="+51 911 111 111", platform_id=2)
    assert conversation(client, silent.id) == []


def test_failures_raise_their_errors(client: Any) -> None:
    contact = client.contacts.create(name="Ana", phone=PHONE, platform_id=2)
    with pytest.raises(ValidationFailed) as no_channel:
        client.messages.send(contact.id, text="hola")
    assert no_channel.value.error_code == "NO_CHANNEL"
    with pytest.raises(ValueError):
        client.messages.send(contact.id)  # neither text nor a template
    with pytest.raises(ValueError):
        client.messages.send(contact.id, text="hola", template={"name": "t", "language": "es"})

    recorded = client.messages.record(contact.id, "out", "sent elsewhere")
    with pytest.raises(Conflict) as not_failed:
        client.messages.retry(recorded.id)
    assert not_failed.value.error_code == "MESSAGE_NOT_FAILED"
    with pytest.raises(NotFound) as missing:
        client.messages.retry(UNKNOWN)
    assert missing.value.error_code == "MESSAGE_NOT_FOUND"
    with pytest.raises(NotFound):
        client.messages.media(recorded.id)  # a text message has none
    with pytest.raises(NotFound) as no_contact:
        list(client.messages.list(UNKNOWN))
    assert no_contact.value.error_code == "CONTACT_NOT_FOUND"
    with pytest.raises(ValidationFailed) as invalid:
        client.messages.record(contact.id, "sideways", "hola")
    assert [e["field"] for e in invalid.value.errors] == ["direction"]


def test_channels_are_created_changed_and_deleted(client: Any) -> None:
    number_id = phone_number_id()
    channel = client.channels.create(
        "Sales", number_id, ACCESS_TOKEN, APP_SECRET, display_phone_number="+51 1 555 0100"
    )
    assert isinstance(channel, Channel) and channel.type == "whatsapp"
    assert (channel.name, channel.phone_number_id, channel.enabled) == ("Sales", number_id, True)
    assert channel.api_base_url == "https://graph.facebook.com/v21.0"
    assert len(channel.verify_token) == 32
    assert channel.webhook_url.endswith(f"/channels/whatsapp/{channel.id}")
    assert ACCESS_TOKEN not in json.dumps(channel.to_dict()) and "appSecret" not in channel
    assert_shape(channel, "channel")

    assert client.channels.list() == [channel]
    assert client.channels.get(channel.id) == channel
    changed = client.channels.update(channel.id, name="Support", enabled=False)
    assert (changed.id, changed.name, changed.enabled) == (channel.id, "Support", False)
    assert changed.updated_at >= channel.updated_at

    with pytest.raises(Conflict) as duplicate:
        client.channels.create("Again", number_id, ACCESS_TOKEN, APP_SECRET)
    assert duplicate.value.error_code == "DUPLICATE_CHANNEL"
    client.channels.delete(channel.id)
    with pytest.raises(NotFound) as missing:
        client.channels.get(channel.id)
    assert missing.value.error_code == "CHANNEL_NOT_FOUND"
    assert client.channels.list() == []


def test_a_message_is_sent_and_a_failed_one_retried(client: Any, graph: ScriptedServer) -> None:
    graph.script(sent("wamid.A"), refused(131047, "Re-engagement message"), sent("wamid.C"))
    number_id = phone_number_id()
    client.channels.create("Sales", number_id, ACCESS_TOKEN, APP_SECRET, api_base_url=graph.url)
    contact = client.contacts.create(name="Ana", phone=PHONE, platform_id=2)

    with pytest.raises(ValidationFailed) as closed:  # no inbound message yet
        client.messages.send(contact.id, text="hola")
    assert closed.value.error_code == "WINDOW_CLOSED"
    template = {"name": "welcome", "language": "es", "parameters": ["Ana"]}
    queued = client.messages.send(contact.id, template=template)
    assert (queued.direction, queued.type, queued.status) == ("out", "template", "queued")
    done = settled(client, contact.id, queued.id)
    assert (done.status, done.external_id) == ("sent", "wamid.A")

    [request] = graph.seen
    assert (request.method, request.path) == ("POST", f"/{number_id}/messages")
    assert request.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    body = json.loads(request.body)
    assert (body["to"], body["type"], body["template"]["name"]) == (NUMBER, "template", "welcome")

    inbound = client.messages.record(contact.id, "in", "¿tienen stock?")
    reply = client.messages.send(contact.id, text="Sí, hay stock", reply_to_id=inbound.id)
    assert reply.reply_to_id == inbound.id
    failed = settled(client, contact.id, reply.id)
    assert failed.status == "failed" and str(failed.error["code"]) == "131047"
    assert json.loads(graph.seen[1].body)["text"] == {"body": "Sí, hay stock"}

    again = client.messages.retry(reply.id)
    assert (again.id, again.status, again.error) == (reply.id, "queued", None)
    assert settled(client, contact.id, reply.id).external_id == "wamid.C"
    assert len(graph.seen) == 3


def test_inbound_media_comes_back_as_bytes(
    client: Any, graph: ScriptedServer, sdk_server: Server
) -> None:
    number_id, media_id, photo = phone_number_id(), "1013859600285441", b"\xff\xd8\xff jpeg"
    channel = client.channels.create(
        "Sales", number_id, ACCESS_TOKEN, APP_SECRET, api_base_url=graph.url
    )
    contact = client.contacts.create(name="Ana", phone=PHONE, platform_id=2)
    body = inbound_image(number_id, media_id)
    signature = hmac.new(APP_SECRET.encode(), body, hashlib.sha256).hexdigest()
    delivered = httpx.post(
        f"{sdk_server.base_url}/channels/whatsapp/{channel.id}",
        content=body,
        headers={"content-type": "application/json", "x-hub-signature-256": f"sha256={signature}"},
    )
    assert delivered.status_code == 200, delivered.text

    [message] = conversation(client, contact.id)
    assert (message.direction, message.type, message.text) == ("in", "image", "la foto")
    assert message.media["id"] == media_id and message.media["mimeType"] == "image/jpeg"
    where = {"url": f"{graph.url}/files/{media_id}", "mime_type": "image/jpeg", "id": media_id}
    graph.script(
        Answer(200, raw=json.dumps(where).encode()),
        Answer(200, {"content-type": "image/jpeg"}, raw=photo),
    )
    media = client.messages.media(message.id)
    assert isinstance(media, Media) and (media.content, media.content_type) == (photo, "image/jpeg")
    assert [(r.method, r.path) for r in graph.seen] == [
        ("GET", f"/{media_id}"),
        ("GET", f"/files/{media_id}"),
    ]
    assert {r.headers["authorization"] for r in graph.seen} == {f"Bearer {ACCESS_TOKEN}"}
