"""Deliveries built as Meta builds them (../notes/whatsapp-cloud-api.md), signed with the
app secret as Meta signs them: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw
body>`."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
from typing import Any

_ids = itertools.count(1)


def wamid() -> str:
    return f"wamid.HBgL{time.time_ns()}{next(_ids)}"


def text_message(
    sender: str, text: str, *, id: str | None = None, ts: int | None = None
) -> dict[str, Any]:
    return {
        "from": sender,
        "id": id or wamid(),
        "timestamp": str(ts or int(time.time())),
        "type": "text",
        "text": {"body": text},
    }


def delivery(
    phone_number_id: str,
    *,
    messages: list[dict[str, Any]] | None = None,
    statuses: list[dict[str, Any]] | None = None,
    names: dict[str, str] | None = None,
) -> dict[str, Any]:
    value: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "15550783881", "phone_number_id": phone_number_id},
    }
    if names:
        value["contacts"] = [{"profile": {"name": n}, "wa_id": w} for w, n in names.items()]
    if messages is not None:
        value["messages"] = messages
    if statuses is not None:
        value["statuses"] = statuses
    change = {"field": "messages", "value": value}
    return {"object": "whatsapp_business_account", "entry": [{"id": "WABA1", "changes": [change]}]}


def status(
    wamid: str, state: str, *, ts: int | None = None, errors: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": wamid,
        "status": state,
        "timestamp": str(ts or int(time.time())),
        "recipient_id": "16505551234",
    }
    if errors:
        out["errors"] = errors
    return out


def sign(body: bytes, secret: str) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def encoded(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()
