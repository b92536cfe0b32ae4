"""Webhook endpoints over HTTP (contract D.4): create, list, get, update, delete and
rotate-secret — their answers, key order, defaults and the secret's visibility."""

from __future__ import annotations

import base64
import re
from datetime import timedelta
from typing import Any

from tests.client import Api, error, error_fields, ok_data
from tests.webhooks import hooks
from tests.webhooks.hooks import LISTED_KEYS, NOT_FOUND, WEBHOOK_KEYS

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
SECRET = re.compile(r"^whsec_[A-Za-z0-9+/]{43}=$")
OBTAINED = "Webhook obtained successfully."


def assert_secret(secret: str) -> None:
    assert SECRET.fullmatch(secret), secret
    assert len(base64.b64decode(secret.removeprefix("whsec_"), validate=True)) == 32


# --- create ---------------------------------------------------------------------------------


def test_create_answers_the_whole_record_with_its_defaults(api: Api) -> None:
    url = hooks.receiver()
    data = ok_data(api.post("/api/webhook", json={"url": url}), hooks.CREATED)
    assert list(data) == ["id", "webhook"]
    webhook = data["webhook"]
    assert list(webhook) == WEBHOOK_KEYS
    assert webhook["id"] == data["id"]
    assert webhook["url"] == url
    assert webhook["eventTypes"] == ["*"]
    assert webhook["description"] == ""
    assert webhook["enabled"] is True
    assert webhook["disabledReason"] is None
    assert_secret(webhook["secret"])
    assert TIMESTAMP.fullmatch(webhook["createdAt"])
    assert webhook["updatedAt"] == webhook["createdAt"]


def test_reads_and_updates_showing_the_secret_are_kept_by_no_cache(api: Api) -> None:
    """A webhook's signing secret lasts: Get and Update, which show it, say no-store (the
    POSTs that show it are kept, once, by the idempotency layer for their retries)."""
    webhook = ok_data(api.post("/api/webhook", json={"url": hooks.receiver()}))["webhook"]
    path = f"/api/webhook/{webhook['id']}"
    body = {"paramToUpdate": "description", "description": "no-store"}
    for answer in (api.get(path), api.put(path, json=body)):
        assert ok_data(answer)["webhook"]["secret"] == webhook["secret"]
        assert answer.headers.get("cache-control") == "no-store", answer.request.url


def test_create_keeps_what_it_is_given(api: Api) -> None:
    url = "HTTPS://Receiver.Example:8443/hooks/in?source=chatcrm&x=%20y#frag"
    webhook = hooks.create(
        api,
        url=url,
        eventTypes=["contact.created", "opportunity.*", "contact.created", "contact.*"],
        description="Sales board",
    )
    assert webhook["url"] == url  # stored as given, not normalised
    # Duplicates collapse, the first place kept.
    assert webhook["eventTypes"] == ["contact.created", "opportunity.*", "contact.*"]
    assert webhook["description"] == "Sales board"


def test_null_optional_fields_take_their_defaults(api: Api) -> None:
    webhook = hooks.create(api, eventTypes=None, description=None)
    assert webhook["eventTypes"] == ["*"] and webhook["description"] == ""


def test_every_endpoint_gets_its_own_secret(api: Api) -> None:
    secrets = {hooks.create(api)["secret"] for _ in range(5)}
    assert len(secrets) == 5


def test_create_takes_the_workspace_from_the_body_or_the_header(api: Api, other_api: Api) -> None:
    body = {"url": hooks.receiver(), "workspaceId": api.ws}
    assert ok_data(api.post("/api/webhook", json=body, workspace=None), hooks.CREATED)
    assert ok_data(api.post("/api/webhook", json=body), hooks.CREATED)
    error(api.post("/api/webhook", json={**body, "workspaceId": other_api.ws}), 403, "FORBIDDEN")
    error(api.post("/api/webhook", json={"url": hooks.receiver()}, workspace=None), 401,
          "WORKSPACE_REQUIRED")  # fmt: skip
    assert len(ok_data(api.get("/api/webhook"))["data"]) == 2


def test_create_with_an_idempotency_key_creates_once(api: Api) -> None:
    body = {"url": hooks.receiver()}
    headers = {"Idempotency-Key": "create-hook-1"}
    first = ok_data(api.post("/api/webhook", json=body, headers=headers))
    again = api.post("/api/webhook", json=body, headers=headers)
    assert ok_data(again) == first
    assert again.headers["idempotent-replayed"] == "true"
    assert [w["id"] for w in ok_data(api.get("/api/webhook"))["data"]] == [first["id"]]


# --- list and get -------------------------------------------------------------------------------


def test_list_is_oldest_first_and_never_shows_a_secret(api: Api) -> None:
    empty = ok_data(api.get("/api/webhook"), "List obtained successfully.")
    assert empty == {"workspaceId": api.ws, "data": []}
    made = [hooks.create(api, description=f"n{n}") for n in range(3)]
    response = api.get("/api/webhook")
    data = ok_data(response, "List obtained successfully.")
    assert list(data) == ["workspaceId", "data"] and data["workspaceId"] == api.ws
    assert [w["id"] for w in data["data"]] == [w["id"] for w in made]
    for listed, whole in zip(data["data"], made, strict=True):
        assert list(listed) == LISTED_KEYS
        assert listed == {k: v for k, v in whole.items() if k != "secret"}
    for whole in made:
        assert whole["secret"] not in response.text
    assert "secret" not in response.text


def test_list_takes_the_workspace_from_the_query_and_refuses_unknown_parameters(
    api: Api, other_api: Api
) -> None:
    made = hooks.create(api)
    data = ok_data(api.get("/api/webhook", params={"workspaceId": api.ws}, workspace=None))
    assert [w["id"] for w in data["data"]] == [made["id"]]
    body = error(api.get("/api/webhook", params={"pageSize": "5"}), 400, "BAD_REQUEST")
    assert error_fields(body) == ["pageSize"]
    error(api.get("/api/webhook", params={"workspaceId": other_api.ws}), 403, "FORBIDDEN")
    assert ok_data(other_api.get("/api/webhook"))["data"] == []


def test_get_shows_the_whole_record(api: Api) -> None:
    made = hooks.create(api, eventTypes=["contact.*"])
    data = ok_data(api.get(f"/api/webhook/{made['id']}"), OBTAINED)
    assert data == {"id": made["id"], "webhook": made}
    assert list(data["webhook"]) == WEBHOOK_KEYS
    query = api.get(f"/api/webhook/{made['id']}", params={"workspaceId": api.ws}, workspace=None)
    assert ok_data(query)["webhook"] == made


def test_an_unknown_or_foreign_id_is_webhook_not_found(api: Api, other_api: Api) -> None:
    theirs = hooks.create(other_api)
    for webhook_id in (theirs["id"], "01a214f5-5d24-74c9-af62-4b385a9d0a37", "not-an-id", "1"):
        for method in ("GET", "DELETE"):
            body = error(api.request(method, f"/api/webhook/{webhook_id}"), 404, NOT_FOUND)
            assert body["data"] is None
            assert webhook_id in body["message"]
    # Nothing happened to theirs.
    assert ok_data(other_api.get(f"/api/webhook/{theirs['id']}"))["webhook"] == theirs


# --- update -------------------------------------------------------------------------------------


def test_update_each_field(api: Api, database_url: str) -> None:
    made = hooks.create(api)
    url = hooks.receiver()
    after_url = hooks.update(api, made["id"], url=url)
    assert after_url["url"] == url
    assert after_url["updatedAt"] > made["updatedAt"]
    assert after_url["createdAt"] == made["createdAt"]
    assert after_url["secret"] == made["secret"]
    after_types = hooks.update(api, made["id"], eventTypes=["opportunity.*", "opportunity.*"])
    assert after_types["eventTypes"] == ["opportunity.*"]
    after_description = hooks.update(api, made["id"], description="x" * 200)
    assert after_description["description"] == "x" * 200
    disabled = hooks.update(api, made["id"], enabled=False)
    assert disabled["enabled"] is False and disabled["disabledReason"] is None
    assert list(disabled) == WEBHOOK_KEYS
    assert disabled["updatedAt"] > after_description["updatedAt"]
    assert ok_data(api.get(f"/api/webhook/{made['id']}"))["webhook"] == disabled


def test_update_several_fields_at_once(api: Api) -> None:
    made = hooks.create(api)
    body = {
        "paramToUpdate": "description, eventTypes",
        "description": "Both",
        "eventTypes": ["*"],
        "id": made["id"],
        "workspaceId": api.ws,
    }
    data = ok_data(api.put(f"/api/webhook/{made['id']}", json=body), hooks.UPDATED)
    assert data["webhook"]["description"] == "Both" and data["webhook"]["eventTypes"] == ["*"]


def test_enabling_clears_the_disabled_reason_and_the_failure_count(
    api: Api, database_url: str
) -> None:
    made = hooks.create(api)
    for reason in ("gone", "failing"):
        hooks.set_webhook(
            database_url,
            api.ws,
            made["id"],
            enabled=False,
            disabled_reason=reason,
            consecutive_failures=20,
        )
        shown = ok_data(api.get(f"/api/webhook/{made['id']}"))["webhook"]
        assert shown["enabled"] is False and shown["disabledReason"] == reason
        # Disabling by hand changes neither.
        still = hooks.update(api, made["id"], enabled=False)
        assert still["disabledReason"] == reason
        stored = hooks.stored(database_url, api.ws, made["id"])
        assert stored is not None and stored["consecutive_failures"] == 20
        enabled = hooks.update(api, made["id"], enabled=True)
        assert enabled["enabled"] is True and enabled["disabledReason"] is None
        stored = hooks.stored(database_url, api.ws, made["id"])
        assert stored is not None
        assert stored["consecutive_failures"] == 0 and stored["disabled_reason"] is None


def test_events_committed_while_enabled_are_delivered_however_soon_it_is_disabled(
    api: Api, database_url: str
) -> None:
    """D.4, at least once: an event that matched an enabled endpoint is queued for it even
    when the endpoint is disabled a moment after the event's commit, before any publisher
    reached it (7 of 10 were never delivered, not even listed). Events committed while it
    is disabled are not."""
    made = hooks.create(api, eventTypes=["contact.created"])
    created = []
    for _ in range(8):
        created.append(api.create_contact()["id"])
        hooks.update(api, made["id"], enabled=False)
        api.create_contact()  # while disabled: never delivered
        hooks.update(api, made["id"], enabled=True)
    hooks.publish(api, database_url)
    queued = hooks.deliveries(database_url, api.ws, made["id"])
    events = ok_data(api.get("/api/events", params={"types": "contact.created"}))["events"]
    by_record = {e["id"]: e["recordId"] for e in events}
    assert sorted(by_record[d["event_id"]] for d in queued) == sorted(created)


def test_update_structural_mistakes_are_400(api: Api) -> None:
    made = hooks.create(api)
    path = f"/api/webhook/{made['id']}"
    cases: list[tuple[Any, str, str]] = [
        ({}, "paramToUpdate", "names no field to update"),  # nothing named either way
        ({"paramToUpdate": "secret", "secret": "whsec_x"}, "secret", "read-only"),
        ({"paramToUpdate": "disabledReason", "disabledReason": None}, "disabledReason",
         "read-only"),
        ({"paramToUpdate": "createdAt", "createdAt": "2025-01-01"}, "createdAt", "read-only"),
        ({"paramToUpdate": "id", "id": made["id"]}, "id", "read-only"),
        ({"paramToUpdate": "name", "name": "x"}, "name", "cannot be updated"),
        ({"paramToUpdate": "url"}, "url", "missing from the body"),
        ({"paramToUpdate": "url", "url": hooks.receiver(), "enabled": True}, "enabled",
         "Unexpected body key"),
        ({"paramToUpdate": "enabled", "enabled": True, "id": "other"}, "id",
         "the webhook id of the path"),
        ({"paramToUpdate": 5}, "paramToUpdate", "must be a string"),
    ]  # fmt: skip
    for body, field, words in cases:
        answer = error(api.put(path, json=body), 400, "BAD_REQUEST")
        assert error_fields(answer) == [field], (body, answer)
        assert words in answer["message"], (body, answer)
    read_only = error(api.put(path, json=cases[1][0]), 400, "BAD_REQUEST")
    assert "url, eventTypes, description, enabled" in read_only["message"]
    error(api.put(path, content=b"[]"), 400, "BAD_REQUEST")
    assert ok_data(api.get(path))["webhook"] == made


def test_an_update_may_name_its_fields_by_its_keys(api: Api) -> None:
    """E.1's form, as every other update of section 2 takes it: no paramToUpdate."""
    made = hooks.create(api)
    path = f"/api/webhook/{made['id']}"
    changed = ok_data(api.put(path, json={"description": "by its keys", "enabled": False}))
    assert (changed["webhook"]["description"], changed["webhook"]["enabled"]) == (
        "by its keys",
        False,
    )
    answer = error(api.put(path, json={"secret": "whsec_x"}), 400, "BAD_REQUEST")
    assert error_fields(answer) == ["secret"]


def test_update_invalid_values_are_one_422(api: Api) -> None:
    made = hooks.create(api)
    body = {
        "paramToUpdate": "url,eventTypes,description,enabled",
        "url": "ftp://receiver.example/",
        "eventTypes": ["contact.nope"],
        "description": "x" * 201,
        "enabled": "yes",
    }
    answer = error(api.put(f"/api/webhook/{made['id']}", json=body), 422, "VALIDATION_ERROR")
    assert error_fields(answer) == ["url", "eventTypes", "description", "enabled"]
    for field in ("url", "eventTypes", "description", "enabled"):
        nulled = {"paramToUpdate": field, field: None}
        answer = error(api.put(f"/api/webhook/{made['id']}", json=nulled), 422, "VALIDATION_ERROR")
        assert error_fields(answer) == [field]
    assert ok_data(api.get(f"/api/webhook/{made['id']}"))["webhook"] == made


def test_update_of_an_unknown_or_foreign_webhook_is_404(api: Api, other_api: Api) -> None:
    theirs = hooks.create(other_api)
    body = {"paramToUpdate": "description", "description": "Mine now"}
    for webhook_id in (theirs["id"], "01a214f5-5d24-74c9-af62-4b385a9d0a37", "nope"):
        error(api.put(f"/api/webhook/{webhook_id}", json=body), 404, NOT_FOUND)
    # The body is read first: a structural mistake is a 400 whatever the id.
    error(api.put(f"/api/webhook/{theirs['id']}", json={"secret": "x"}), 400, "BAD_REQUEST")
    assert ok_data(other_api.get(f"/api/webhook/{theirs['id']}"))["webhook"] == theirs


def test_update_workspace_rules(api: Api, other_api: Api) -> None:
    made = hooks.create(api)
    body = {"paramToUpdate": "description", "description": "x"}
    path = f"/api/webhook/{made['id']}"
    error(api.put(path, json={**body, "workspaceId": other_api.ws}), 403, "FORBIDDEN")
    error(api.put(path, json=body, params={"workspaceId": other_api.ws}), 403, "FORBIDDEN")
    ok = api.put(path, json={**body, "workspaceId": api.ws}, params={"workspaceId": api.ws})
    assert ok_data(ok, hooks.UPDATED)["webhook"]["description"] == "x"


# --- delete -------------------------------------------------------------------------------------


def test_delete_removes_the_endpoint_and_its_deliveries(api: Api, database_url: str) -> None:
    kept, gone = hooks.create(api), hooks.create(api)
    for webhook in (kept, gone):
        hooks.queue_test(api, webhook["id"])
        hooks.queue_test(api, webhook["id"])
    assert len(hooks.deliveries(database_url, api.ws, gone["id"])) == 2
    data = ok_data(api.delete(f"/api/webhook/{gone['id']}"), "Webhook deleted successfully.")
    assert data == {"id": gone["id"]}
    assert hooks.deliveries(database_url, api.ws, gone["id"]) == []
    assert hooks.stored(database_url, api.ws, gone["id"]) is None
    error(api.get(f"/api/webhook/{gone['id']}"), 404, NOT_FOUND)
    error(api.delete(f"/api/webhook/{gone['id']}"), 404, NOT_FOUND)
    error(api.post(f"/api/webhook/{gone['id']}/test"), 404, NOT_FOUND)
    assert [w["id"] for w in ok_data(api.get("/api/webhook"))["data"]] == [kept["id"]]
    assert len(hooks.deliveries(database_url, api.ws, kept["id"])) == 2


def test_delete_takes_the_workspace_from_the_query(api: Api, other_api: Api) -> None:
    made = hooks.create(api)
    path = f"/api/webhook/{made['id']}"
    error(api.delete(path, params={"workspaceId": other_api.ws}), 403, "FORBIDDEN")
    error(other_api.delete(path), 404, NOT_FOUND)
    ok_data(api.delete(path, params={"workspaceId": api.ws}, workspace=None))


# --- rotate-secret ------------------------------------------------------------------------------


def test_rotate_gives_a_new_secret_and_keeps_the_old_one_for_24_hours(
    api: Api, database_url: str
) -> None:
    made = hooks.create(api)
    path = f"/api/webhook/{made['id']}/rotate-secret"
    data = ok_data(api.post(path), "Webhook secret rotated successfully.")
    assert list(data) == ["id", "webhook"] and data["id"] == made["id"]
    rotated = data["webhook"]
    assert list(rotated) == WEBHOOK_KEYS
    assert_secret(rotated["secret"])
    assert rotated["secret"] != made["secret"]
    assert rotated["updatedAt"] > made["updatedAt"]
    assert {k: v for k, v in rotated.items() if k not in ("secret", "updatedAt")} == {
        k: v for k, v in made.items() if k not in ("secret", "updatedAt")
    }
    stored = hooks.stored(database_url, api.ws, made["id"])
    assert stored is not None
    assert stored["secret"] == rotated["secret"]
    assert stored["previous_secret"] == made["secret"]
    assert stored["previous_secret_expires_at"] - stored["updated_at"] == timedelta(hours=24)
    assert ok_data(api.get(f"/api/webhook/{made['id']}"))["webhook"] == rotated
    # Again: the outgoing secret is the one just replaced.
    again = ok_data(api.post(path, json={}))["webhook"]
    stored = hooks.stored(database_url, api.ws, made["id"])
    assert stored is not None and stored["previous_secret"] == rotated["secret"]
    assert again["secret"] not in (made["secret"], rotated["secret"])


def test_rotate_takes_no_body_fields(api: Api, other_api: Api) -> None:
    made = hooks.create(api)
    path = f"/api/webhook/{made['id']}/rotate-secret"
    assert ok_data(api.post(path, json={"workspaceId": api.ws}, workspace=None))
    assert ok_data(api.post(path, content=b"", headers={"Content-Type": "application/json"}))
    answer = error(api.post(path, json={"secret": "whsec_mine"}), 400, "BAD_REQUEST")
    assert error_fields(answer) == ["secret"]
    error(api.post(path, json=[]), 400, "BAD_REQUEST")
    error(api.post(path, content=b"{", headers={"Content-Type": "application/json"}), 400,
          "BAD_REQUEST")  # fmt: skip
    error(api.post(path, content=b"{}", headers={"Content-Type": "text/plain"}), 415,
          "UNSUPPORTED_MEDIA_TYPE")  # fmt: skip
    error(api.post(path, json={"workspaceId": other_api.ws}), 403, "FORBIDDEN")
    error(other_api.post(path), 404, NOT_FOUND)
    error(api.post("/api/webhook/nope/rotate-secret"), 404, NOT_FOUND)
