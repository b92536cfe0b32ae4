"""`verify_webhook` against the Standard Webhooks reference library and against a real
delivery of the service."""

from __future__ import annotations

import base64
import os
import time
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
import standardwebhooks

from chatcrm.provisioning import NewAccount
from chatcrm_client import WebhookVerificationError, verify_webhook
from tests.servers import Server
from tests.webhooks.receiver import Receiver

SECRET = "whsec_" + base64.b64encode(os.urandom(32)).decode()
BODY = b'{"id":"evt_1","type":"contact.created","data":{"amount":1200.5}}'


def signed(secret: str, body: bytes, *, at: float | None = None) -> dict[str, str]:
    """Headers as the reference library signs them."""
    when = datetime.fromtimestamp(at if at is not None else time.time(), UTC)
    signature = standardwebhooks.Webhook(secret).sign("evt_1", when, body.decode())
    return {
        "Webhook-Id": "evt_1",
        "Webhook-Timestamp": str(int(when.timestamp())),
        "Webhook-Signature": signature,
    }


def test_what_the_reference_library_signs_is_accepted() -> None:
    headers = signed(SECRET, BODY)
    assert verify_webhook(SECRET, headers, BODY) == {
        "id": "evt_1",
        "type": "contact.created",
        "data": {"amount": 1200.5},
    }
    assert verify_webhook(SECRET, headers, BODY.decode())["id"] == "evt_1"
    # During a rotation: two entries, the matching one second.
    other = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    rotated = {**headers}
    rotated["Webhook-Signature"] = (
        signed(other, BODY)["Webhook-Signature"] + " " + headers["Webhook-Signature"]
    )
    assert verify_webhook(SECRET, rotated, BODY)["id"] == "evt_1"


def test_money_a_float_would_change_stays_exact() -> None:
    body = b'{"id":"evt_1","type":"opportunity.created","data":{"amount":622051690711.6507}}'
    event = verify_webhook(SECRET, signed(SECRET, body), body)
    assert event["data"]["amount"] == Decimal("622051690711.6507")


@pytest.mark.parametrize(
    "change",
    [
        "body",
        "secret",
        "no-secret",
        "old",
        "future",
        "missing",
        "version",
        "non-ascii",
        "not-json",
        "a-list",
    ],
)
def test_a_bad_delivery_is_refused(change: str) -> None:
    body, secret, headers = BODY, SECRET, signed(SECRET, BODY)
    if change == "body":
        body = BODY.replace(b"1200.5", b"9200.5")
    elif change == "secret":
        secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    elif change == "no-secret":  # a setting left unset: the same exception, no AttributeError
        secret = None  # type: ignore[assignment]
    elif change == "old":
        headers = signed(SECRET, BODY, at=time.time() - 301)
    elif change == "future":
        headers = signed(SECRET, BODY, at=time.time() + 301)
    elif change == "missing":
        del headers["Webhook-Signature"]
    elif change == "non-ascii":  # one exception for a receiver to catch, never TypeError
        headers["Webhook-Signature"] = "v1,é" + headers["Webhook-Signature"][4:]
    elif change in ("not-json", "a-list"):  # signed, but no event: refused the same way
        body = b"not json" if change == "not-json" else b"[1, 2]"
        headers = signed(SECRET, body)
    else:
        headers["Webhook-Signature"] = headers["Webhook-Signature"].replace("v1,", "v2,")
    with pytest.raises(WebhookVerificationError):
        verify_webhook(secret, headers, body)


def test_what_the_library_verifies_is_what_we_verify() -> None:
    """The other direction: the reference library accepts the headers our scheme makes
    (the service's signer) and both refuse the same forgery."""
    headers = signed(SECRET, BODY)
    lowered = {k.lower(): v for k, v in headers.items()}
    standardwebhooks.Webhook(SECRET).verify(BODY, lowered)
    forged = {**lowered, "webhook-id": "evt_2"}
    with pytest.raises(standardwebhooks.WebhookVerificationError):
        standardwebhooks.Webhook(SECRET).verify(BODY, forged)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(SECRET, forged, BODY)


@pytest.mark.slow
def test_a_real_delivery_verifies(client: Any, sdk_server: Server, account: NewAccount) -> None:
    receiver = Receiver()
    try:
        webhook = client.webhooks.create(
            receiver.url("/hook"), event_types=["contact.*"], description="sdk"
        )
        assert webhook.secret.startswith("whsec_") and webhook.enabled is True
        assert [w.id for w in client.webhooks.list()] == [webhook.id]
        contact = client.contacts.create(name="Hooked", email="hooked@example.com")
        [delivery] = receiver.wait_for(1, "/hook")
        event = verify_webhook(webhook.secret, delivery.headers, delivery.body)
        assert event["type"] == "contact.created" and event["recordId"] == contact.id
        with pytest.raises(WebhookVerificationError):
            verify_webhook(webhook.secret, delivery.headers, delivery.body + b" ")

        rotated = client.webhooks.rotate_secret(webhook.id)
        assert rotated.secret != webhook.secret
        event_id = client.webhooks.test(webhook.id)
        [_, test] = receiver.wait_for(2, "/hook")
        for secret in (rotated.secret, webhook.secret):  # both sign for 24 h
            assert verify_webhook(secret, test.headers, test.body)["id"] == event_id
        updated = client.webhooks.update(webhook.id, enabled=False, description="off")
        assert (updated.enabled, updated.description) == (False, "off")
        deliveries = list(client.webhooks.deliveries(webhook.id))
        assert {d.event_id for d in deliveries} >= {event["id"], event_id}
        assert client.webhooks.replay(webhook.id, event_id=event["id"]) == 1
        client.webhooks.delete(webhook.id)
        assert client.webhooks.list() == []
    finally:
        receiver.close()
