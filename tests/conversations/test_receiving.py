"""Meta's webhook (contract K.2): the signature over the raw body, every message of every
entry applied before the 200, contacts found or created by number, duplicates (also
racing ones) changing nothing, statuses forward only."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from tests.client import error, ok_data, unique_phone
from tests.conversations.conftest import APP_SECRET, Conversation, new_sender_number
from tests.conversations.meta import delivery, encoded, sign, status, text_message, wamid


def _count(conv: Conversation, contact_id: str) -> int:
    return len(conv.messages(contact_id, pageSize="100")["messages"])


def _feed_size(conv: Conversation) -> int:
    return len(ok_data(conv.api.get("/api/events", params={"pageSize": "100"}))["events"])


def test_a_delivery_without_the_right_signature_stores_nothing(conv: Conversation) -> None:
    number = new_sender_number()
    payload = delivery(conv.phone_number_id, messages=[text_message(number, "forged")])
    before = _feed_size(conv)
    error(conv.deliver(payload, secret="not-the-app-secret"), 401, "UNAUTHORIZED")
    body = encoded(payload)
    path = f"/channels/whatsapp/{conv.channel['id']}"
    error(conv.http.post(path, content=body), 401, "UNAUTHORIZED")
    # Signed over other bytes (re-serialised JSON is not the raw body).
    forged = conv.http.post(
        path, content=body + b" ", headers={"x-hub-signature-256": sign(body, APP_SECRET)}
    )
    error(forged, 401, "UNAUTHORIZED")
    assert _feed_size(conv) == before
    found = ok_data(conv.api.get("/api/contact/searchByCellphone", params={"cellphone": number}))
    assert found["data"] == []


def test_unknown_disabled_and_unreadable(conv: Conversation) -> None:
    payload = delivery(conv.phone_number_id, messages=[])
    error(
        conv.deliver(payload, channel_id="00000000-0000-7000-8000-000000000000"),
        404,
        "CHANNEL_NOT_FOUND",
    )
    error(conv.deliver({}, raw=b"{not json"), 400, "BAD_REQUEST")
    ok_data(conv.api.put(f"/api/channel/{conv.channel['id']}", json={"enabled": False}))
    error(conv.deliver(payload), 404, "CHANNEL_NOT_FOUND")


NUMBERS = ("platformSenderId", "platformSenderPhone")  # the read shape has no third


def test_a_new_sender_becomes_a_contact(conv: Conversation) -> None:
    number = new_sender_number()
    wa = conv.inbound(number, "Hola", name="Núñez Pérez")
    contact = conv.contact_of(number)
    assert contact["name"] == "Núñez Pérez" and contact["platformId"] == 2
    assert contact["platformSenderId"] == number and contact["platformSenderPhone"] == number
    assert contact["platformSenderName"] == "Núñez Pérez"
    assert contact["isManuallyAdded"] is False and contact["isRead"] is False
    assert contact["lastMessage"] == "Hola"
    message = conv.messages(contact["id"])["messages"][0]
    assert message["externalId"] == wa and message["status"] == "received"
    assert message["direction"] == "in" and message["sentBy"] is None
    events = ok_data(conv.api.get("/api/events", params={"recordId": message["id"]}))["events"]
    # J.4: a channel acts under its display phone number.
    assert events[0]["actor"] == {
        "type": "channel",
        "id": conv.channel["id"],
        "name": "+1 555 078 3881",
    }
    # D.1: each event at the time of its change, in the order they were made: the new
    # contact's creation first, then its message and the contact's change.
    timeline = ok_data(conv.api.get("/api/events", params={"recordId": contact["id"]}))
    made = [e["createdAt"] for e in timeline["events"]]
    assert [e["type"] for e in timeline["events"]] == ["contact.created", "contact.updated"]
    assert made[0] <= events[0]["createdAt"] <= made[1]
    # Without a profile name, the number is the name.
    other = new_sender_number()
    conv.inbound(other, "hi")
    assert conv.contact_of(other)["name"] == other
    # K.2: the contact's three numbers are the sender's, normalised as B.1, however Meta
    # wrote it.
    written = new_sender_number()
    conv.inbound(f"+{written[:2]} {written[2:5]} {written[5:]}", "hi")
    numbers = conv.contact(conv.contact_of(written)["id"])
    assert [numbers[k] for k in NUMBERS] == [written] * 2


def test_a_sender_is_never_read_in_the_workspace_s_country(conv: Conversation) -> None:
    """docs/api.md 4.9: Meta's `from` begins with its country code. Read as a national
    number of the workspace's defaultCountry, a Belize sender became an Arkansas number:
    replies went to a stranger and its next delivery collided with that contact (409)."""
    ws = f"/api/workspace/{conv.api.ws}"
    ok_data(conv.api.put(ws, json={"paramToUpdate": "defaultCountry", "defaultCountry": "US"}))
    number = "501622" + new_sender_number()[-4:]  # a valid US national number too
    conv.inbound(number, "first")
    contact = conv.contact_of("+" + number)
    assert [conv.contact(contact["id"])[k] for k in NUMBERS] == [number] * 2
    assert contact["platformSenderId"] == number
    conv.inbound(number, "second")  # 200: the same contact, not a duplicate
    assert _count(conv, contact["id"]) == 2


def test_a_sender_written_with_a_trunk_zero_is_found_again(conv: Conversation) -> None:
    """Meta's `from` as written, `44 0 7700…`: its contact holds the number read from it
    (`447700…`). Looked up as written, each later delivery missed that contact, tried to
    make it again and was refused whole (409), other senders' messages with it."""
    number = "4407700" + new_sender_number()[-6:]
    conv.inbound(number, "first")
    contact = conv.contact_of("+44" + number[3:])
    assert [conv.contact(contact["id"])[k] for k in NUMBERS] == ["44" + number[3:]] * 2
    other = new_sender_number()
    both = [text_message(other, "hello"), text_message(number, "second")]
    assert ok_data(conv.deliver(delivery(conv.phone_number_id, messages=both))) == {
        "messages": 2,
        "statuses": 0,
    }
    assert _count(conv, contact["id"]) == 2
    assert _count(conv, conv.contact_of(other)["id"]) == 1


def test_a_known_number_is_the_existing_contact(conv: Conversation) -> None:
    phone = unique_phone()
    known = conv.api.create_contact(name="Known", internalWhatsappNumber="+" + phone)
    conv.inbound(phone, "It's me")
    assert conv.contact_of(phone)["id"] == known["id"]
    assert _count(conv, known["id"]) == 1


def test_messages_of_one_second_in_later_deliveries_follow_the_earlier_ones(
    conv: Conversation,
) -> None:
    """Meta dates messages in whole seconds and may bring one second's messages in several
    deliveries: each delivery's own were placed a microsecond apart from that second, so a
    later delivery's first went before the earlier delivery's second, and never became the
    contact's last message."""
    number = new_sender_number()
    second = int(time.time()) - 5
    first = [
        text_message(number, "1 Hi", ts=second),
        text_message(number, "2 I need help", ts=second),
    ]
    ok_data(conv.deliver(delivery(conv.phone_number_id, messages=first)))
    ok_data(
        conv.deliver(
            delivery(
                conv.phone_number_id, messages=[text_message(number, "3 with my order", ts=second)]
            )
        )
    )
    contact = conv.contact_of(number)
    listed = conv.messages(contact["id"])["messages"]
    assert [m["text"] for m in sorted(listed, key=lambda m: m["createdAt"])] == [
        "1 Hi", "2 I need help", "3 with my order"
    ]  # fmt: skip
    assert all(m["createdAt"].startswith(listed[0]["createdAt"][:19]) for m in listed)
    assert contact["lastMessage"] == "3 with my order"
    # A message of an earlier second, delivered late, still goes before them.
    ok_data(
        conv.deliver(
            delivery(conv.phone_number_id, messages=[text_message(number, "0 late", ts=second - 1)])
        )
    )
    after = conv.contact_of(number)
    assert after["lastMessage"] == "3 with my order"
    texts = [
        m["text"]
        for m in sorted(conv.messages(contact["id"])["messages"], key=lambda m: m["createdAt"])
    ]
    assert texts[0] == "0 late"


def test_a_duplicate_delivery_changes_nothing(conv: Conversation) -> None:
    number = new_sender_number()
    message = text_message(number, "once")
    payload = delivery(conv.phone_number_id, messages=[message])
    first = conv.deliver(payload)
    assert ok_data(first) == {"messages": 1, "statuses": 0}
    contact = conv.contact_of(number)
    before = _feed_size(conv)
    again = conv.deliver(payload)
    assert ok_data(again) == {"messages": 0, "statuses": 0}
    assert _feed_size(conv) == before and _count(conv, contact["id"]) == 1


def test_racing_duplicates_store_one_message(conv: Conversation) -> None:
    number = new_sender_number()
    payload = delivery(
        conv.phone_number_id, messages=[text_message(number, "race")], names={number: "Racer"}
    )
    answers: list[int] = []

    def post() -> None:
        answers.append(conv.deliver(payload).status_code)

    threads = [threading.Thread(target=post) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [200] * 6
    contact = conv.contact_of(number)  # exactly one contact
    assert _count(conv, contact["id"]) == 1


@pytest.mark.parametrize("run", range(3))
def test_deliveries_of_the_same_new_senders_in_other_orders_all_land(
    conv: Conversation, run: int
) -> None:
    """Meta batches differently from one delivery to the next: deliveries bringing the
    same new senders in other orders, at once, are each stored (200), once (not refused
    by the database's deadlock between them)."""
    numbers = [new_sender_number() for _ in range(4)]
    messages = {n: text_message(n, f"hello from {n}") for n in numbers}
    orders = [numbers, numbers[::-1], numbers[1::2] + numbers[::2], numbers[2:] + numbers[:2]]
    payloads = [
        delivery(conv.phone_number_id, messages=[messages[n] for n in order]) for order in orders
    ]
    answers: list[int] = []
    start = threading.Barrier(len(payloads))

    def post(payload: dict[str, Any]) -> None:
        start.wait()
        answers.append(conv.deliver(payload).status_code)

    threads = [threading.Thread(target=post, args=(p,)) for p in payloads]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [200] * len(payloads)
    for number in numbers:
        assert _count(conv, conv.contact_of(number)["id"]) == 1


def test_one_odd_item_does_not_make_the_delivery_refused(conv: Conversation) -> None:
    """A NUL character (which PostgreSQL's text cannot hold) in a text or a profile name
    is left out; a message id longer than any of Meta's is ignored as malformed: the
    delivery's other messages are stored, and Meta is answered 200 (K.2)."""
    number = new_sender_number()
    good, odd = text_message(number, "good message"), text_message(number, "nul\x00in")
    too_long = {**text_message(number, "its id is too long"), "id": "wamid." + "x" * 300}
    payload = delivery(
        conv.phone_number_id, messages=[good, odd, too_long], names={number: "Nu\x00ll"}
    )
    assert ok_data(conv.deliver(payload)) == {"messages": 2, "statuses": 0}
    contact = conv.contact_of(number)
    assert contact["name"] == "Null"
    texts = [m["text"] for m in conv.messages(contact["id"], pageSize="100")["messages"]]
    assert sorted(texts) == ["good message", "nulin"]


def test_odd_shapes_meta_could_send_do_not_refuse_the_delivery(conv: Conversation) -> None:
    """A profile that is not an object, a lone UTF-16 surrogate escape (an emoji cut in
    half: JSON's grammar allows it), nesting deeper than any field read: the delivery is
    answered 200 and its messages stored."""
    number = new_sender_number()
    cut = text_message(number, "cut \ud83d emoji")
    whole = text_message(number, "whole \U0001f600")
    payload = delivery(conv.phone_number_id, messages=[cut, whole])
    value = payload["entry"][0]["changes"][0]["value"]
    value["contacts"] = [{"profile": "Bob", "wa_id": number}, {"profile": ["x"], "wa_id": "1"}]
    deep: list[Any] = []
    for _ in range(600):
        deep = [deep]
    value["extra"] = deep
    raw = encoded(payload)
    assert b"\\ud83d" in raw  # json.dumps escapes the lone surrogate as Meta's JSON would
    assert ok_data(conv.deliver(payload, raw=raw)) == {"messages": 2, "statuses": 0}
    contact = conv.contact_of(number)
    assert contact["name"] == number  # no profile name: the number
    texts = sorted(m["text"] for m in conv.messages(contact["id"])["messages"])
    assert texts == ["cut \ufffd emoji", "whole \U0001f600"]
    # Still refused: what is not JSON at all, and JSON's missing constants.
    error(conv.deliver({}, raw=b'{"object": NaN}'), 400, "BAD_REQUEST")


def test_every_message_of_every_entry_in_one_delivery(conv: Conversation) -> None:
    a, b = new_sender_number(), new_sender_number()
    first = delivery(conv.phone_number_id, messages=[text_message(a, "a1"), text_message(b, "b1")])
    second = delivery(conv.phone_number_id, messages=[text_message(a, "a2")])
    elsewhere = delivery("some-other-number-id", messages=[text_message(a, "not ours")])
    payload: dict[str, Any] = {
        "object": "whatsapp_business_account",
        "entry": [
            first["entry"][0],
            {
                "id": "WABA1",
                "changes": [
                    second["entry"][0]["changes"][0],
                    {"field": "account_update", "value": {}},
                ],
            },
            elsewhere["entry"][0],
        ],
    }
    assert ok_data(conv.deliver(payload)) == {"messages": 3, "statuses": 0}
    assert [m["text"] for m in conv.messages(conv.contact_of(a)["id"])["messages"]] == ["a1", "a2"]
    assert _count(conv, conv.contact_of(b)["id"]) == 1


def test_message_types_as_kept(conv: Conversation) -> None:
    number = new_sender_number()
    base = {"from": number, "timestamp": "1760000000"}
    messages = [
        {
            **base,
            "id": wamid(),
            "type": "location",
            "location": {
                "latitude": -12.05,
                "longitude": -77.04,
                "name": "Office",
                "address": "Lima",
            },
        },
        {
            **base,
            "id": wamid(),
            "type": "interactive",
            "interactive": {
                "type": "button_reply",
                "button_reply": {"id": "b1", "title": "Yes, please"},
            },
        },
        {
            **base,
            "id": wamid(),
            "type": "button",
            "button": {"text": "Stop promotions", "payload": "stop"},
        },
        {
            **base,
            "id": wamid(),
            "type": "document",
            "document": {"id": "doc-1", "mime_type": "application/pdf", "filename": "quote.pdf"},
        },
        {**base, "id": wamid(), "type": "ephemeral_thing", "ephemeral_thing": {}},
    ]
    assert ok_data(conv.deliver(delivery(conv.phone_number_id, messages=messages)))["messages"] == 5
    contact = conv.contact_of(number)
    got = conv.messages(contact["id"])["messages"]
    assert [m["type"] for m in got] == [
        "location",
        "interactive",
        "button",
        "document",
        "unsupported",
    ]
    assert got[0]["location"] == {
        "latitude": -12.05,
        "longitude": -77.04,
        "name": "Office",
        "address": "Lima",
    }
    assert [m["text"] for m in got] == [None, "Yes, please", "Stop promotions", None, None]
    assert got[3]["media"] == {
        "id": "doc-1",
        "mimeType": "application/pdf",
        "caption": None,
        "fileName": "quote.pdf",
    }
    assert conv.contact(contact["id"])["lastMessage"] == "[unsupported]"


def test_a_reply_names_the_message_replied_to(conv: Conversation) -> None:
    number = new_sender_number()
    first = conv.inbound(number, "first")
    reply = text_message(number, "about that")
    reply["context"] = {"from": number, "id": first}
    conv.deliver(delivery(conv.phone_number_id, messages=[reply]))
    got = conv.messages(conv.contact_of(number)["id"])["messages"]
    assert got[1]["replyToId"] == got[0]["id"]


def test_an_inbound_message_reopens_a_solved_contact(conv: Conversation) -> None:
    number = new_sender_number()
    conv.inbound(number, "question")
    contact = conv.contact_of(number)
    conv.api.set_contact(contact["id"], isSolved=True)
    conv.inbound(number, "one more thing")
    assert conv.contact(contact["id"])["isSolved"] is False


def _sent_message(conv: Conversation) -> tuple[dict[str, Any], str]:
    number = new_sender_number()
    conv.inbound(number, "hi")
    contact = conv.contact_of(number)
    ok_data(conv.send(contact["id"], text="hello"))
    conv.send_all()
    message = conv.messages(contact["id"])["messages"][-1]
    assert message["status"] == "sent"
    return contact, message["externalId"]


def test_statuses_move_forward_only(conv: Conversation) -> None:
    contact, wa = _sent_message(conv)

    def state() -> str:
        return str(conv.messages(contact["id"])["messages"][-1]["status"])

    applied = conv.deliver(delivery(conv.phone_number_id, statuses=[status(wa, "read")]))
    assert ok_data(applied)["statuses"] == 1 and state() == "read"
    # Late and out of order: never backwards, and failed only from queued or sent.
    late = [
        status(wa, "delivered"),
        status(wa, "sent"),
        status(wa, "failed", errors=[{"code": 131026, "title": "x"}]),
    ]
    assert ok_data(conv.deliver(delivery(conv.phone_number_id, statuses=late)))["statuses"] == 0
    assert state() == "read"
    unknown = conv.deliver(
        delivery(conv.phone_number_id, statuses=[status("wamid.unknown", "read")])
    )
    assert ok_data(unknown)["statuses"] == 0


def test_a_recorded_message_takes_no_status(conv: Conversation) -> None:
    """docs/channels.md 6.1: a status of a message chatcrm did not send is not counted. A
    message recorded with a wamid (a bot's, sent elsewhere) is never sent, so never moved."""
    number = new_sender_number()
    conv.inbound(number, "hi")
    contact = conv.contact_of(number)
    recorded = ok_data(
        conv.api.post(
            f"/api/contact/{contact['id']}/messages/record",
            json={"direction": "out", "text": "bot said", "externalId": "wamid.BOT" + number},
        )
    )["message"]
    assert recorded["status"] == "sent"
    answer = conv.deliver(
        delivery(conv.phone_number_id, statuses=[status("wamid.BOT" + number, "read")])
    )
    assert ok_data(answer) == {"messages": 0, "statuses": 0}
    assert conv.messages(contact["id"])["messages"][-1]["status"] == "sent"


def test_a_failed_status_keeps_its_error(conv: Conversation) -> None:
    contact, wa = _sent_message(conv)
    errors = [{"code": 131047, "title": "Re-engagement message", "message": "More than 24 hours"}]
    conv.deliver(delivery(conv.phone_number_id, statuses=[status(wa, "failed", errors=errors)]))
    message = conv.messages(contact["id"])["messages"][-1]
    assert message["status"] == "failed"
    assert message["error"] == {"code": 131047, "title": "Re-engagement message"}
    updates = ok_data(conv.api.get("/api/events", params={"recordId": message["id"]}))["events"]
    # D.1: in record key order (status, error, …, statusAt).
    assert updates[-1]["type"] == "message.updated" and updates[-1]["changed"] == [
        "status",
        "error",
        "statusAt",
    ]


def test_a_retry_is_not_moved_by_statuses_of_the_failed_attempt(conv: Conversation) -> None:
    """Meta delivers statuses at least once and in any order: one for the failed attempt's
    wamid that arrives after the retry must not fail it again, nor mark it sent."""
    contact, wa = _sent_message(conv)
    failed = [status(wa, "failed", errors=[{"code": 131026, "title": "Undeliverable"}])]
    conv.deliver(delivery(conv.phone_number_id, statuses=failed))
    message = conv.messages(contact["id"])["messages"][-1]
    retried = ok_data(conv.api.post(f"/api/message/{message['id']}/retry"))["message"]
    assert retried["status"] == "queued" and retried["externalId"] is None
    updates = ok_data(conv.api.get("/api/events", params={"recordId": message["id"]}))["events"]
    assert updates[-1]["changed"] == ["status", "error", "externalId", "statusAt"]
    for late in (failed, [status(wa, "sent")], [status(wa, "read")]):
        answer = conv.deliver(delivery(conv.phone_number_id, statuses=late))
        assert ok_data(answer)["statuses"] == 0
    assert conv.messages(contact["id"])["messages"][-1]["status"] == "queued"
    conv.send_all()
    sent = conv.messages(contact["id"])["messages"][-1]
    assert sent["status"] == "sent" and sent["externalId"] not in (None, wa)


def test_a_hundred_messages_in_one_delivery(conv: Conversation) -> None:
    messages = [text_message(new_sender_number(), f"m{i}") for i in range(100)]
    assert (
        ok_data(conv.deliver(delivery(conv.phone_number_id, messages=messages)))["messages"] == 100
    )
