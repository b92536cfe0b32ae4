"""A contact's conversation in the console (contract K.3) in Debian's chromium, on both
backends: recorded messages shown oldest to newest, inbound and outbound told apart; an
inbound message arriving while the panel is open; older pages on scrolling up; the
"Unread" mark of a card and its end when the conversation is opened; the composer closed
outside the 24-hour window, with the API's refusal of a template without a channel; and
text sent through a channel whose Graph API is a fake on 127.0.0.1, its status following
live, a failure with its title and "Retry"; an inbound image with its media link."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from playwright.sync_api import Locator, Page, Request, Route, expect

from chatcrm.provisioning import NewAccount
from tests.browser import test_console_people as people
from tests.browser.conftest import Visit, answer_unavailable, api, create, sign_in
from tests.browser.graph_fake import PNG, Graph, fake_graph
from tests.conftest import new_account

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LIVE_MS = 2000  # the contract's bound for live updates
SENT_MS = 5000  # a send: the sender's first attempt (within 1 s), then the event (2 s)
NUMBER = "51987654321"
APP_SECRET = "app-secret-for-tests"
ACCESS_TOKEN = "EAAG-access-token-for-tests"


@pytest.fixture(scope="module")
def server(console_server: str) -> str:
    """The console's shared server, whose channels may call a Graph API on 127.0.0.1."""
    return console_server


@pytest.fixture
def graph() -> Iterator[Graph]:
    """A fake Graph API of the test's own: what it was sent is this test's alone."""
    with fake_graph() as running:
        yield running


def _contact(server: str, account: NewAccount, name: str, **fields: Any) -> str:
    """A WhatsApp contact (platformId 2) with a number to send to."""
    fields.setdefault("internalWhatsappNumber", NUMBER)
    return create(server, account, "contact", name=name, platformId=2, **fields)


def _when(delta: timedelta) -> str:
    """A timestamp `delta` before now, in the API's format."""
    return (datetime.now(UTC) - delta).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _record(server: str, account: NewAccount, contact: str, direction: str, text: str,
            ago: timedelta = timedelta(0)) -> dict[str, Any]:  # fmt: skip
    body = {"direction": direction, "text": text, "createdAt": _when(ago)}
    made: dict[str, Any] = api(
        server, account, "POST", f"/api/contact/{contact}/messages/record", json=body
    )["message"]
    return made


def _channel(server: str, account: NewAccount, graph: Graph, phone_number_id: str) -> dict:
    body = {
        "type": "whatsapp",
        "name": "Main line",
        "phoneNumberId": phone_number_id,
        "displayPhoneNumber": "+51 1 555 0000",
        "accessToken": ACCESS_TOKEN,
        "appSecret": APP_SECRET,
        "apiBaseUrl": graph.base_url,
    }
    channel: dict = api(server, account, "POST", "/api/channel", json=body)["channel"]
    return channel


def _following(request: Request) -> bool:
    """The console's long poll of the events feed (it starts once the feed's end is known)."""
    return "/api/events" in request.url and "wait=" in request.url


def _open_panel(visit: Visit, account: NewAccount, contact: str, name: str) -> Locator:
    """Follow a link to the contact's panel, signing in on the way; its conversation."""
    visit.goto(f"/console#contacts/{contact}")
    with visit.page.expect_request(_following):
        sign_in(visit, account)
    panel = visit.page.get_by_role("dialog", name=name, exact=True)
    expect(panel).to_be_visible()
    return panel.get_by_role("region", name="Conversation")


def _messages(conversation: Locator) -> Locator:
    return conversation.get_by_role("log", name="Conversation").get_by_role("listitem")


def test_recorded_messages_show_in_order_and_new_ones_live(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    ana = _contact(server, account, "Ana", lastname="Diaz")
    _record(server, account, ana, "out", "Hello Ana, your order is ready", timedelta(hours=2))
    _record(server, account, ana, "in", "Thanks! When can I pick it up?", timedelta(hours=1))

    conversation = _open_panel(visit, account, ana, "Ana Diaz")
    items = _messages(conversation)
    expect(items).to_have_text([re.compile("Hello Ana"), re.compile("When can I pick it up")])
    first, second = items.nth(0), items.nth(1)
    expect(first).to_have_accessible_name(re.compile(r"^Sent "))
    expect(first).to_have_class(re.compile(r"\bout\b"))
    expect(first.locator(".delivery")).to_have_text("Sent")  # recorded outbound: sent
    expect(first.locator("time")).to_have_count(1)
    expect(second).to_have_accessible_name(re.compile(r"^Received "))
    expect(second).to_have_class(re.compile(r"\bin\b"))
    expect(second.locator(".delivery")).to_have_count(0)  # no status for what came in
    # The last message within 24 h: the composer is open.
    expect(conversation.get_by_label("Message", exact=True)).to_be_enabled()
    expect(conversation.get_by_text("The 24-hour window is closed")).to_be_hidden()
    assert visit.settle() == []

    # Opening it marked the conversation read.
    stored = api(server, account, "GET", f"/api/contact/{ana}")["data"][0]
    assert stored["isRead"] is True

    # A message recorded elsewhere while the panel is open appears without a reload.
    _record(server, account, ana, "in", "Is the shop open on Sunday?")
    expect(items).to_have_count(3, timeout=LIVE_MS)
    expect(items.last).to_contain_text("Is the shop open on Sunday?")
    expect(items.last).to_have_accessible_name(re.compile(r"^Received "))
    # Right-to-left text runs right to left, its end punctuation where it belongs, as does
    # what is typed (each text's own direction, `dir="auto"`).
    _record(server, account, ana, "in", "هل المتجر مفتوح يوم الأحد؟")
    expect(items).to_have_count(4, timeout=LIVE_MS)
    assert items.last.locator("p.text").evaluate("p => getComputedStyle(p).direction") == "rtl"
    message = conversation.get_by_label("Message", exact=True)
    message.fill("שלום")
    assert message.evaluate("t => getComputedStyle(t).direction") == "rtl"
    message.fill("")
    assert visit.settle() == []


def test_older_pages_load_on_scrolling_up(visit: Visit, server: str, database_url: str) -> None:
    account = new_account(database_url)
    bea = _contact(server, account, "Bea")
    for i in range(40):
        direction = "in" if i % 2 else "out"
        _record(server, account, bea, direction, f"Message {i:02}", timedelta(minutes=60 - i))

    conversation = _open_panel(visit, account, bea, "Bea")
    items = _messages(conversation)
    expect(items).to_have_count(30)  # the newest page, oldest first
    expect(items.first).to_contain_text("Message 10")
    expect(items.last).to_contain_text("Message 39")
    log = conversation.get_by_role("log", name="Conversation")
    log.evaluate("list => { list.scrollTop = 0; }")  # the reader scrolls up
    expect(items).to_have_count(40)
    expect(items.first).to_contain_text("Message 00")
    expect(conversation.get_by_role("button", name="Load older messages")).to_be_hidden()
    texts = [t.strip().splitlines()[0] for t in items.all_inner_texts()]
    assert texts == [f"Message {i:02}" for i in range(40)]
    assert visit.settle() == []


def test_an_unread_mark_shows_live_and_ends_when_the_conversation_is_opened(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    cid = _contact(server, account, "Cid", isRead=True)
    visit.goto("/console")
    with visit.page.expect_request(_following):
        sign_in(visit, account)
    page = visit.page
    card = page.get_by_role("article", name="Cid")
    expect(card).to_be_visible()
    expect(card.get_by_text("Unread", exact=True)).to_have_count(0)

    _record(server, account, cid, "in", "Hi, do you deliver?")
    expect(card.get_by_text("Unread", exact=True)).to_be_visible(timeout=LIVE_MS)
    expect(card).to_contain_text("Hi, do you deliver?")

    card.click()
    panel = page.get_by_role("dialog", name="Cid", exact=True)
    expect(_messages(panel.get_by_role("region", name="Conversation"))).to_have_count(1)
    panel.get_by_role("button", name="Close").click()
    expect(card.get_by_text("Unread", exact=True)).to_have_count(0, timeout=LIVE_MS)
    assert api(server, account, "GET", f"/api/contact/{cid}")["data"][0]["isRead"] is True
    assert visit.settle() == []


def test_the_composer_is_closed_outside_the_window(
    visit: Visit, server: str, database_url: str
) -> None:
    account = new_account(database_url)
    dan = _contact(server, account, "Dan")
    _record(server, account, dan, "in", "Last week's question", timedelta(hours=25))
    _record(server, account, dan, "out", "Our answer", timedelta(hours=1))

    conversation = _open_panel(visit, account, dan, "Dan")
    expect(_messages(conversation)).to_have_count(2)
    text = conversation.get_by_label("Message", exact=True)
    expect(text).to_be_disabled()
    expect(conversation.get_by_role("button", name="Send", exact=True)).to_be_disabled()
    reason = conversation.get_by_text("The 24-hour window is closed: send a template.")
    expect(reason).to_be_visible()
    expect(text).to_have_accessible_description("The 24-hour window is closed: send a template.")

    # A template can be sent at any time; in a workspace without a channel the API says no.
    expect(conversation.get_by_role("group", name="Send a template")).to_be_visible()
    conversation.get_by_label("Template name").fill("order_update")
    conversation.get_by_label("Language").fill("es")
    conversation.get_by_label("Parameters (one per line)").fill("Dan\nORD-1")
    use = conversation.get_by_role("button", name="Use template")
    use.focus()
    visit.page.keyboard.press("Enter")
    alert = conversation.get_by_role("alert")
    expect(alert).to_contain_text("no enabled WhatsApp channel")
    expect(use).to_be_focused()  # held while sending, it gets the keyboard back
    visit.failed.clear()  # the 422 was the point

    # An inbound message now opens the window, live.
    _record(server, account, dan, "in", "Are you there?")
    expect(text).to_be_enabled(timeout=LIVE_MS)
    expect(reason).to_be_hidden()
    assert visit.settle() == []


def test_a_refused_template_parameter_is_shown_under_its_box_by_its_line(
    visit: Visit, server: str, database_url: str, graph: Graph
) -> None:
    """`template.parameters[1]` was shown at the top of the conversation by its wire name
    (the second line read as "1"), twice, and the box was not marked."""
    account = new_account(database_url)
    _channel(server, account, graph, "100200300400511")
    eli = _contact(server, account, "Eli")
    _record(server, account, eli, "in", "Old question", timedelta(hours=25))
    conversation = _open_panel(visit, account, eli, "Eli")
    conversation.get_by_label("Template name").fill("order_ready")
    box = conversation.get_by_label("Parameters (one per line)")
    box.fill("ok\n\n" + "p" * 1025)  # the refused one on line 3 (the empty line not sent)
    conversation.get_by_role("button", name="Use template").click()
    said = "line 3: must be at most 1024 characters"
    expect(box).to_have_accessible_description(re.compile(said))
    expect(box).to_have_attribute("aria-invalid", "true")
    expect(box).to_be_focused()
    alert = conversation.get_by_role("alert")
    expect(alert).to_have_text(f"Parameters (one per line), {said}.")
    expect(alert).not_to_contain_text("parameters[")
    assert graph.sent == []
    visit.failed.clear()  # the 422 was the point
    assert visit.settle() == []


def test_a_message_dated_in_the_future_arms_no_runaway_timer(
    visit: Visit, server: str, database_url: str
) -> None:
    """Dates in the future are accepted (docs/api.md 11.5). The composer's check of the
    window then asked for a timer longer than a browser holds (2^31 - 1 ms), which fires at
    once and asked again: hundreds of timers a second while the panel was open."""
    account = new_account(database_url)
    hal = _contact(server, account, "Hal")
    _record(server, account, hal, "in", "From the future", -timedelta(days=30))
    visit.page.add_init_script(
        """(() => {
            const original = window.setTimeout;
            window.__tooLong = 0;
            window.setTimeout = (callback, delay, ...rest) => {
                if (delay > 2 ** 31 - 1) window.__tooLong += 1;
                return original(callback, delay, ...rest);
            };
        })()"""
    )
    conversation = _open_panel(visit, account, hal, "Hal")
    expect(_messages(conversation)).to_have_count(1)
    expect(conversation.get_by_label("Message", exact=True)).to_be_enabled()
    visit.page.wait_for_timeout(1000)
    assert visit.page.evaluate("window.__tooLong") == 0
    assert visit.settle() == []


def test_the_window_opens_at_an_inbound_message_older_than_the_pages_shown(
    visit: Visit, server: str, database_url: str
) -> None:
    """K.3: the composer is disabled outside the window only. The contact's last inbound
    message is two hours old, behind 31 answers of a bot: the first page shows none of it,
    and the composer is open all the same. Its field's messages are the textbox's
    description beside the window's, and a text over 4,096 characters is the API's to
    refuse, not cut short by the page and sent."""
    account = new_account(database_url)
    eva = _contact(server, account, "Eva")
    _record(server, account, eva, "in", "A question", timedelta(hours=2))
    for minutes in range(100, 69, -1):
        _record(server, account, eva, "out", f"Bot {minutes}", timedelta(minutes=minutes))

    conversation = _open_panel(visit, account, eva, "Eva")
    expect(_messages(conversation)).to_have_count(30)
    text = conversation.get_by_label("Message", exact=True)
    expect(text).to_be_enabled()
    send = conversation.get_by_role("button", name="Send", exact=True)
    expect(
        conversation.get_by_text("The 24-hour window is closed: send a template.")
    ).to_be_hidden()

    send.click()  # nothing written: the API's message, as the textbox's description
    expect(text).to_have_accessible_description(re.compile("must not be empty"))
    long = "é" * 4097
    text.fill(long)
    send.click()
    expect(text).to_have_accessible_description(re.compile("4096"))
    expect(text).to_have_value(long)
    listed = api(server, account, "GET", f"/api/contact/{eva}/messages", params={"pageSize": 1})
    assert listed["messages"][0]["text"] == "Bot 70"  # nothing was sent
    visit.failed.clear()  # the two 422s were the point


def test_message_and_send_each_name_one_control_of_the_panel(
    visit: Visit, server: str, database_url: str
) -> None:
    """By label "Message" and by button "Send", not exact, as a person's test would ask:
    the composer's textbox and its button only — the list, its items, the forms and the
    template's button are named otherwise — also while the window is closed."""
    account = new_account(database_url)
    gus = _contact(server, account, "Gus")
    _record(server, account, gus, "in", "Old question", timedelta(hours=30))
    _record(server, account, gus, "out", "Old answer", timedelta(hours=29))

    conversation = _open_panel(visit, account, gus, "Gus")
    panel = visit.page.get_by_role("dialog", name="Gus", exact=True)
    items = _messages(conversation)
    expect(items).to_have_count(2)
    expect(items.first).to_have_accessible_name(re.compile(r"^Received \S"))
    expect(items.last).to_have_accessible_name(re.compile(r"^Sent \S"))
    expect(panel.get_by_label("Message")).to_have_count(1)
    expect(panel.get_by_label("Message")).to_have_js_property("tagName", "TEXTAREA")
    # Outside the window the template's form is open: still one "Send".
    expect(panel.get_by_label("Template name")).to_be_visible()
    expect(panel.get_by_role("button", name="Send")).to_have_count(1)
    expect(panel.get_by_role("button", name="Send")).to_be_disabled()
    expect(panel.get_by_role("button", name="Use template")).to_be_enabled()
    assert visit.settle() == []


def test_sending_text_through_a_channel_and_retrying_a_failure(
    visit: Visit, server: str, database_url: str, graph: Graph
) -> None:
    account = new_account(database_url)
    channel = _channel(server, account, graph, "100200300400500")
    eva = _contact(server, account, "Eva")
    _record(server, account, eva, "in", "Can you send me the price?", timedelta(minutes=5))

    conversation = _open_panel(visit, account, eva, "Eva")
    items = _messages(conversation)
    expect(items).to_have_count(1)
    text = conversation.get_by_label("Message", exact=True)
    text.fill("It is 120 soles.")
    conversation.get_by_role("button", name="Send", exact=True).click()
    expect(items).to_have_count(2)
    sent = items.last
    expect(sent).to_have_accessible_name(re.compile(r"^Sent "))
    expect(sent).to_contain_text("It is 120 soles.")
    expect(text).to_have_value("")
    # Queued at once, then sent by the channel sender: the status follows without a reload.
    expect(sent.locator(".delivery")).to_have_text("Sent", timeout=SENT_MS)
    assert "It is 120 soles." in graph.texts()
    posted = next(s for s in graph.sent if s.body.get("text", {}).get("body") == "It is 120 soles.")
    assert posted.path == f"/{channel['phoneNumberId']}/messages"
    assert posted.authorization == f"Bearer {ACCESS_TOKEN}"
    assert posted.body["to"] == NUMBER
    messages = api(server, account, "GET", f"/api/contact/{eva}/messages")["messages"]
    assert [m["status"] for m in messages] == ["received", "sent"]

    # Meta refuses the next one: failed, with its error's title and "Retry".
    graph.answer_next(
        400,
        {"error": {"code": 131026, "message": "Message undeliverable",
                   "error_user_title": "Receiver is incapable of receiving this message"}},
    )  # fmt: skip
    text.fill("Here is the catalogue.")
    text.press("Control+Enter")
    expect(items).to_have_count(3)
    failed = items.last
    expect(failed.locator(".delivery")).to_have_text(
        "Failed: Receiver is incapable of receiving this message", timeout=SENT_MS
    )
    failed.get_by_role("button", name="Retry").click()
    expect(failed.locator(".delivery")).to_have_text("Sent", timeout=SENT_MS)
    expect(items).to_have_count(3)  # the same message, sent again
    assert graph.texts().count("Here is the catalogue.") == 2
    assert visit.settle() == []


def _signed(body: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    raw = json.dumps(body).encode()
    signature = hmac.new(APP_SECRET.encode(), raw, hashlib.sha256).hexdigest()
    return raw, {"Content-Type": "application/json", "X-Hub-Signature-256": f"sha256={signature}"}


def test_a_status_dated_in_the_second_of_the_send_shows_live(
    visit: Visit, server: str, database_url: str, graph: Graph
) -> None:
    """Meta dates a status in whole seconds: a `delivered` from the second of the send is
    dated before the `sent` recorded a moment earlier, and must still show (it is newer:
    its event's recordVersion says so)."""
    account = new_account(database_url)
    phone_number_id = "100200300400502"
    channel = _channel(server, account, graph, phone_number_id)
    gus = _contact(server, account, "Gus", internalWhatsappNumber="51987650002")
    _record(server, account, gus, "in", "Hello?", timedelta(minutes=1))
    conversation = _open_panel(visit, account, gus, "Gus")
    conversation.get_by_label("Message", exact=True).fill("Hello Gus.")
    conversation.get_by_role("button", name="Send", exact=True).click()
    sent = _messages(conversation).last
    expect(sent.locator(".delivery")).to_have_text("Sent", timeout=SENT_MS)
    [message] = [
        m
        for m in api(server, account, "GET", f"/api/contact/{gus}/messages")["messages"]
        if m["direction"] == "out"
    ]
    second = int(datetime.fromisoformat(message["statusAt"]).timestamp())  # whole, earlier
    status = {
        "id": message["externalId"],
        "status": "delivered",
        "timestamp": str(second),
        "recipient_id": "51987650002",
    }
    delivery = {
        "object": "whatsapp_business_account",
        "entry": [{"id": "WABA", "changes": [{"field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "5115550000", "phone_number_id": phone_number_id},
            "statuses": [status],
        }}]}],
    }  # fmt: skip
    raw, headers = _signed(delivery)
    answer = httpx.post(f"{server}/channels/whatsapp/{channel['id']}", content=raw, headers=headers)
    assert answer.status_code == 200, answer.text
    expect(sent.locator(".delivery")).to_have_text("Delivered", timeout=LIVE_MS)
    assert visit.settle() == []


def _statuses(phone_number_id: str, wamid: str, second: int, *steps: str) -> dict[str, Any]:
    """Meta's delivery of statuses of one sent message, each dated `second` (whole)."""
    statuses = [
        {"id": wamid, "status": step, "timestamp": str(second), "recipient_id": NUMBER}
        for step in steps
    ]
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": "WABA", "changes": [{"field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "5115550000", "phone_number_id": phone_number_id},
            "statuses": statuses,
        }}]}],
    }  # fmt: skip


def test_a_late_answer_to_the_send_does_not_take_its_status_back(
    visit: Visit, server: str, database_url: str, graph: Graph
) -> None:
    """The send's answer (`queued`) reaches the page after the live events said `read`:
    Meta dates statuses in whole seconds, so the answer's time looks newer, but a status
    never moves back (docs/channels.md 7)."""
    account = new_account(database_url)
    phone_number_id = "100200300400510"
    channel = _channel(server, account, graph, phone_number_id)
    ivo = _contact(server, account, "Ivo")
    _record(server, account, ivo, "in", "Is it in stock?", timedelta(minutes=1))
    conversation = _open_panel(visit, account, ivo, "Ivo")
    path = f"/api/contact/{ivo}/messages"

    def held(route: Route) -> None:
        """The answer held until the message was sent, delivered and read, and shown so."""
        if route.request.method != "POST":
            route.continue_()
            return
        answer = route.fetch()
        queued = answer.json()["data"]["message"]
        sent: dict[str, Any] = {}
        for _ in range(100):
            [sent] = [
                m for m in api(server, account, "GET", path)["messages"] if m["id"] == queued["id"]
            ]
            if sent["externalId"]:
                break
            visit.page.wait_for_timeout(100)  # not time.sleep: the page's other requests go on
        second = int(datetime.fromisoformat(queued["createdAt"]).timestamp())
        raw, headers = _signed(
            _statuses(phone_number_id, sent["externalId"], second, "delivered", "read")
        )
        posted = httpx.post(
            f"{server}/channels/whatsapp/{channel['id']}", content=raw, headers=headers
        )
        assert posted.status_code == 200, posted.text
        # The live events show it read before the answer arrives.
        expect(_messages(conversation).last.locator(".delivery")).to_have_text(
            "Read", timeout=LIVE_MS
        )
        route.fulfill(response=answer)

    visit.page.route(re.compile(r"/api/contact/[^/?]+/messages$"), held)
    text = conversation.get_by_label("Message", exact=True)
    text.fill("Yes, two left.")
    conversation.get_by_role("button", name="Send", exact=True).click()
    expect(text).to_have_value("", timeout=SENT_MS + LIVE_MS)  # the answer came
    [message] = [
        m for m in api(server, account, "GET", path)["messages"] if m["direction"] == "out"
    ]
    assert message["status"] == "read"
    delivery = _messages(conversation).last.locator(".delivery")
    expect(delivery).to_have_text("Read")
    visit.page.wait_for_timeout(300)
    expect(delivery).to_have_text("Read")
    assert visit.settle() == []


def test_an_inbound_image_shows_with_a_link_to_its_media(
    visit: Visit, server: str, database_url: str, graph: Graph
) -> None:
    account = new_account(database_url)
    phone_number_id = "100200300400501"
    channel = _channel(server, account, graph, phone_number_id)
    fay = _contact(server, account, "Fay", internalWhatsappNumber="51987650001")
    graph.media["MEDIA-FAY-1"] = ("image/png", PNG)
    conversation = _open_panel(visit, account, fay, "Fay")
    expect(conversation.get_by_text("No messages yet.")).to_be_visible()

    # Meta delivers an image from Fay's number (signed as Meta signs it).
    _deliver_image(server, channel, "51987650001", "MEDIA-FAY-1", caption="The blue one")

    item = _messages(conversation).first
    expect(item).to_contain_text("The blue one", timeout=LIVE_MS)
    expect(item).to_have_accessible_name(re.compile(r"^Received "))
    expect(item.locator(".kind")).to_have_text("Image")
    link = item.get_by_role("link", name="Open image")
    expect(link).to_have_attribute("href", re.compile(r"/api/message/[^/]+/media\?workspaceId="))
    page: Page = visit.page
    # A picture the server shows inline opens in a new tab, as a picture.
    with (
        page.expect_response(lambda r: "/media" in r.url) as media,
        page.context.expect_page() as opened,
    ):
        link.click()
    assert media.value.status == 200
    assert media.value.headers["content-type"].startswith("image/png")
    tab = opened.value
    assert tab.url.startswith("blob:")
    assert tab.evaluate("document.contentType") == "image/png"
    tab.close()
    message_id = item.get_attribute("data-id")
    headers = {"Authorization": f"Bearer {account.api_key}", "x-workspace-id": account.workspace_id}
    fetched = httpx.get(f"{server}/api/message/{message_id}/media", headers=headers)
    assert fetched.content == PNG
    assert visit.settle() == []


def _deliver_image(
    server: str, channel: dict, number: str, media_id: str, caption: str | None = None
) -> None:
    """Meta delivers an image (its id `media_id` at the Graph API) from `number` to the
    channel, signed as Meta signs it."""
    image = {"id": media_id, "mime_type": "image/png"}
    if caption is not None:
        image["caption"] = caption
    delivery = {
        "object": "whatsapp_business_account",
        "entry": [{"id": "WABA", "changes": [{"field": "messages", "value": {
            "messaging_product": "whatsapp",
            "metadata": {"display_phone_number": "5115550000",
                         "phone_number_id": channel["phoneNumberId"]},
            "contacts": [{"profile": {"name": "Customer"}, "wa_id": number}],
            "messages": [{
                "from": number, "id": f"wamid.IN-{media_id}",
                "timestamp": str(int(datetime.now(UTC).timestamp())), "type": "image",
                "image": image,
            }],
        }}]}],
    }  # fmt: skip
    raw, headers = _signed(delivery)
    answer = httpx.post(f"{server}/channels/whatsapp/{channel['id']}", content=raw, headers=headers)
    assert answer.status_code == 200, answer.text


# A customer's web page sent as an "image": opened as a page of the console's origin, it
# would send the reader's tab elsewhere (or run, were the policy to allow it).
PAGE = b"""<!doctype html><html><head>
<meta http-equiv="refresh" content="0;url=http://phish.example/sign-in">
</head><body><h1>Sign in again</h1></body></html>"""


def _download_not_page(visit: Visit, link: Locator, name: str) -> None:
    """`link` downloads bytes named `name`, opening no tab and leaving the console where
    it is."""
    page: Page = visit.page
    console = page.url
    tabs: list[Page] = []
    page.context.on("page", lambda tab: tabs.append(tab))
    with page.expect_download() as downloaded:
        link.click()
    download = downloaded.value
    assert download.suggested_filename == name
    assert download.path().read_bytes() == PAGE
    page.wait_for_timeout(500)  # a tab, or the refresh, would have come by now
    assert tabs == []
    assert page.url == console


def _received_image(
    visit: Visit, server: str, database_url: str, graph: Graph, n: str, media: tuple[str, bytes]
) -> tuple[Locator, Locator]:
    """A new account's contact whose channel delivers an image (the Graph API giving
    `media`), its conversation open: the message and its "Open image" link."""
    account = new_account(database_url)
    channel = _channel(server, account, graph, f"10020030040050{n}")
    contact = _contact(server, account, "Gil", internalWhatsappNumber=f"5198765000{n}")
    graph.media[f"MEDIA-{n}"] = media
    conversation = _open_panel(visit, account, contact, "Gil")
    _deliver_image(server, channel, f"5198765000{n}", f"MEDIA-{n}")
    item = _messages(conversation).first
    link = item.get_by_role("link", name="Open image")
    expect(link).to_be_visible(timeout=LIVE_MS)
    return item, link


def test_an_image_whose_bytes_are_a_page_is_downloaded_not_opened(
    visit: Visit, server: str, database_url: str, graph: Graph
) -> None:
    """The channel gives text/html for an "image": the server answers it as an attachment
    (sandboxed), and the console downloads it, named after its kind and message (it has
    no file name), where it opened it as a blob page of its own origin."""
    item, link = _received_image(visit, server, database_url, graph, "3", ("text/html", PAGE))
    _download_not_page(visit, link, f"image-{item.get_attribute('data-id')}")
    assert visit.settle() == []


def test_only_a_picture_sound_or_video_type_is_opened_whatever_the_answer_says(
    visit: Visit, server: str, database_url: str, graph: Graph
) -> None:
    """The console checks the type itself: an answer that said `inline` for HTML bytes
    (which the server never says) is downloaded too, so a blob of the console's origin is
    never a page."""
    item, link = _received_image(visit, server, database_url, graph, "4", ("image/png", PNG))
    headers = {"Content-Type": "text/html", "Content-Disposition": "inline"}
    visit.page.route("**/media", lambda route: route.fulfill(body=PAGE, headers=headers))
    _download_not_page(visit, link, f"image-{item.get_attribute('data-id')}")
    assert visit.settle() == []


def test_a_conversation_whose_first_page_failed_is_read_again(
    visit: Visit, server: str, database_url: str
) -> None:
    """Its first page answered 503: the composer said the window was closed, and the
    history stayed hidden (no "Load older messages") for as long as the panel was open."""
    account = new_account(database_url)
    eve = _contact(server, account, "Eve")
    _record(server, account, eve, "in", "Do you ship to Cusco?", timedelta(minutes=5))
    refused: list[str] = []

    def once_unavailable(route: Any) -> None:
        if refused or "before=" in route.request.url:
            route.continue_()
            return
        refused.append(route.request.url)
        answer_unavailable(route)

    visit.page.route(re.compile(rf"/api/contact/{eve}/messages\?"), once_unavailable)
    conversation = _open_panel(visit, account, eve, "Eve")
    expect(_messages(conversation)).to_have_text([re.compile("Do you ship to Cusco")], timeout=5000)
    expect(conversation.get_by_label("Message", exact=True)).to_be_enabled()
    expect(conversation.get_by_role("alert")).to_have_count(0)
    visit.failed.clear()  # the 503 was the point
    assert refused and visit.settle() == []


def test_messages_recorded_microseconds_apart_show_in_the_api_s_order(
    visit: Visit, server: str, database_url: str
) -> None:
    """Several messages of one delivery are recorded 1 µs apart: the conversation ordered by
    milliseconds, then by id (random within a millisecond), and showed them out of order."""
    account = new_account(database_url)
    ida = _contact(server, account, "Ida")
    second = (datetime.now(UTC) - timedelta(hours=1)).replace(microsecond=0)
    at = [(second + timedelta(microseconds=300 + n)).isoformat() for n in range(4)]
    # Recorded newest first: their ids grow the other way round.
    for when, text in ((at[3], "Fourth"), (at[2], "Third"), (at[1], "Second")):
        body = {"direction": "in", "text": text, "createdAt": when}
        api(server, account, "POST", f"/api/contact/{ida}/messages/record", json=body)
    page = api(server, account, "GET", f"/api/contact/{ida}/messages")
    assert [m["text"] for m in page["messages"]] == ["Second", "Third", "Fourth"]
    assert page["messages"][0]["createdAt"].endswith(".000301Z")

    conversation = _open_panel(visit, account, ida, "Ida")
    items = _messages(conversation)
    expect(items).to_have_text([re.compile(t) for t in ("Second", "Third", "Fourth")])
    # One heard while the panel is open goes in its place, not last.
    body = {"direction": "in", "text": "First", "createdAt": at[0]}
    api(server, account, "POST", f"/api/contact/{ida}/messages/record", json=body)
    expect(items).to_have_text(
        [re.compile(t) for t in ("First", "Second", "Third", "Fourth")], timeout=LIVE_MS
    )
    assert visit.settle() == []


def test_media_opens_after_the_same_person_signed_in_again_elsewhere(
    visit: Visit, server: str, database_url: str, graph: Graph
) -> None:
    """A person's reads carry their session's token; after a sign-in of the same person
    in another tab the media's read was refused with the raw CSRF message. It now takes
    the new session's token and opens."""
    account = new_account(database_url)
    channel = _channel(server, account, graph, "100200300400509")
    contact = _contact(server, account, "Hal", internalWhatsappNumber="51987650009")
    graph.media["MEDIA-9"] = ("image/png", PNG)
    owner = people._invite(server, account, "owner")
    people._set_password(visit, owner)
    page: Page = visit.page
    expect(page.get_by_role("heading", name="Contacts", exact=True)).to_be_visible()
    page.goto(f"{server}/console#contacts/{contact}")
    conversation = page.get_by_role("dialog", name="Hal", exact=True).get_by_role(
        "region", name="Conversation"
    )
    _deliver_image(server, channel, "51987650009", "MEDIA-9")
    link = _messages(conversation).first.get_by_role("link", name="Open image")
    expect(link).to_be_visible(timeout=LIVE_MS)
    again = {"email": owner["user"]["email"], "password": people.PASSWORD}
    assert page.context.request.post(f"{server}/api/session", data=again).ok
    with page.context.expect_page() as opened:
        link.click()
    assert opened.value.url.startswith("blob:")
    opened.value.close()
    expect(conversation.get_by_role("alert")).to_have_count(0)
    assert visit.settle(expected=("403 ",)) == []
