"""Verifying a webhook delivery (the Standard Webhooks scheme, contract D.4): the HMAC of
`"{webhook-id}.{webhook-timestamp}.{body}"` with the secret's key, in any `v1,` entry of
`webhook-signature`, and a timestamp near now (a captured delivery cannot be sent again
later). A few lines of `hmac`, checked against the `standardwebhooks` library in the tests,
rather than a second dependency."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from collections.abc import Mapping
from typing import Any

from chatcrm_client._errors import WebhookVerificationError
from chatcrm_client._wire import loads, plain

SECRET_PREFIX = "whsec_"


def verify_webhook(
    secret: str, headers: Mapping[str, str], body: bytes | str, tolerance: float = 300
) -> dict[str, Any]:
    """The event of a genuine delivery, as a dict; WebhookVerificationError otherwise.

    `headers`: the request's headers (any case); `body`: its raw body, exactly as received
    (parsed and serialised again, it no longer matches); `tolerance`: how far, in seconds,
    the delivery's timestamp may be from now."""
    if not isinstance(secret, str):  # a setting left unset: the same one exception
        raise WebhookVerificationError("the secret is not whsec_ + base64")
    lowered = {str(k).lower(): v for k, v in headers.items()}
    try:
        msg_id = lowered["webhook-id"]
        stamp = lowered["webhook-timestamp"]
        signatures = lowered["webhook-signature"]
    except KeyError as exc:
        raise WebhookVerificationError(f"the {exc.args[0]} header is missing") from None
    try:
        timestamp = int(stamp)
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not a number") from None
    if abs(time.time() - timestamp) > tolerance:
        raise WebhookVerificationError("webhook-timestamp is too far from now")
    try:
        key = base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("the secret is not whsec_ + base64") from None
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    signed = f"{msg_id}.{timestamp}.".encode() + raw
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for entry in signatures.split():
        version, _, signature = entry.partition(",")
        # compare_digest takes ASCII text only: any other signature cannot be ours.
        if version == "v1" and signature.isascii() and hmac.compare_digest(signature, expected):
            return _event(raw)
    raise WebhookVerificationError("no signature matches")


def _event(raw: bytes) -> dict[str, Any]:
    """The signed body as an event; one that is not a JSON object is refused the same way
    as a bad signature (a receiver catches one exception)."""
    try:
        # Numbers as the records' `to_dict()` gives them (_wire.plain): money a float would
        # change stays exact.
        event = plain(loads(raw))
    except ValueError:  # not JSON, or not UTF-8
        raise WebhookVerificationError("the body is not a JSON object") from None
    if not isinstance(event, dict):
        raise WebhookVerificationError("the body is not a JSON object")
    return event
