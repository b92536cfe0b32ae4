"""What a webhook body may hold (contract D.4, section 5): 400 for its structure, one 422
naming every bad value — a URL that is not http(s), too long, or whose host is or resolves to
a refused address; an unknown event type, named; a description over 200 characters — and
at most 20 endpoints per workspace. CHATCRM_WEBHOOK_ALLOW_PRIVATE=1 lets private receivers
in."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from tests.client import Api, error, error_fields, ok_data
from tests.webhooks import hooks

VALIDATION = "VALIDATION_ERROR"


def refused(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    answer = error(api.post("/api/webhook", json=body), 422, VALIDATION)
    return answer


def messages(answer: dict[str, Any]) -> dict[str, str]:
    return {e["field"]: e["message"] for e in answer["data"]["errors"]}


def test_url_is_required(api: Api) -> None:
    for body in ({}, {"url": None}, {"description": "x"}):
        answer = refused(api, body)
        assert messages(answer) == {"url": "is required"}


@pytest.mark.parametrize(
    ("url", "words"),
    [
        (5, "must be a string"),
        (["https://receiver.example/"], "must be a string"),
        ("", "must be a URL of visible ASCII"),
        ("receiver.example/hooks", "must be an http or https URL"),
        ("ftp://receiver.example/hooks", "must be an http or https URL"),
        ("file:///etc/passwd", "must be an http or https URL"),
        ("javascript:alert(1)", "must be an http or https URL"),
        ("http://", "must name a host"),
        ("https:///hooks", "must name a host"),
        ("http://:8080/hooks", "must name a host"),
        ("http://receiver .example/", "must be a URL of visible ASCII"),
        ("http://receiver.example/\tx", "must be a URL of visible ASCII"),
        ("https://münchen.example/", "must be a URL of visible ASCII"),
        ("http://receiver.example\\@127.0.0.1/", "without spaces or backslashes"),
        ("http://a@b@receiver.example/", "user name or password"),
        # A password would be shown wherever the webhook is read, and logged.
        ("http://user:secret@receiver.example/", "user name or password"),
        ("https://token@receiver.example/hooks", "user name or password"),
        ("https://:secret@receiver.example/", "user name or password"),
        ("https://user:secret@10.0.0.1/", "user name or password"),
        ("https://receiver.example@127.0.0.1/", "user name or password"),
        ("http://%31%32%37.0.0.1/", "must name a valid host"),
        ("http://receiver.example:0/", "port from 1 to 65535"),
        ("http://receiver.example:99999/", "must be a valid http or https URL"),
        ("http://receiver.example:port/", "must be a valid http or https URL"),
        ("http://[zz::1]/", "valid"),
        ("http://receiver..example/", "must name a valid host"),
        ("http://.receiver.example/", "must name a valid host"),
        ("http://" + "a" * 64 + ".example/", "must name a valid host"),
        ("http://" + "a." * 127 + "example/", "must name a valid host"),
        ("https://receiver.example/" + "x" * 1976, "must be at most 2000 characters"),
    ],
)
def test_a_bad_url_is_422_on_url(api: Api, url: Any, words: str) -> None:
    answer = refused(api, {"url": url})
    assert error_fields(answer) == ["url"]
    assert words in messages(answer)["url"], answer


def test_a_url_of_2000_characters_is_accepted(api: Api) -> None:
    url = "https://receiver.example/"
    url += "x" * (2000 - len(url))
    assert hooks.create(api, url=url)["url"] == url


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/hooks",
        "http://127.0.0.1:8080/hooks",
        "http://localhost:8080/hooks",  # resolved (hosts file): 127.0.0.1 / ::1
        "http://LOCALHOST/",
        "http://localhost./hook",  # the same name, fully qualified
        "http://api.localhost./hook",
        "http://2130706433/",
        "http://0x7f.1/",
        "http://0177.0.0.1/",
        "http://127.1/",
        "http://[::1]:8080/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://0.0.0.0/",
        "http://0/",
        "http://[::]/",
        "http://10.0.0.5/",
        "http://172.16.0.1/",
        "http://172.31.255.254/",
        "http://192.168.1.1/",
        "http://[fd00::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://100.64.0.1/",
        "http://224.0.0.1/",
        "http://[ff02::1]/",
        # Not public either: protocol assignments, documentation, benchmarking, reserved.
        "http://192.0.0.8/",
        "http://192.0.2.10/",
        "http://198.51.100.7/",
        "http://203.0.113.9/",
        "http://198.18.0.1/",
        "http://198.19.255.1/",
        "http://240.0.0.1/",
        "http://[2001:db8::1]/",
    ],
)
def test_a_refused_address_is_422_on_url(api: Api, url: str) -> None:
    answer = refused(api, {"url": url})
    assert error_fields(answer) == ["url"]
    message = messages(answer)["url"]
    assert message.startswith(
        "must not point to a loopback, private, link-local, CGNAT, multicast, unspecified, "
        "documentation, benchmarking or reserved address: "
    ), message
    assert ok_data(api.get("/api/webhook"))["data"] == []


@pytest.mark.parametrize(
    "url",
    [
        "https://receiver.example/hooks",  # does not resolve here: accepted, checked at send
        "http://8.8.8.8/hooks",
        "http://172.32.0.1/",
        "http://100.128.0.1/",
        "http://[2001:4860:4860::8888]:8443/",
        "https://receiver.example#@127.0.0.1",  # the host is receiver.example
        "https://receiver.example./hooks",  # a fully qualified name
        "https://" + "a" * 63 + ".example/",
        "http://under_score.example/",
    ],
)
def test_public_receivers_are_accepted(api: Api, url: str) -> None:
    assert hooks.create(api, url=url)["url"] == url


def test_an_update_to_a_refused_address_is_422_and_changes_nothing(api: Api) -> None:
    made = hooks.create(api)
    body = {"paramToUpdate": "url", "url": "http://localhost:9000/"}
    answer = error(api.put(f"/api/webhook/{made['id']}", json=body), 422, VALIDATION)
    assert error_fields(answer) == ["url"]
    assert "localhost resolves to " in messages(answer)["url"]
    assert ok_data(api.get(f"/api/webhook/{made['id']}"))["webhook"] == made


@pytest.mark.parametrize(
    ("event_types", "words"),
    [
        ([], "must name at least one event type"),
        ("*", "must be an array of event types"),
        ({"contact.*": True}, "must be an array of event types"),
        (["contact.nope"], 'unknown event types: "contact.nope"'),
        (["contact.*", "deal.created", 7, None], 'unknown event types: "deal.created", 7, null'),
        (["Contact.Created"], '"Contact.Created"'),
        (["contact"], '"contact"'),
        (["**"], '"**"'),
        ([10**30], "1000000000000000000000000000000"),
        ([1.5, True], "unknown event types: 1.5, true;"),
        ([{"type": [2**70]}], "[1180591620717411303424]"),
        (["x" * 5000], '"xxxxxxxxxx'),
    ],
)
def test_an_unknown_event_type_is_422_naming_it(api: Api, event_types: Any, words: str) -> None:
    answer = refused(api, {"url": hooks.receiver(), "eventTypes": event_types})
    assert error_fields(answer) == ["eventTypes"]
    assert words in messages(answer)["eventTypes"], answer


def test_the_unknown_type_message_lists_what_is_accepted(api: Api) -> None:
    message = messages(refused(api, {"url": hooks.receiver(), "eventTypes": ["x"]}))["eventTypes"]
    for accepted in ("contact.created", "opportunity.activity.created", "contact.*", "*"):
        assert accepted in message


@pytest.mark.parametrize(
    "event_types",
    [
        ["*"],
        ["contact.*"],
        ["opportunity.*", "contact.merged"],
        ["contact.created", "contact.updated", "contact.deleted", "contact.restored"],
        ["contact.activity.created", "opportunity.activity.created"],
        ["webhook.test"],
    ],
)
def test_known_types_families_and_everything_are_accepted(api: Api, event_types: list[str]) -> None:
    assert hooks.create(api, eventTypes=event_types)["eventTypes"] == event_types


def test_description_is_at_most_200_characters(api: Api) -> None:
    assert hooks.create(api, description="é" * 200)["description"] == "é" * 200
    answer = refused(api, {"url": hooks.receiver(), "description": "x" * 201})
    assert messages(answer) == {"description": "must be at most 200 characters"}
    answer = refused(api, {"url": hooks.receiver(), "description": 5})
    assert error_fields(answer) == ["description"]


def test_every_bad_value_is_named_in_one_422(api: Api) -> None:
    body = {"url": "http://localhost/", "eventTypes": ["nope"], "description": "x" * 201}
    answer = refused(api, body)
    assert error_fields(answer) == ["url", "eventTypes", "description"]
    assert answer["message"].startswith("Invalid value for 'url': ")
    assert answer["message"].endswith("(and 2 more).")
    # In the body's order, the refused address among the others.
    reordered = {"eventTypes": ["nope"], "url": "http://localhost/", "description": 5}
    assert error_fields(refused(api, reordered)) == ["eventTypes", "url", "description"]
    made = hooks.create(api)
    update = {
        "paramToUpdate": "description,url,eventTypes",
        "eventTypes": [],
        "url": "http://10.0.0.1/",
        "description": None,
    }
    answer = error(api.put(f"/api/webhook/{made['id']}", json=update), 422, VALIDATION)
    assert error_fields(answer) == ["description", "url", "eventTypes"]


def test_unknown_or_read_only_keys_are_400(api: Api) -> None:
    for key, value in (("enabled", False), ("secret", "whsec_x"), ("urls", "x"), ("id", "x")):
        answer = error(
            api.post("/api/webhook", json={"url": hooks.receiver(), key: value}), 400, "BAD_REQUEST"
        )
        assert error_fields(answer) == [key]
        assert "Accepted keys: description, eventTypes, url, workspaceId." in answer["message"]
    error(api.post("/api/webhook", json=["x"]), 400, "BAD_REQUEST")
    error(api.post("/api/webhook"), 400, "BAD_REQUEST")
    body = error(api.post("/api/webhook", json={"url": hooks.receiver(), "workspaceId": 5}), 422,
                 VALIDATION)  # fmt: skip
    assert error_fields(body) == ["workspaceId"]


def test_at_most_20_webhooks_per_workspace(api: Api, other_api: Api) -> None:
    made = [hooks.create(api) for _ in range(20)]
    answer = refused(api, {"url": hooks.receiver()})
    assert error_fields(answer) == ["workspaceId"]
    assert "20 webhooks" in answer["message"]
    assert len(ok_data(api.get("/api/webhook"))["data"]) == 20
    # Other workspaces have their own 20.
    hooks.create(other_api)
    # Room again once one goes.
    ok_data(api.delete(f"/api/webhook/{made[0]['id']}"))
    hooks.create(api)
    refused(api, {"url": hooks.receiver()})


# --- CHATCRM_WEBHOOK_ALLOW_PRIVATE ------------------------------------------------------------


@pytest.fixture
def private_api(settings: Settings, api: Api) -> Iterator[Api]:
    """The same account and workspace through an app that allows private receivers."""
    allowing = settings.model_copy(update={"webhook_allow_private": True})
    with TestClient(create_app(allowing), raise_server_exceptions=False) as client:
        yield Api(client, api.account)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/hooks",
        "http://localhost:8080/hooks",
        "http://10.0.0.5/",
        "http://[::1]/",
        "http://[fe80::1]/",
        "http://2130706433/",
    ],
)
def test_private_receivers_are_allowed_when_the_setting_says_so(
    private_api: Api, api: Api, url: str
) -> None:
    made = hooks.create(private_api, url=url)
    assert made["url"] == url
    # The setting is the server's, not the endpoint's: the other app still refuses it.
    refused(api, {"url": url})
    body = {"paramToUpdate": "url", "url": url}
    error(api.put(f"/api/webhook/{made['id']}", json=body), 422, VALIDATION)
    assert hooks.update(private_api, made["id"], url=url)["url"] == url


def test_the_setting_does_not_relax_the_url_rules(private_api: Api) -> None:
    for url in ("ftp://127.0.0.1/", "http://", "http://127.0.0.1:0/"):
        answer = refused(private_api, {"url": url})
        assert error_fields(answer) == ["url"]
