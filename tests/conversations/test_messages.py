"""Messages (contract K.1): the record, recording, the conversation's pages, marking
read, retry's refusals, media, and each message's effect on its contact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.client import error, error_fields, ok_data, unique_phone
from tests.conversations.conftest import Conversation, new_sender_number
from tests.conversations.meta import delivery, wamid

KEYS = [
    "id",
    "workspaceId",
    "contactId",
    "direction",
    "channel",
    "type",
    "text",
    "media",
    "location",
    "status",
    "error",
    "externalId",
    "replyToId",
    "sentBy",
    "createdAt",
    "statusAt",
]


def _record(conv: Conversation, contact_id: str, **body: Any) -> dict[str, Any]:
    data: dict[str, Any] = ok_data(
        conv.api.post(f"/api/contact/{contact_id}/messages/record", json=body),
        "Message recorded successfully.",
    )
    assert list(data) == ["id", "message"] and data["id"] == data["message"]["id"]
    return data["message"]


def _events(conv: Conversation, record_id: str) -> list[dict[str, Any]]:
    page = ok_data(conv.api.get("/api/events", params={"recordId": record_id, "pageSize": "100"}))
    found: list[dict[str, Any]] = page["events"]
    return found


def test_a_recorded_message_is_the_record_of_the_contract(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Rec", internalWhatsappNumber=unique_phone())
    inbound = _record(conv, contact["id"], direction="in", text="Hello", externalId="bot-1")
    assert list(inbound) == KEYS
    assert inbound["direction"] == "in" and inbound["status"] == "received"
    assert inbound["channel"] == 2 and inbound["type"] == "text" and inbound["text"] == "Hello"
    assert inbound["sentBy"] is None and inbound["externalId"] == "bot-1"
    assert inbound["workspaceId"] == conv.api.ws and inbound["contactId"] == contact["id"]
    outbound = _record(conv, contact["id"], direction="out", text="Hi!")
    assert outbound["status"] == "sent" and outbound["sentBy"]["type"] == "key"
    assert outbound["error"] is None and outbound["media"] is None


def test_recording_the_same_external_id_twice_answers_the_first(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Twice")
    first = _record(conv, contact["id"], direction="in", text="a", externalId="ext-9")
    again = _record(conv, contact["id"], direction="in", text="other", externalId="ext-9")
    assert again == first
    assert len(conv.messages(contact["id"])["messages"]) == 1
    other = conv.api.create_contact(name="Other")
    body = {"direction": "in", "text": "x", "externalId": "ext-9"}
    refused = error(
        conv.api.post(f"/api/contact/{other['id']}/messages/record", json=body),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(refused) == ["externalId"]


def test_an_inbound_message_changes_the_contact_in_its_transaction(conv: Conversation) -> None:
    agent = conv.api.add_agent()
    contact = conv.api.create_contact(name="Solved one", assignedAgentId=agent["id"])
    conv.api.set_contact(contact["id"], isSolved=True, isRead=True)
    at = datetime.now(UTC) - timedelta(minutes=5)
    message = _record(
        conv, contact["id"], direction="in", text="Again me", createdAt=at.isoformat()
    )
    after = conv.contact(contact["id"])
    assert after["lastMessage"] == "Again me"
    assert after["lastMessageDate"] == message["createdAt"]
    assert after["isRead"] is False and after["isSolved"] is False
    full = ok_data(conv.api.get("/api/contact", params={"shape": "full", "pageSize": "100"}))[
        "data"
    ]
    stored = next(c for c in full if c["id"] == contact["id"])
    assert stored["solvedDate"] is None and stored["solvedByAgentId"] is None
    created = _events(conv, message["id"])
    assert [e["type"] for e in created] == ["message.created"]
    assert created[0]["recordVersion"] == 1 and created[0]["data"] == message
    updates = [e for e in _events(conv, contact["id"]) if e["type"] == "contact.updated"]
    assert {"lastMessage", "lastMessageDate", "isRead", "isSolved"} <= set(updates[-1]["changed"])


def test_an_outbound_message_sets_the_last_message_only(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Out")
    conv.api.set_contact(contact["id"], isRead=True)
    _record(conv, contact["id"], direction="out", text="Our offer")
    after = conv.contact(contact["id"])
    assert after["lastMessage"] == "Our offer" and after["isRead"] is True


def test_a_long_text_shows_its_first_10000_characters_on_the_contact(
    conv: Conversation,
) -> None:
    # A message may hold 65,536 characters, `lastMessage` only 10,000: the contact must
    # stay one its clients (and an import of its export) accept.
    contact = conv.api.create_contact(name="Long talker")
    text = "".join(chr(0x61 + i % 26) for i in range(20_000))
    _record(conv, contact["id"], direction="in", text=text)
    shown = conv.contact(contact["id"])["lastMessage"]
    assert shown == text[:10_000]
    assert conv.api.set_contact(contact["id"], lastMessage=shown)["lastMessage"] == shown
    sender = new_sender_number()
    conv.inbound(sender, "é" * 12_000)
    assert conv.contact_of(sender)["lastMessage"] == "é" * 10_000


def test_the_conversation_pages_newest_first_each_page_oldest_first(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Pages")
    start = datetime.now(UTC) - timedelta(hours=1)
    ids = [
        _record(
            conv,
            contact["id"],
            direction="in" if i % 2 else "out",
            text=f"m{i}",
            createdAt=(start + timedelta(minutes=i)).isoformat(),
        )["id"]
        for i in range(5)
    ]
    first = conv.messages(contact["id"], pageSize="2")
    assert list(first) == ["contactId", "messages", "before"]
    assert [m["id"] for m in first["messages"]] == ids[3:5]
    second = conv.messages(contact["id"], pageSize="2", before=first["before"])
    assert [m["id"] for m in second["messages"]] == ids[1:3]
    last = conv.messages(contact["id"], pageSize="2", before=second["before"])
    assert [m["id"] for m in last["messages"]] == ids[0:1] and last["before"] is None
    whole = conv.messages(contact["id"])
    assert [m["id"] for m in whole["messages"]] == ids and whole["before"] is None


def test_paging_refusals(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Refusals")
    other = conv.api.create_contact(name="Other")
    theirs = _record(conv, other["id"], direction="in", text="x")
    path = f"/api/contact/{contact['id']}/messages"
    for size in ("0", "101", "x", "²", "５"):  # digits to str.isdigit, not to int()
        assert error_fields(
            error(conv.api.get(path, params={"pageSize": size}), 422, "VALIDATION_ERROR")
        ) == ["pageSize"]
    for before in (theirs["id"], "nope"):
        assert error_fields(
            error(conv.api.get(path, params={"before": before}), 422, "VALIDATION_ERROR")
        ) == ["before"]
    error(conv.api.get(path, params={"sort": "x"}), 400, "BAD_REQUEST")
    error(
        conv.api.get("/api/contact/00000000-0000-7000-8000-000000000000/messages"),
        404,
        "CONTACT_NOT_FOUND",
    )


def test_another_workspace_sees_nothing(conv: Conversation, other_conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Mine")
    message = _record(conv, contact["id"], direction="in", text="private")
    error(other_conv.api.get(f"/api/contact/{contact['id']}/messages"), 404, "CONTACT_NOT_FOUND")
    error(other_conv.api.post(f"/api/message/{message['id']}/retry"), 404, "MESSAGE_NOT_FOUND")
    error(other_conv.api.get(f"/api/message/{message['id']}/media"), 404, "MESSAGE_NOT_FOUND")
    body = {"direction": "in", "text": "intruder"}
    error(
        other_conv.api.post(f"/api/contact/{contact['id']}/messages/record", json=body),
        404,
        "CONTACT_NOT_FOUND",
    )
    error(
        other_conv.api.post(f"/api/contact/{contact['id']}/messages/read"), 404, "CONTACT_NOT_FOUND"
    )
    assert [m["text"] for m in conv.messages(contact["id"])["messages"]] == ["private"]


def test_record_bodies_are_checked(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Bodies")
    path = f"/api/contact/{contact['id']}/messages/record"
    body = error(
        conv.api.post(path, json={"direction": "sideways", "text": "", "createdAt": "yesterday"}),
        422,
        "VALIDATION_ERROR",
    )
    assert error_fields(body) == ["direction", "text", "createdAt"]
    # Missing (or null) on this create: "is required", as on every other (6.2).
    for empty in ({}, {"direction": None, "text": None}):
        missing = error(conv.api.post(path, json=empty), 422, "VALIDATION_ERROR")
        assert [(e["field"], e["message"]) for e in missing["data"]["errors"]] == [
            ("direction", "is required"),
            ("text", "is required"),
        ]
    error(
        conv.api.post(path, json={"direction": "in", "text": "x", "status": "read"}),
        400,
        "BAD_REQUEST",
    )


def test_retry_refuses_what_has_not_failed(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Retry")
    message = _record(conv, contact["id"], direction="out", text="done")
    error(conv.api.post(f"/api/message/{message['id']}/retry"), 409, "MESSAGE_NOT_FAILED")
    error(
        conv.api.post("/api/message/00000000-0000-7000-8000-000000000000/retry"),
        404,
        "MESSAGE_NOT_FOUND",
    )
    assert conv.messages(contact["id"])["messages"][0]["status"] == "sent"


def test_reading_the_conversation_sends_a_read_receipt(conv: Conversation) -> None:
    number = new_sender_number()
    first = conv.inbound(number, "one")
    last = conv.inbound(number, "two")
    contact = conv.contact_of(number)
    assert contact["isRead"] is False and first != last
    data = ok_data(conv.api.post(f"/api/contact/{contact['id']}/messages/read"))
    assert data == {"contactId": contact["id"], "isRead": True}
    assert conv.contact(contact["id"])["isRead"] is True
    conv.send_all()
    receipts = conv.graph.receipts()
    assert [r.body for r in receipts] == [
        {"messaging_product": "whatsapp", "status": "read", "message_id": last}
    ]
    conv.send_all()  # one attempt, best effort: never sent again
    assert len(conv.graph.receipts()) == 1


def test_media_is_fetched_through_the_channel(conv: Conversation) -> None:
    conv.graph.media["media-77"] = ("image/jpeg", b"\xff\xd8jpeg-bytes")
    number = new_sender_number()
    message = {
        "from": number,
        "id": wamid(),
        "timestamp": "1760000000",
        "type": "image",
        "image": {"id": "media-77", "mime_type": "image/jpeg", "caption": "the product"},
    }
    assert conv.deliver(delivery(conv.phone_number_id, messages=[message])).status_code == 200
    contact = conv.contact_of(number)
    stored = conv.messages(contact["id"])["messages"][0]
    assert stored["type"] == "image" and stored["text"] == "the product"
    assert stored["media"] == {
        "id": "media-77",
        "mimeType": "image/jpeg",
        "caption": "the product",
        "fileName": None,
    }
    got = conv.api.get(f"/api/message/{stored['id']}/media")
    assert got.status_code == 200 and got.content == b"\xff\xd8jpeg-bytes"
    assert got.headers["content-type"] == "image/jpeg"
    assert got.headers["content-disposition"] == "inline"
    text = _record(conv, contact["id"], direction="in", text="no media")
    error(conv.api.get(f"/api/message/{text['id']}/media"), 404, "NOT_FOUND")


def test_a_sender_s_page_is_a_download_that_runs_nothing(conv: Conversation) -> None:
    """A document a customer sends is served from the service's own origin: shown as a
    page there, its script would run with the reader's session (cookie, CSRF token)."""
    page = b"<script>fetch('/api/session')</script>"
    number = new_sender_number()
    for media_id, kind, name in (
        ("page-1", "text/html", "offer page.html"),
        ("svg-1", "image/svg+xml", None),
    ):
        conv.graph.media[media_id] = (kind, page)
        message = {
            "from": number,
            "id": wamid(),
            "timestamp": "1760000000",
            "type": "document",
            "document": {"id": media_id, "mime_type": kind, **({"filename": name} if name else {})},
        }
        assert conv.deliver(delivery(conv.phone_number_id, messages=[message])).status_code == 200
    stored = conv.messages(conv.contact_of(number)["id"])["messages"]
    by_media = {m["media"]["id"]: m for m in stored}
    html = conv.api.get(f"/api/message/{by_media['page-1']['id']}/media")
    assert html.status_code == 200 and html.content == page
    assert html.headers["content-disposition"] == "attachment; filename*=UTF-8''offer%20page.html"
    svg = conv.api.get(f"/api/message/{by_media['svg-1']['id']}/media")
    assert svg.headers["content-disposition"] == "attachment"
    for answer in (html, svg):
        assert answer.headers["x-content-type-options"] == "nosniff"
        policy = answer.headers["content-security-policy"]
        assert "sandbox" in policy and "default-src 'none'" in policy


def test_a_merge_joins_the_conversations(conv: Conversation) -> None:
    primary = conv.api.create_contact(name="Primary")
    duplicate = conv.api.create_contact(name="Duplicate")
    start = datetime.now(UTC) - timedelta(hours=1)
    ids = [
        _record(
            conv,
            contact["id"],
            direction="in",
            text=text,
            createdAt=(start + timedelta(minutes=i)).isoformat(),
        )["id"]
        for i, (contact, text) in enumerate([(primary, "p1"), (duplicate, "d1"), (primary, "p2")])
    ]
    body = {"primaryId": primary["id"], "duplicateIds": [duplicate["id"]]}
    ok_data(conv.api.post("/api/contact/merge", json=body))
    assert [m["id"] for m in conv.messages(primary["id"])["messages"]] == ids


def test_an_older_message_does_not_move_the_last_message_back(conv: Conversation) -> None:
    contact = conv.api.create_contact(name="Late")
    _record(conv, contact["id"], direction="in", text="newest")
    old = (datetime.now(UTC) - timedelta(days=2)).isoformat()
    _record(conv, contact["id"], direction="out", text="from the archive", createdAt=old)
    assert conv.contact(contact["id"])["lastMessage"] == "newest"
    # An inbound message to a contact already unread leaves isRead out of `changed`.
    _record(conv, contact["id"], direction="in", text="again")
    updates = [e for e in _events(conv, contact["id"]) if e["type"] == "contact.updated"]
    assert "isRead" not in updates[-1]["changed"] and "lastMessage" in updates[-1]["changed"]


def test_media_gone_at_the_channel_is_a_404_and_a_failing_channel_a_503(
    conv: Conversation,
) -> None:
    number = new_sender_number()
    messages = [
        {
            "from": number,
            "id": wamid(),
            "timestamp": "1760000000",
            "type": "audio",
            "audio": {"id": media_id, "mime_type": "audio/ogg"},
        }
        for media_id in ("media-gone", "media-broken")
    ]
    conv.graph.media_status["media-broken"] = 500
    conv.deliver(delivery(conv.phone_number_id, messages=messages))
    stored = conv.messages(conv.contact_of(number)["id"])["messages"]
    assert conv.contact(stored[0]["contactId"])["lastMessage"] == "[audio]"
    gone, broken = stored
    answer = conv.api.get(f"/api/message/{gone['id']}/media")
    message = error(answer, 404, "NOT_FOUND")["message"]
    assert "no media any more at the channel (the channel answered HTTP 404" in message
    error(conv.api.get(f"/api/message/{broken['id']}/media"), 503, "SERVICE_UNAVAILABLE")


def test_media_sent_compressed_is_given_as_its_bytes_and_a_bad_url_is_a_503(
    conv: Conversation,
) -> None:
    """A file the channel sends with Content-Encoding: gzip was passed on still compressed,
    without that header (a corrupted file); a `url` the lookup answers that is no URL
    was a 500."""
    text = b"hello world " * 100
    conv.graph.media["doc-gz"] = ("text/plain", text)
    conv.graph.media_gzip.add("doc-gz")
    conv.graph.media["doc-bad"] = ("text/plain", text)
    conv.graph.media_url["doc-bad"] = "http://[::1"
    number = new_sender_number()
    messages = [
        {
            "from": number,
            "id": wamid(),
            "timestamp": "1760000000",
            "type": "document",
            "document": {"id": media_id, "mime_type": "text/plain", "filename": "a.txt"},
        }
        for media_id in ("doc-gz", "doc-bad")
    ]
    conv.deliver(delivery(conv.phone_number_id, messages=messages))
    compressed, bad = conv.messages(conv.contact_of(number)["id"])["messages"]
    got = conv.api.get(f"/api/message/{compressed['id']}/media")
    assert got.status_code == 200 and got.content == text
    assert "content-encoding" not in got.headers
    assert got.headers["content-type"] == "text/plain"  # the channel's, no charset added
    error(conv.api.get(f"/api/message/{bad['id']}/media"), 503, "SERVICE_UNAVAILABLE")


def test_messages_recorded_at_once_for_one_contact_all_land(conv: Conversation) -> None:
    """Each takes the contact's row lock before its insert takes the foreign key's share
    lock: two of them waiting on each other's share lock would deadlock (PostgreSQL)."""
    import threading

    contact = conv.api.create_contact(name="Busy")
    answers: list[int] = []

    def record(i: int) -> None:
        body = {"direction": "in" if i % 2 else "out", "text": f"m{i}"}
        path = f"/api/contact/{contact['id']}/messages/record"
        answers.append(conv.api.post(path, json=body).status_code)

    threads = [threading.Thread(target=record, args=(i,)) for i in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert answers == [200] * 12
    assert len(conv.messages(contact["id"])["messages"]) == 12
