"""Signatures as the `standardwebhooks` package (the scheme's reference library) checks
them, also both entries of a rotation."""

from __future__ import annotations

import base64
import time
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from standardwebhooks import Webhook, WebhookVerificationError

from chatcrm.webhooks.signing import secret_key, sign, signature_header, signing_secrets

SECRETS = st.binary(min_size=24, max_size=64).map(
    lambda key: "whsec_" + base64.b64encode(key).decode()
)
IDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_", min_size=5, max_size=40)
BODIES = st.text(max_size=2000).map(lambda s: s.encode("utf-8"))


def _headers(msg_id: str, timestamp: int, signature: str) -> dict[str, str]:
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature,
    }


@given(secret=SECRETS, msg_id=IDS, body=BODIES)
def test_the_reference_library_accepts_our_signature(secret: str, msg_id: str, body: bytes) -> None:
    now = int(time.time())
    header = signature_header([secret], msg_id=msg_id, timestamp=now, body=body)
    Webhook(secret).verify(body, _headers(msg_id, now, header), json_parse=False)
    # …and it is the very signature the library computes.
    expected = Webhook(secret).sign(msg_id, datetime.fromtimestamp(now, UTC), body.decode())
    assert header == expected


@given(new=SECRETS, old=SECRETS, msg_id=IDS, body=BODIES)
def test_during_a_rotation_each_secret_verifies_the_delivery(
    new: str, old: str, msg_id: str, body: bytes
) -> None:
    now = int(time.time())
    header = signature_header([new, old], msg_id=msg_id, timestamp=now, body=body)
    first, second = header.split(" ")
    assert first == sign(new, msg_id=msg_id, timestamp=now, body=body)
    assert second == sign(old, msg_id=msg_id, timestamp=now, body=body)
    for secret in (new, old):
        Webhook(secret).verify(body, _headers(msg_id, now, header), json_parse=False)


def test_a_changed_body_id_or_timestamp_fails_verification() -> None:
    secret = "whsec_" + base64.b64encode(b"k" * 32).decode()
    now = int(time.time())
    header = signature_header([secret], msg_id="evt_1", timestamp=now, body=b'{"a":1}')
    for body, msg_id, ts in ((b'{"a":2}', "evt_1", now), (b'{"a":1}', "evt_2", now),
                             (b'{"a":1}', "evt_1", now - 1)):  # fmt: skip
        with pytest.raises(WebhookVerificationError):
            Webhook(secret).verify(body, _headers(msg_id, ts, header), json_parse=False)


def test_the_key_is_the_decoded_part_after_the_prefix() -> None:
    assert secret_key("whsec_" + base64.b64encode(b"\x00\xff" * 16).decode()) == b"\x00\xff" * 16
    with pytest.raises(ValueError):
        secret_key("whsec_not base64!")


def test_the_previous_secret_signs_only_until_it_expires() -> None:
    now = datetime.now(UTC)
    assert signing_secrets("new", "old", now + timedelta(seconds=1), now) == ["new", "old"]
    assert signing_secrets("new", "old", now, now) == ["new"]
    assert signing_secrets("new", "old", None, now) == ["new"]
    assert signing_secrets("new", None, now + timedelta(hours=1), now) == ["new"]
