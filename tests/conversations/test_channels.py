"""Channels (contract K.2): the record with its webhook URL, write-only secrets, one
number per channel, A.1 updates, the verification handshake, the audit entries."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from chatcrm import logs
from tests.client import Api, error, error_fields, ok_data, unique
from tests.conversations.conftest import APP_SECRET, PUBLIC_URL, Conversation
from tests.conversations.fake_graph import TOKEN

KEYS = [
    "id",
    "type",
    "name",
    "phoneNumberId",
    "displayPhoneNumber",
    "apiBaseUrl",
    "verifyToken",
    "webhookUrl",
    "enabled",
    "createdAt",
    "updatedAt",
]


def _no_secret(value: Any) -> None:
    text = str(value)
    assert TOKEN not in text and APP_SECRET not in text


def test_the_channel_record(conv: Conversation) -> None:
    channel = conv.channel
    assert list(channel) == KEYS
    assert channel["type"] == "whatsapp" and channel["enabled"] is True
    assert channel["webhookUrl"] == f"{PUBLIC_URL}/channels/whatsapp/{channel['id']}"
    assert len(channel["verifyToken"]) == 32 and channel["verifyToken"].isalnum()
    got = ok_data(conv.api.get(f"/api/channel/{channel['id']}"), "Channel obtained successfully.")
    assert got == {"id": channel["id"], "channel": channel}
    listed = ok_data(conv.api.get("/api/channel"))
    assert listed == {"data": [channel]}
    for answer in (channel, got, listed):
        _no_secret(answer)


def test_answers_showing_the_verify_token_are_kept_by_no_cache(conv: Conversation) -> None:
    path = f"/api/channel/{conv.channel['id']}"
    body = {"paramToUpdate": "name", "name": "Renamed line"}
    for answer in (conv.api.get(path), conv.api.get("/api/channel"), conv.api.put(path, json=body)):
        ok_data(answer)
        assert answer.headers.get("cache-control") == "no-store", answer.request.url


def test_defaults_and_refusals_on_create(api: Api) -> None:
    body = {
        "type": "whatsapp",
        "name": "Default line",
        "phoneNumberId": unique("9"),
        "accessToken": TOKEN,
        "appSecret": APP_SECRET,
    }
    created = ok_data(api.post("/api/channel", json=body), "Channel created successfully.")
    channel = created["channel"]
    assert channel["apiBaseUrl"] == "https://graph.facebook.com/v21.0"
    assert channel["displayPhoneNumber"] is None
    _no_secret(created)
    error(api.post("/api/channel", json=body), 409, "DUPLICATE_CHANNEL")
    refused = error(
        api.post(
            "/api/channel",
            json={"type": "telegram", "name": " ", "apiBaseUrl": "http://127.0.0.1/x"},
        ),
        422,
        "VALIDATION_ERROR",
    )
    assert set(error_fields(refused)) >= {
        "type",
        "name",
        "phoneNumberId",
        "accessToken",
        "appSecret",
        "apiBaseUrl",
    }
    error(
        api.post("/api/channel", json={**body, "phoneNumberId": unique("9"), "webhookUrl": "x"}),
        400,
        "BAD_REQUEST",
    )
    # Spaces a paste brings are dropped: Meta names the number without them, and the same
    # number with them is the same number (409).
    error(
        api.post("/api/channel", json={**body, "phoneNumberId": f" {body['phoneNumberId']}\n"}),
        409,
        "DUPLICATE_CHANNEL",
    )
    padded = ok_data(api.post("/api/channel", json={**body, "phoneNumberId": f" {unique('9')} "}))
    assert padded["channel"]["phoneNumberId"] == padded["channel"]["phoneNumberId"].strip()
    # What goes into the send's URL path, and the base that path follows, stay a path.
    for wrong in (
        {"phoneNumberId": "12/34"},
        {"phoneNumberId": "12 34"},
        {"apiBaseUrl": "https://graph.facebook.com/v21.0?x=1"},
        {"apiBaseUrl": "https://graph.facebook.com/v21.0#f"},
    ):
        refused = error(
            api.post("/api/channel", json={**body, "phoneNumberId": unique("9"), **wrong}),
            422,
            "VALIDATION_ERROR",
        )
        assert error_fields(refused) == list(wrong)


def test_a_number_belongs_to_one_workspace(conv: Conversation, other_conv: Conversation) -> None:
    body = {
        "type": "whatsapp",
        "name": "Copy",
        "phoneNumberId": conv.phone_number_id,
        "accessToken": "t",
        "appSecret": "s",
        "apiBaseUrl": conv.graph.base_url,
    }
    error(other_conv.api.post("/api/channel", json=body), 409, "DUPLICATE_CHANNEL")
    error(other_conv.api.get(f"/api/channel/{conv.channel['id']}"), 404, "CHANNEL_NOT_FOUND")
    error(other_conv.api.delete(f"/api/channel/{conv.channel['id']}"), 404, "CHANNEL_NOT_FOUND")
    assert ok_data(other_conv.api.get("/api/channel"))["data"] == [other_conv.channel]


def test_updates_and_delete(conv: Conversation) -> None:
    path = f"/api/channel/{conv.channel['id']}"
    updated = ok_data(
        conv.api.put(
            path,
            json={
                "paramToUpdate": "name,accessToken",
                "name": "Renamed",
                "accessToken": "new-token",
            },
        ),
        "Channel updated successfully.",
    )["channel"]
    assert updated["name"] == "Renamed" and updated["updatedAt"] >= conv.channel["updatedAt"]
    assert "new-token" not in str(updated)
    same = ok_data(conv.api.put(path, json={"verifyToken": "my-own-token"}))["channel"]
    assert same["verifyToken"] == "my-own-token" and same["name"] == "Renamed"
    error(conv.api.put(path, json={"phoneNumberId": "1"}), 400, "BAD_REQUEST")
    error(
        conv.api.put("/api/channel/00000000-0000-7000-8000-000000000000", json={"name": "x"}),
        404,
        "CHANNEL_NOT_FOUND",
    )
    assert ok_data(conv.api.delete(path), "Channel deleted successfully.") == {
        "id": conv.channel["id"]
    }
    error(conv.api.get(path), 404, "CHANNEL_NOT_FOUND")


def test_meta_verification(conv: Conversation) -> None:
    path = f"/channels/whatsapp/{conv.channel['id']}"
    token = conv.channel["verifyToken"]
    good = {"hub.mode": "subscribe", "hub.verify_token": token, "hub.challenge": "1158201444"}
    answer = conv.http.get(path, params=good)
    assert answer.status_code == 200 and answer.text == "1158201444"
    assert answer.headers["content-type"].startswith("text/plain")
    # The challenge is echoed whatever it holds: never sniffed as a page of this origin.
    assert answer.headers["x-content-type-options"] == "nosniff"
    for params in (
        {**good, "hub.verify_token": token + "x"},
        {**good, "hub.mode": "unsubscribe"},
        {"hub.challenge": "1"},
    ):
        assert conv.http.get(path, params=params).status_code == 403
    assert conv.http.get("/channels/whatsapp/nope", params=good).status_code == 403


def test_channels_need_workspace_manage(conv: Conversation) -> None:
    key = ok_data(
        conv.api.post(
            "/api/key", json={"name": "bot", "scopes": ["messages:read", "messages:write"]}
        )
    )
    bot = Api(conv.http, conv.api.account)
    bot.key = key["apiKey"] if "apiKey" in key else key["key"]["key"]
    refused = bot.get("/api/channel")
    assert refused.status_code == 403 and refused.json()["errorCode"] == "PERMISSION_DENIED"
    assert refused.json()["data"] == {"required": "workspace:manage"}
    ok_data(bot.get(f"/api/contact/{conv.api.create_contact(name='x')['id']}/messages"))


def test_audit_entries_never_hold_a_secret(
    conv: Conversation, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    logs.silence_libraries()  # as CHATCRM_LOG_LEVEL=debug leaves them (logs.configure)
    path = f"/api/channel/{conv.channel['id']}"
    ok_data(
        conv.api.put(path, json={"appSecret": "rotated-app-secret", "accessToken": "rotated-token"})
    )
    ok_data(conv.api.delete(path))
    entries = ok_data(conv.api.get("/api/audit", params={"pageSize": "100"}))["data"]
    actions = [e["action"] for e in entries if e.get("target") == conv.channel["id"]]
    assert actions == ["channel.deleted", "channel.updated", "channel.created"]
    text = str(entries) + caplog.text
    for secret in (TOKEN, APP_SECRET, "rotated-app-secret", "rotated-token"):
        assert secret not in text
