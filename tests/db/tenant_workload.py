"""A broad workload through the HTTP API: every route under /api, with the variants that
change a statement's shape (list filters, tokens, boards continued with `after`, upserts
by phone and by email, merges, stage moves, idempotency replays, feeds by record...), and
Meta's unauthenticated calls to a channel (the verification, a signed delivery).

`Workload.call` takes the route's template, so the test can check that no route served
under /api was left out."""

from __future__ import annotations

import hashlib
import hmac
import json as jsonlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
import pyotp

from chatcrm.channels.service import RECEIVING_PATH
from tests.client import Api, ok_data, unique_email, unique_phone

# The workload's WhatsApp channel: its Graph API is the receiver's /graph, so the channel
# sender of the test's background round posts to {GRAPH}/{PHONE_NUMBER_ID}/messages.
GRAPH = "/graph"
PHONE_NUMBER_ID = "106540352242922"
APP_SECRET = "the-workload-app-secret"


@dataclass
class Workload:
    api: Api
    routes: set[tuple[str, str]] = field(default_factory=set)

    def call(
        self,
        method: str,
        template: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
        headers: dict[str, str] | None = None,
        workspace: str | None = "",
        auth: str | None = "",
        content: bytes | None = None,
        **path: str,
    ) -> httpx.Response:
        self.routes.add((method, template))
        url = template.format(**path)
        return self.api.request(
            method,
            url,
            params=params,
            json=json,
            headers=headers,
            workspace=workspace,
            auth=auth,
            content=content,
        )

    def ok(self, method: str, template: str, **kw: Any) -> Any:
        return ok_data(self.call(method, template, **kw))


def run(api: Api, *, receiver_url: Callable[[str], str]) -> Workload:
    """The workload in `api`'s workspace; its webhooks post to a receiver's paths /ok,
    /gone (410) and /failing (500)."""
    w = Workload(api)
    ws = api.ws
    setup = "/api/workspace/{workspaceId}"
    view = w.ok("GET", setup, workspaceId=ws)
    w.ok("GET", "/api/workspace")
    other = w.ok("POST", "/api/workspace", json={"name": "Second"}, workspace=None)
    w.ok("GET", setup, workspaceId=other["id"], workspace=None)
    tag = w.ok("POST", setup + "/tags", workspaceId=ws, json={"name": "hot", "color": "#f00"})
    tag2 = w.ok("POST", setup + "/tags", workspaceId=ws, json={"name": "cold", "color": None})
    agent = w.ok(
        "POST", setup + "/agents", workspaceId=ws, json={"name": "Al", "email": unique_email()}
    )
    seg = w.ok("POST", setup + "/segmentations", workspaceId=ws, json={"name": "vip"})
    stage = w.ok("POST", setup + "/stages", workspaceId=ws, json={"kind": "contact", "name": "S"})
    w.ok("POST", setup + "/stages", workspaceId=ws, json={"kind": "opportunity", "name": "O"})
    first_stage = view["contactStages"][0]["id"]
    opp_stage = view["opportunityStages"][1]["id"]

    hook_path = "/api/webhook/{webhookId}"
    hook = w.ok("POST", "/api/webhook", json={"url": receiver_url("/ok")})["webhook"]
    for path in ("/gone", "/failing"):
        w.ok("POST", "/api/webhook", json={"url": receiver_url(path), "eventTypes": ["contact.*"]})
    w.ok("POST", hook_path + "/test", webhookId=hook["id"])

    # --- contacts -----------------------------------------------------------------------
    phone = unique_phone()
    body = {
        "name": "Ana",
        "lastname": "Diaz",
        "email": unique_email(),
        "internalWhatsappNumber": phone,
        "tags": [tag["id"]],
        "assignedAgentId": agent["id"],
        "segmentationId": seg["id"],
        "stageId": first_stage,
        "variables": [{"name": "city", "value": "Lima"}],
    }
    ana = w.ok("POST", "/api/contact", json=body)["contact"]
    keyed = {"Idempotency-Key": "k-1"}
    for _ in range(2):  # stored, then replayed
        bea = w.ok(
            "POST", "/api/contact", json={"name": "Bea", "email": "bea@example.com"}, headers=keyed
        )["contact"]
    cid = w.ok("POST", "/api/contact", json={"name": "Cid", "email": unique_email()})["contact"]
    dup = w.ok("POST", "/api/contact", json={"name": "Dup", "email": unique_email()})["contact"]
    one = "/api/contact/{contactId}"
    got = w.call("GET", one, contactId=ana["id"])
    w.ok("GET", one, contactId=ana["id"], params={"shape": "full"})
    update = {"id": ana["id"], "workspaceId": ws}
    w.ok("PUT", "/api/contact", params=update, json={"paramToUpdate": "name", "name": "Ana M"})
    # A stale ETag: 412, after the conditional read.
    w.call(
        "PUT",
        "/api/contact",
        params=update,
        headers={"If-Match": got.headers["etag"]},
        json={"paramToUpdate": "name", "name": "stale"},
    )
    w.ok(
        "PUT",
        "/api/contact",
        params=update,
        json={"stageId": stage["id"], "tags": [tag2["id"], tag["id"]], "isSolved": True},
    )
    w.ok(
        "PUT",
        "/api/contact",
        params=update,
        json={"paramToUpdate": "orderInCards", "orderInCards": 0},
    )
    w.ok("PUT", "/api/contact", params=update, json={"variables": [{"name": "x", "value": "1"}]})
    acts = "/api/contact/{contactId}/activities"
    for n in range(3):
        w.ok("POST", acts, contactId=ana["id"], json={"content": f"note {n}"})
    page = w.ok("GET", acts, contactId=ana["id"], params={"pageSize": "1"})
    w.ok("GET", acts, contactId=ana["id"], params={"continuationToken": page["continuationToken"]})
    lists = [
        {},
        {"pageSize": "1"},
        {"q": "ana"},
        {"q": phone[-6:]},
        {"search": "Diaz"},
        {"stageId": stage["id"]},
        {"assignedAgentId": agent["id"]},
        {"tag": tag["id"]},
        {"isSolved": "true"},
        {"updatedSince": "2020-01-01T00:00:00Z"},
        {"shape": "full"},
    ]
    for params in lists:
        w.ok("GET", "/api/contact", params=params)
    token = w.ok("GET", "/api/contact", params={"pageSize": "1"})["continuationToken"]
    w.ok("GET", "/api/contact", params={"continuationToken": token})
    w.ok("GET", "/api/contact/searchByEmail", params={"email": body["email"]})
    w.ok("GET", "/api/contact/searchByCellphone", params={"cellphone": phone})
    board = w.ok("GET", "/api/contact/board", params={"pageSize": "1"})
    w.ok("GET", "/api/contact/board", params={"q": "a", "tag": tag["id"]})
    w.ok("GET", "/api/contact/board", params={"stageId": first_stage, "pageSize": "1"})
    column = next(c for c in board["columns"] if c["next"])
    w.ok(
        "GET",
        "/api/contact/board",
        params={"stageId": column["stageId"], "after": column["next"], "pageSize": "1"},
    )
    upsert = "/api/contact/upsert-batch"
    w.ok("POST", upsert, json={"contacts": [{"name": "U", "platformId": 2, "phone": phone}]})
    w.ok(
        "POST",
        upsert,
        json={
            "contacts": [
                {"name": "New", "email": unique_email(), "tags": [tag["id"]]},
                {"name": "By email", "email": body["email"], "stageId": first_stage},
            ],
            "matchBy": "email",
        },
    )
    w.ok("POST", upsert, json={"contacts": [{"name": "Dry", "phone": phone}], "dryRun": True})
    w.ok("POST", "/api/contact/merge", json={"primaryId": ana["id"], "duplicateIds": [dup["id"]]})
    w.ok("POST", "/api/contact/delete-batch", json={"contactIds": [{"ids": cid["id"]}]})
    w.ok("DELETE", one, contactId=bea["id"])
    w.ok("POST", one + "/restore", contactId=bea["id"])
    w.ok("GET", one + "/history", contactId=ana["id"])
    w.ok("GET", one + "/history", contactId=ana["id"], params={"pageSize": "1"})

    # --- opportunities ------------------------------------------------------------------
    deal = w.ok(
        "POST",
        "/api/opportunity",
        json={
            "name": "Deal",
            "amount": 100,
            "contactId": ana["id"],
            "assignedAgentId": agent["id"],
            "stageId": opp_stage,
        },
    )["opportunity"]
    deal2 = w.ok("POST", "/api/opportunity", json={"name": "Two", "amount": 5})["opportunity"]
    opp = "/api/opportunity/{opportunityId}"
    w.ok("GET", opp, opportunityId=deal["id"])
    w.ok("GET", opp, opportunityId=deal["id"], params={"shape": "full"})
    by_id = {"id": deal["id"]}
    w.ok("PUT", "/api/opportunity", params=by_id, json={"paramToUpdate": "amount", "amount": 7})
    w.ok(
        "PUT",
        "/api/opportunity",
        params=by_id,
        json={"stageId": view["opportunityStages"][0]["id"]},
    )
    w.ok("PUT", "/api/opportunity", params=by_id, json={"winLossStatus": 1})
    w.ok("PUT", "/api/opportunity", params=by_id, json={"winLossStatus": 0})
    w.ok("PUT", "/api/opportunity", params={"id": deal2["id"]}, json={"winLossStatus": 2})
    oacts = opp + "/agent/activities"
    for n in range(2):
        w.ok(
            "POST",
            oacts,
            opportunityId=deal["id"],
            json={"content": f"c{n}", "categoryType": "Calls"},
        )
    w.ok("GET", oacts, opportunityId=deal["id"])
    for params in [
        {},
        {"q": "deal"},
        {"q": deal["opportCode"]},
        {"contactId": ana["id"]},
        {"stageId": opp_stage},
        {"assignedAgentId": agent["id"]},
        {"winLossStatus": "1"},
        {"updatedSince": "2020-01-01T00:00:00Z"},
    ]:
        w.ok("GET", "/api/opportunity", params=params)
    token = w.ok("GET", "/api/opportunity", params={"pageSize": "1"})["continuationToken"]
    w.ok("GET", "/api/opportunity", params={"continuationToken": token})
    w.ok("GET", "/api/opportunity/board")
    w.ok("GET", "/api/opportunity/board", params={"q": "d", "winLossStatus": "1"})
    w.ok("GET", "/api/opportunity/pipeline")
    w.ok("DELETE", opp, opportunityId=deal2["id"])
    w.ok("POST", opp + "/restore", opportunityId=deal2["id"])
    w.ok("GET", opp + "/history", opportunityId=deal["id"])

    # --- events and webhooks ------------------------------------------------------------
    feed = w.ok("GET", "/api/events", params={"pageSize": "2"})
    after = feed["events"][-1]["id"]
    w.ok("GET", "/api/events", params={"after": after, "types": "contact.*,opportunity.updated"})
    w.ok("GET", "/api/events", params={"recordId": ana["id"], "wait": "0"})
    w.ok("GET", "/api/webhook")
    w.ok("GET", hook_path, webhookId=hook["id"])
    w.ok(
        "PUT",
        hook_path,
        webhookId=hook["id"],
        json={"paramToUpdate": "eventTypes", "eventTypes": ["contact.*"]},
    )
    w.ok("POST", hook_path + "/rotate-secret", webhookId=hook["id"])
    deliveries = hook_path + "/deliveries"
    log = w.ok("GET", deliveries, webhookId=hook["id"], params={"pageSize": "1"})
    w.ok("GET", deliveries, webhookId=hook["id"], params={"status": "pending"})
    if log["continuationToken"]:
        w.ok(
            "GET",
            deliveries,
            webhookId=hook["id"],
            params={"continuationToken": log["continuationToken"]},
        )
    w.ok("POST", hook_path + "/replay", webhookId=hook["id"], json={"eventId": after})
    w.ok(
        "POST", hook_path + "/replay", webhookId=hook["id"], json={"since": "2020-01-01T00:00:00Z"}
    )
    gone = w.ok("POST", "/api/webhook", json={"url": receiver_url("/deleted")})["webhook"]
    w.ok("DELETE", hook_path, webhookId=gone["id"])
    conversations(w, ana["id"], phone, receiver_url=receiver_url)
    people(w)
    return w


def conversations(
    w: Workload, contact_id: str, phone: str, *, receiver_url: Callable[[str], str]
) -> None:
    """Contract K: channels, Meta's calls, the conversation of `contact_id` (whose WhatsApp
    number is `phone`). Two messages are left queued for the channel sender."""
    one = "/api/channel/{channelId}"
    channel = w.ok(
        "POST",
        "/api/channel",
        json={
            "type": "whatsapp",
            "name": "Main",
            "phoneNumberId": PHONE_NUMBER_ID,
            "accessToken": "EAAG-workload",
            "appSecret": APP_SECRET,
            "apiBaseUrl": receiver_url(GRAPH),
        },
    )["channel"]
    spare = w.ok(
        "POST",
        "/api/channel",
        json={
            "type": "whatsapp",
            "name": "Spare",
            "phoneNumberId": PHONE_NUMBER_ID + "1",
            "accessToken": "EAAG-spare",
            "appSecret": "spare",
        },
    )["channel"]
    w.ok("GET", "/api/channel")
    w.ok("GET", one, channelId=channel["id"])
    w.ok("PUT", one, channelId=spare["id"], json={"paramToUpdate": "enabled", "enabled": False})
    w.ok("PUT", one, channelId=spare["id"], json={"name": "Spare 2", "accessToken": "EAAG-2"})
    w.ok("DELETE", one, channelId=spare["id"])

    # Meta: the verification, then a delivery — a message from the contact, one from a new
    # number (a contact is created), the same message again, and a status of an unknown wamid.
    verify = {
        "hub.mode": "subscribe",
        "hub.verify_token": channel["verifyToken"],
        "hub.challenge": "challenge",
    }
    answer = w.call(
        "GET", RECEIVING_PATH, channelId=channel["id"], params=verify, auth=None, workspace=None
    )
    assert answer.text == "challenge", answer.text
    news = _message(phone, "wamid.W1", "hola")
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "1", "phone_number_id": PHONE_NUMBER_ID},
        "contacts": [
            {"profile": {"name": "Ana"}, "wa_id": phone},
            {"profile": {"name": "Noe"}, "wa_id": "51977000001"},
        ],
        "messages": [news, _message("51977000001", "wamid.W2", "hi"), news],
        "statuses": [
            {"id": "wamid.UNKNOWN", "status": "read", "timestamp": "1760000000"},
        ],
    }
    delivery = {
        "object": "whatsapp_business_account",
        "entry": [{"id": "1", "changes": [{"field": "messages", "value": value}]}],
    }
    raw = jsonlib.dumps(delivery).encode()
    signature = "sha256=" + hmac.new(APP_SECRET.encode(), raw, hashlib.sha256).hexdigest()
    stored = w.ok(
        "POST",
        RECEIVING_PATH,
        channelId=channel["id"],
        content=raw,
        headers={"content-type": "application/json", "x-hub-signature-256": signature},
        auth=None,
        workspace=None,
    )
    assert stored == {"messages": 2, "statuses": 0}, stored

    # The conversation.
    convo = "/api/contact/{contactId}/messages"
    # Older than Meta's messages: the read receipt below is of wamid.W1, the last inbound.
    recorded = {
        "direction": "in",
        "text": "by the bot",
        "externalId": "bot-1",
        "createdAt": "2025-01-01T00:00:00Z",
    }
    first = w.ok("POST", convo + "/record", contactId=contact_id, json=recorded)
    w.ok("POST", convo + "/record", contactId=contact_id, json=recorded)  # the same again
    w.ok("POST", convo + "/record", contactId=contact_id, json={"direction": "out", "text": "ok"})
    page = w.ok("GET", convo, contactId=contact_id, params={"pageSize": "1"})
    w.ok("GET", convo, contactId=contact_id, params={"before": page["before"]})
    w.ok("POST", convo, contactId=contact_id, json={"text": "within the window"})
    template = {"name": "hello", "language": "en_US", "parameters": ["Ana"]}
    w.ok(
        "POST",
        convo,
        contactId=contact_id,
        json={"template": template, "replyToId": first["id"]},
    )
    w.ok("POST", convo + "/read", contactId=contact_id)  # a read receipt of wamid.W1
    # A message that has not failed (409), one without media (404): the lookups still run.
    w.call("POST", "/api/message/{messageId}/retry", messageId=first["id"])
    w.call("GET", "/api/message/{messageId}/media", messageId=first["id"])


def _message(sender: str, wamid: str, text: str) -> dict[str, Any]:
    return {
        "from": sender,
        "id": wamid,
        "timestamp": str(int(time.time())),
        "type": "text",
        "text": {"body": text},
    }


def people(w: Workload) -> None:
    """Contract J: users, a console session (the client keeps its cookie), keys, audit."""
    ws = w.api.ws
    password = "a long enough password"
    invited = w.ok(
        "POST",
        "/api/user",
        json={"email": unique_email(), "name": "Vi", "role": "viewer", "workspaceIds": [ws]},
    )
    user_id = invited["id"]
    w.ok("GET", "/api/user")
    w.ok("GET", "/api/user/{userId}", userId=user_id)
    w.ok("PUT", "/api/user/{userId}", userId=user_id, json={"role": "agent"})
    token = invited["inviteUrl"].rsplit("/", 1)[1]
    signed = w.ok(
        "POST",
        "/api/invitation/accept",
        json={"token": token, "password": password},
        auth=None,
        workspace=None,
    )
    csrf = {"x-csrf-token": signed["csrfToken"]}
    session = {"auth": None, "workspace": None}
    w.ok("GET", "/api/session", **session)
    w.ok("GET", "/api/me", **session)
    w.ok("GET", "/api/me")
    listed = w.ok("GET", "/api/session/list", **session)["data"]
    secret = w.ok("POST", "/api/me/2fa", headers=csrf, **session)["secret"]
    w.ok(
        "POST",
        "/api/me/2fa/enable",
        json={"code": pyotp.TOTP(secret).now()},
        headers=csrf,
        **session,
    )
    w.ok("DELETE", "/api/me/2fa", json={"password": password}, headers=csrf, **session)
    w.ok(
        "PUT",
        "/api/me/password",
        json={"currentPassword": password, "newPassword": password + "!"},
        headers=csrf,
        **session,
    )
    email = invited["user"]["email"]
    again = w.ok(
        "POST", "/api/session", json={"email": email, "password": password + "!"}, **session
    )
    w.ok(
        "DELETE",
        "/api/session/{sessionId}",
        sessionId=listed[0]["id"],
        headers={"x-csrf-token": again["csrfToken"]},
        **session,
    )
    w.ok("DELETE", "/api/session", headers={"x-csrf-token": again["csrfToken"]}, **session)
    w.ok("POST", "/api/user/{userId}/reset-link", userId=user_id)
    w.ok("DELETE", "/api/user/{userId}/sessions", userId=user_id)
    w.ok("DELETE", "/api/user/{userId}", userId=user_id)
    key = w.ok("POST", "/api/key", json={"name": "reader", "scopes": ["contacts:read"]})
    w.ok("GET", "/api/key")
    w.ok("DELETE", "/api/key/{keyId}", keyId=key["id"])
    assigned_only(w, password)
    page = w.ok("GET", "/api/audit", params={"pageSize": "2"})
    w.ok("GET", "/api/audit", params={"continuationToken": page["continuationToken"]})


def assigned_only(w: Workload, password: str) -> None:
    """J.2: an agent of a workspace that shows agents only their records."""
    ws = w.api.ws
    setup = "/api/workspace/{workspaceId}"
    w.ok("PUT", setup, workspaceId=ws, json={"agentsSeeOnlyAssigned": True})
    email = unique_email()
    invited = w.ok(
        "POST",
        "/api/user",
        json={"email": email, "name": "Ag", "role": "agent", "workspaceIds": [ws]},
    )
    w.ok("POST", setup + "/agents", workspaceId=ws, json={"name": "Ag", "email": email})
    signed = w.ok(
        "POST",
        "/api/invitation/accept",
        json={"token": invited["inviteUrl"].rsplit("/", 1)[1], "password": password},
        auth=None,
        workspace=None,
    )
    as_agent = {"auth": None, "headers": {"x-csrf-token": signed["csrfToken"]}}
    contact = w.ok(
        "POST", "/api/contact", json={"name": "Seen", "email": unique_email()}, **as_agent
    )["contact"]
    w.ok("GET", "/api/contact", **as_agent)
    w.ok("GET", "/api/contact/{contactId}", contactId=contact["id"], **as_agent)
    w.ok("GET", "/api/contact/searchByEmail", params={"email": contact["email"]}, **as_agent)
    w.ok("GET", "/api/contact/board", **as_agent)
    w.ok("GET", "/api/opportunity/board", **as_agent)
    w.ok("GET", "/api/opportunity/pipeline", **as_agent)
    w.ok("GET", "/api/events", params={"pageSize": "5"}, **as_agent)
    w.ok("GET", "/api/contact/{contactId}/history", contactId=contact["id"], **as_agent)
    w.ok("DELETE", "/api/session", **as_agent)
    w.ok("PUT", setup, workspaceId=ws, json={"agentsSeeOnlyAssigned": False})
