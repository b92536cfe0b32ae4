"""Tenancy, route by route: every route under /api is walked with three callers.

- a key of ANOTHER account naming the victim's workspace (header, query, body or path):
  403 FORBIDDEN, whatever else the request says;
- that other account in its OWN workspace naming the victim's records: 404 for an id,
  422 for a reference inside a body, and lists/searches that never show the victim;
- the victim's own key in a SECOND workspace of the same account: the same 404/422 for
  the first workspace's records, 403 when it names the first workspace beside its header.

After every walk the victim's workspace reads exactly as before (records, ETags, lists,
activities, workspace view). A route added to the app without a case here fails
`test_every_api_route_is_walked`.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import fastapi.routing
import httpx
import pytest
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from tests.client import Api, error, error_fields, ok_data, unique_email, unique_phone
from tests.conftest import new_account

# FastAPI >= 0.165 keeps included routers as nodes of app.routes and flattens them with
# this; older versions list the routes themselves.
iter_route_contexts = getattr(fastapi.routing, "iter_route_contexts", None)

# Stand-ins for the header of a request: the victim's workspace, or the caller's own one.
VICTIM = "<victim workspace>"
OWN = "<own workspace>"

LIST_OBTAINED = "List obtained successfully."
SEARCH_OBTAINED = "Successfully obtained list."
DELETED = "Contacts deleted successfully."
VALIDATION = "VALIDATION_ERROR"
NO_CONTACT = "CONTACT_NOT_FOUND"
NO_OPP = "OPPORTUNITY_NOT_FOUND"
NO_HOOK = "WEBHOOK_NOT_FOUND"
NO_MESSAGE = "MESSAGE_NOT_FOUND"
NO_CHANNEL = "CHANNEL_NOT_FOUND"


@dataclass
class World:
    victim: Api  # account A, workspace W1: the data that must stay untouched
    sibling: Api  # account A (same key), workspace W2
    stranger: Api  # account B, its own workspace
    secret: str  # a string inside every private value of the victim
    contact: dict[str, Any]
    contact2: dict[str, Any]
    opportunity: dict[str, Any]
    opportunity2: dict[str, Any]
    tag: dict[str, Any]
    agent: dict[str, Any]
    segmentation: dict[str, Any]
    contact_stage: str
    opportunity_stage: str
    phone: str
    contacts_token: str
    opportunities_token: str
    activities_token: str
    webhook: dict[str, Any]  # with its secret
    webhook_event: str  # a webhook.test event of the victim's endpoint
    deliveries_token: str
    # Conversations (contract K): a WhatsApp channel (as created, without its write-only
    # secrets), those secrets, and a message recorded on `contact`.
    channel: dict[str, Any]
    channel_secrets: dict[str, str]
    message: dict[str, Any]
    # People of the victim's account (contract J): an invited agent and a scoped key.
    people: dict[str, dict[str, Any]] = field(default_factory=dict)
    own: dict[str, dict[str, Any]] = field(default_factory=dict)  # per caller ws: records
    # Soft-deleted records of the victim (what a restore could bring back): kind → record.
    deleted: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The victim as the last test left it (`untouched`): one list, shared by every copy.
    seen: list[dict[str, Any]] = field(default_factory=list)

    @property
    def record_ids(self) -> set[str]:
        return {
            self.contact["id"],
            self.contact2["id"],
            self.opportunity["id"],
            self.opportunity2["id"],
        }

    @property
    def private_values(self) -> tuple[str, ...]:
        """Values no other caller may ever read (beside `secret`, in names and urls)."""
        return (
            self.phone,
            self.webhook["secret"],
            self.webhook_event,
            self.channel["verifyToken"],
            *self.channel_secrets.values(),
        )

    @property
    def setup_ids(self) -> set[str]:
        return {
            self.tag["id"],
            self.agent["id"],
            self.segmentation["id"],
            self.contact_stage,
            self.opportunity_stage,
        }


def channel_body(name: str, **extra: Any) -> dict[str, Any]:
    """A WhatsApp channel of a phoneNumberId of its own (any channel's is unique)."""
    return {
        "type": "whatsapp",
        "name": name,
        "phoneNumberId": str(uuid.uuid4().int)[:15],
        "accessToken": "EAAG-token",
        "appSecret": "app-secret",
        **extra,
    }


def second_workspace(api: Api, name: str) -> Api:
    data = ok_data(api.post("/api/workspace", json={"name": name}, workspace=None))
    other = Api(api.http, api.account)
    other.ws = data["id"]
    return other


def _token(api: Api, path: str, **params: str) -> str:
    token = ok_data(api.get(path, params={"pageSize": "1", **params}))["continuationToken"]
    assert isinstance(token, str) and token
    return token


@pytest.fixture(scope="module")
def victim_world(http: TestClient, database_url: str) -> World:
    """The victim's workspace and everything in it, built once per backend (most of the
    walk's cost). Every test reads it before and after its walk (`snapshot`) and fails if
    it changed, so a request that wrote to it fails its own test, not a later one. The
    callers, whose own workspaces the walk writes to, are the test's own (`world`)."""
    api = Api(http, new_account(database_url))
    secret = uuid.uuid4().hex[:12]
    tag = api.add_tag(name=f"tag-{secret}")
    agent = api.add_agent(name=f"Agent {secret}", email=f"agent.{secret}@example.com")
    segmentation = api.add_segmentation(name=f"seg-{secret}")
    contact_stage = api.add_stage("contact", name=f"cst-{secret}")["id"]
    opportunity_stage = api.add_stage("opportunity", name=f"ost-{secret}")["id"]
    phone = unique_phone()
    contact = api.create_contact(
        name=f"Victim {secret}",
        lastname=f"Lastname {secret}",
        email=f"victim.{secret}@example.com",
        internalWhatsappNumber=phone,
        tags=[tag["id"]],
        assignedAgentId=agent["id"],
        segmentationId=segmentation["id"],
        stageId=contact_stage,
        variables=[{"name": "secret", "value": secret}],
    )
    contact2 = api.create_contact(name=f"Second {secret}", email=f"second.{secret}@example.com")
    opportunity = api.create_opportunity(
        name=f"Deal {secret}",
        description=f"Description {secret}",
        contactId=contact["id"],
        assignedAgentId=agent["id"],
        segmentationId=segmentation["id"],
        stageId=opportunity_stage,
    )
    opportunity2 = api.create_opportunity(name=f"Deal two {secret}", amount=5)
    for n in (1, 2):
        ok_data(
            api.post(f"/api/contact/{contact['id']}/activities", json={"content": f"n{n} {secret}"})
        )
    ok_data(
        api.post(
            f"/api/opportunity/{opportunity['id']}/agent/activities",
            json={"content": f"call {secret}", "categoryType": "Calls"},
        )
    )
    deleted = {
        "contact": api.create_contact(name=f"Deleted {secret}"),
        "opportunity": api.create_opportunity(name=f"Deleted deal {secret}"),
    }
    for kind, record in deleted.items():
        ok_data(api.delete(f"/api/{kind}/{record['id']}"))
    # The shared app allows no private addresses: the default Graph API base URL (no
    # sender runs on it, so nothing is ever sent there).
    channel_secrets = {
        "accessToken": f"EAAG-{secret}-{uuid.uuid4().hex}",
        "appSecret": f"app-{secret}-{uuid.uuid4().hex}",
    }
    channel = ok_data(
        api.post("/api/channel", json=channel_body(f"Channel {secret}", **channel_secrets))
    )["channel"]
    # Recorded, not queued: no sender of another test can change it under the walk.
    message = ok_data(
        api.post(
            f"/api/contact/{contact['id']}/messages/record",
            json={"direction": "in", "text": f"Hello {secret}", "externalId": f"wamid.{secret}"},
        )
    )["message"]
    # The endpoint made next starts after the feed's end, so its log holds exactly its two
    # tests — once the world's events have reached the feed: a transaction of another test
    # running on the same server for over a second (the feed's gate, operations.md 4.10)
    # would otherwise leave some behind that end, and the endpoint would get them too.
    deadline = time.monotonic() + 30
    while message["id"] not in {
        e["recordId"] for e in ok_data(api.get("/api/events", params={"pageSize": "100"}))["events"]
    }:
        assert time.monotonic() < deadline, "the world's events did not reach the feed"
        time.sleep(0.05)
    webhook = ok_data(
        api.post(
            "/api/webhook",
            json={"url": f"https://hooks.example/{secret}", "description": f"hook {secret}"},
        )
    )["webhook"]
    webhook_event = ok_data(api.post(f"/api/webhook/{webhook['id']}/test"))["eventId"]
    ok_data(api.post(f"/api/webhook/{webhook['id']}/test"))
    w = World(
        victim=api,
        sibling=api,  # the callers are each test's own (`world`)
        stranger=api,
        secret=secret,
        contact=contact,
        contact2=contact2,
        opportunity=opportunity,
        opportunity2=opportunity2,
        tag=tag,
        agent=agent,
        segmentation=segmentation,
        contact_stage=contact_stage,
        opportunity_stage=opportunity_stage,
        phone=phone,
        contacts_token=_token(api, "/api/contact"),
        opportunities_token=_token(api, "/api/opportunity"),
        activities_token=_token(api, f"/api/contact/{contact['id']}/activities"),
        webhook=webhook,
        webhook_event=webhook_event,
        deliveries_token=_token(api, f"/api/webhook/{webhook['id']}/deliveries"),
        channel=channel,
        channel_secrets=channel_secrets,
        message=message,
    )
    w.deleted = deleted
    w.people = {
        "user": ok_data(
            api.post(
                "/api/user",
                json={
                    "email": f"member.{uuid.uuid4().hex[:8]}@example.com",
                    "name": "Member",
                    "role": "agent",
                    "workspaceIds": [api.ws],
                },
            )
        )["user"],
        "key": ok_data(api.post("/api/key", json={"name": "reader", "scopes": ["contacts:read"]}))[
            "key"
        ],
    }
    return w


@pytest.fixture
def world(victim_world: World, other_api: Api) -> World:
    """The victim's world with this test's callers: a second workspace of the victim's
    account, and another account, each with records of its own."""
    sibling = second_workspace(victim_world.victim, "Sibling")
    w = replace(victim_world, sibling=sibling, stranger=other_api, own={})
    for caller in (sibling, other_api):
        w.own[caller.ws] = {
            # With a WhatsApp number and a channel of its workspace: a send from there gets
            # past NO_CHANNEL to the references it names.
            "contact": caller.create_contact(name="Own", internalWhatsappNumber=unique_phone()),
            "channel": ok_data(caller.post("/api/channel", json=channel_body("Own")))["channel"],
            "opportunity": caller.create_opportunity(name="Own deal"),
            "webhook": ok_data(
                caller.post("/api/webhook", json={"url": "https://hooks.example/own"})
            )["webhook"],
        }
    return w


@contextmanager
def untouched(w: World) -> Iterator[None]:
    """The victim reads the same after the block as before it. "Before" is the read made
    after the previous test's walk (the first test reads it): only this module writes to
    the victim's workspace, one test at a time in a test process, so that read is what a
    new one would answer. A test that fails leaves no read behind: the next reads again."""
    before = w.seen.pop() if w.seen else snapshot(w)
    yield
    after = snapshot(w)
    w.seen.append(after)
    assert after == before


def snapshot(w: World) -> dict[str, Any]:
    """The victim workspace as its own key reads it: every record (with its ETag), both
    lists, the activity log and the workspace view."""
    v = w.victim
    out: dict[str, Any] = {"workspace": ok_data(v.get(f"/api/workspace/{v.ws}"))}
    for contact in (w.contact, w.contact2):
        response = v.get_contact(contact["id"])
        out[f"contact {contact['id']}"] = (ok_data(response), response.headers["etag"])
    for opp in (w.opportunity, w.opportunity2):
        response = v.get(f"/api/opportunity/{opp['id']}")
        out[f"opportunity {opp['id']}"] = (ok_data(response), response.headers["etag"])
    out["contacts"] = ok_data(v.get("/api/contact", params={"pageSize": "100"}))
    out["opportunities"] = ok_data(v.get("/api/opportunity", params={"pageSize": "100"}))
    out["activities"] = ok_data(
        v.get(f"/api/contact/{w.contact['id']}/activities", params={"pageSize": "100"})
    )
    out["by email"] = ok_data(
        v.get("/api/contact/searchByEmail", params={"email": w.contact["email"]})
    )
    out["by phone"] = ok_data(
        v.get("/api/contact/searchByCellphone", params={"cellphone": w.phone})
    )
    for kind, record in w.deleted.items():
        # still deleted, with nothing more in its history
        error(
            v.get(f"/api/{kind}/{record['id']}"), 404, NO_CONTACT if kind == "contact" else NO_OPP
        )
        out[f"deleted {kind}"] = ok_data(v.get(f"/api/{kind}/{record['id']}/history"))
    hook = w.webhook["id"]
    out["webhook"] = ok_data(v.get(f"/api/webhook/{hook}"))
    out["webhooks"] = ok_data(v.get("/api/webhook"))
    # Which deliveries, not their state: a dispatcher may be attempting them meanwhile.
    log = ok_data(v.get(f"/api/webhook/{hook}/deliveries"))["data"]
    out["deliveries"] = [d["eventId"] for d in log]
    assert [c["id"] for c in out["contacts"]["data"]] == [w.contact2["id"], w.contact["id"]]
    assert len(out["activities"]["data"]) == 2
    assert out["webhook"]["webhook"] == w.webhook
    assert [h["id"] for h in out["webhooks"]["data"]] == [hook]
    assert len(out["deliveries"]) == 2
    out["conversation"] = ok_data(v.get(f"/api/contact/{w.contact['id']}/messages"))
    out["channel"] = ok_data(v.get(f"/api/channel/{w.channel['id']}"))
    out["channels"] = ok_data(v.get("/api/channel"))
    assert out["conversation"]["messages"] == [w.message]
    assert out["channel"]["channel"] == w.channel
    assert out["channels"]["data"] == [w.channel]
    # Write-only, even to the victim's own key.
    for value in w.channel_secrets.values():
        assert value not in str(out), value
    return out


# --- requests and expectations --------------------------------------------------------


@dataclass(frozen=True)
class Req:
    """One request. `header` is VICTIM, OWN (the caller's workspace) or None (no header)."""

    label: str
    method: str
    path: str
    header: str | None
    params: dict[str, str] | None = None
    json: Any = None
    content: bytes | None = None


@dataclass(frozen=True)
class Expect:
    req: Req
    status: int
    code: str | None = None  # error code; None on success
    fields: tuple[str, ...] | None = None  # error fields, in any order
    message: str | None = None  # success message
    check: Callable[[Any], None] | None = None  # on the success data
    echoes: bool = False  # the answer repeats values the caller sent (which hold the secret)


def send(caller: Api, w: World, req: Req) -> httpx.Response:
    header = {VICTIM: w.victim.ws, OWN: caller.ws, None: None}[req.header]
    return caller.request(
        req.method,
        req.path,
        params=req.params,
        json=req.json,
        content=req.content,
        workspace=header,
    )


def assert_private(w: World, response: httpx.Response, label: str) -> None:
    """Nothing of the victim's private values shows in an answer to another caller."""
    for value in (w.secret, *w.private_values):
        assert value not in response.text, (label, response.text)


def expect(caller: Api, w: World, e: Expect) -> None:
    response = send(caller, w, e.req)
    label = f"{e.req.method} {e.req.path} [{e.req.label}]"
    try:
        if e.status == 200:
            data = ok_data(response, e.message)
            if e.check is not None:
                e.check(data)
        else:
            assert e.code is not None
            body = error(response, e.status, e.code)
            if e.status == 403:
                assert body["data"] is None
            if e.fields is not None:
                assert sorted(error_fields(body)) == sorted(e.fields), body
        if not e.echoes:
            assert_private(w, response, label)
    except AssertionError as exc:
        raise AssertionError(f"{label}: {exc}") from exc


# --- the routes -------------------------------------------------------------------------

Check = Callable[[Any], None]


def at(method: str, path: str) -> Callable[..., Req]:
    """Requests of one route: `r(label, header, params=None, json=None)`."""

    def make(label: str, header: str | None, params: Any = None, json: Any = None) -> Req:
        return Req(label, method, path, header, params, json)

    return make


def ok(req: Req, check: Check | None = None, message: str | None = None) -> Expect:
    return Expect(req, 200, message=message, check=check)


def err(req: Req, status: int, code: str, *fields: str) -> Expect:
    return Expect(req, status, code, fields or None)


@dataclass(frozen=True)
class RouteCase:
    # Requests that name the victim's workspace somewhere (header, query, body or path);
    # `me` is the caller, for requests that also name its own workspace.
    addressing: Callable[[World, Api], list[Req]]
    # Requests in the caller's own workspace naming the victim's records, with the answer.
    records: Callable[[World, Api], list[Expect]]


def empty_search(data: Any) -> None:
    assert data == {"contactId": "", "data": []}, data


def own_list(me: Api, w: World) -> Check:
    def check(data: Any) -> None:
        assert list(data) == ["workspaceId", "continuationToken", "data"]
        assert data["workspaceId"] == me.ws
        assert all(item["workspaceId"] == me.ws for item in data["data"]), data
        assert {item["id"] for item in data["data"]}.isdisjoint(w.record_ids), data

    return check


def empty_list(me: Api) -> Check:
    def check(data: Any) -> None:
        assert data == {"workspaceId": me.ws, "continuationToken": None, "data": []}, data

    return check


def own_workspace_view(me: Api, w: World) -> Check:
    def check(data: Any) -> None:
        assert data["id"] != w.victim.ws
        assert data["tags"] == [] and data["agents"] == [] and data["segmentations"] == []
        ids = {s["id"] for s in data["contactStages"] + data["opportunityStages"]}
        assert w.contact_stage not in ids and w.opportunity_stage not in ids

    return check


def list_contacts_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", "/api/contact"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
        r("header and query", VICTIM, {"workspaceId": ws}),
        r("the victim's token", VICTIM, {"continuationToken": w.contacts_token}),
    ]


def list_contacts_records(w: World, me: Api) -> list[Expect]:
    r, empty = at("GET", "/api/contact"), empty_list(me)
    return [
        ok(r("own list", OWN, {"pageSize": "100"}), own_list(me, w), LIST_OBTAINED),
        ok(r("own list, query", None, {"workspaceId": me.ws}), own_list(me, w)),
        ok(r("q name", OWN, {"q": w.secret}), empty),
        ok(r("q phone", OWN, {"q": w.phone}), empty),
        ok(r("stageId", OWN, {"stageId": w.contact_stage}), empty),
        ok(r("assignedAgentId", OWN, {"assignedAgentId": w.agent["id"]}), empty),
        ok(r("tag", OWN, {"tag": w.tag["id"]}), empty),
        err(
            r("victim's token", OWN, {"continuationToken": w.contacts_token}),
            400,
            "INVALID_CONTINUATION_TOKEN",
        ),
    ]


def create_contact_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", "/api/contact"), w.victim.ws
    body = {"name": "Intruder", "email": unique_email()}
    refs = {"stageId": w.contact_stage, "tags": [w.tag["id"]]}
    return [
        r("header", VICTIM, json=body),
        r("body", None, json={**body, "workspaceId": ws}),
        r("body beside own header", OWN, json={**body, "workspaceId": ws}),
        r("header, invalid body", VICTIM, json={}),
        r("header, victim's references", VICTIM, json={**body, **refs}),
    ]


def create_contact_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", "/api/contact")
    body = {"name": "Intruder", "email": unique_email()}
    refs = {
        "stageId": w.contact_stage,
        "segmentationId": w.segmentation["id"],
        "assignedAgentId": w.agent["id"],
        "tags": [w.tag["id"]],
    }
    fields = ("stageId", "segmentationId", "assignedAgentId", "tags[0]")
    return [
        err(r("victim's references", OWN, json={**body, **refs}), 422, VALIDATION, *fields),
        err(
            r("victim's tag as {id}", OWN, json={**body, "tags": [{"id": w.tag["id"]}]}),
            422,
            VALIDATION,
            "tags[0]",
        ),
        err(
            r("body", None, json={**body, "workspaceId": me.ws, "stageId": w.contact_stage}),
            422,
            VALIDATION,
            "stageId",
        ),
    ]


def update_contact_addressing(w: World, me: Api) -> list[Req]:
    r, ws, cid = at("PUT", "/api/contact"), w.victim.ws, w.contact["id"]
    rename = {"paramToUpdate": "name", "name": "Hacked"}
    return [
        r("header and query", VICTIM, {"id": cid, "workspaceId": ws}, rename),
        r("query beside own header", OWN, {"id": cid, "workspaceId": ws}, rename),
        r(
            "body beside own ones",
            OWN,
            {"id": cid, "workspaceId": me.ws},
            {**rename, "workspaceId": ws},
        ),
        r("invalid body", VICTIM, {"id": cid, "workspaceId": ws}, {"paramToUpdate": "nope"}),
    ]


def update_contact_records(w: World, me: Api) -> list[Expect]:
    r, cid = at("PUT", "/api/contact"), w.contact["id"]
    own = w.own[me.ws]["contact"]["id"]
    mine, theirs = {"id": own, "workspaceId": me.ws}, {"id": cid, "workspaceId": me.ws}
    two = {"paramToUpdate": "isRead,lastname", "isRead": True, "lastname": "X"}
    solved = {
        "paramToUpdate": "isSolved,solvedByAgentId",
        "isSolved": True,
        "solvedByAgentId": w.agent["id"],
    }
    references = [
        ("stageId", w.contact_stage, "stageId"),
        ("segmentationId", w.segmentation["id"], "segmentationId"),
        ("assignedAgentId", w.agent["id"], "assignedAgentId"),
        ("tags", [w.tag["id"]], "tags[0]"),
    ]
    return [
        err(
            r("victim's contact", OWN, theirs, {"paramToUpdate": "name", "name": "X"}),
            404,
            NO_CONTACT,
        ),
        err(r("victim's contact, two fields", OWN, theirs, two), 404, NO_CONTACT),
        *[
            err(
                r(f"victim's {name}", OWN, mine, {"paramToUpdate": name, name: value}),
                422,
                VALIDATION,
                field_,
            )
            for name, value, field_ in references
        ],
        err(r("victim's agent as solver", OWN, mine, solved), 422, VALIDATION, "solvedByAgentId"),
    ]


def get_contact_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", f"/api/contact/{w.contact['id']}"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
        at("GET", f"/api/contact/{uuid.uuid4()}")("unknown id", VICTIM),
    ]


def get_contact_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", f"/api/contact/{w.contact['id']}")
    return [
        err(r("header", OWN), 404, NO_CONTACT),
        err(r("query", None, {"workspaceId": me.ws}), 404, NO_CONTACT),
        err(at("GET", f"/api/contact/{w.contact2['id']}")("second", OWN), 404, NO_CONTACT),
    ]


def search_email_addressing(w: World, me: Api) -> list[Req]:
    r, ws, email = at("GET", "/api/contact/searchByEmail"), w.victim.ws, w.contact["email"]
    return [
        r("header", VICTIM, {"email": email}),
        r("query", None, {"email": email, "workspaceId": ws}),
        r("query beside own header", OWN, {"email": email, "workspaceId": ws}),
    ]


def search_email_records(w: World, me: Api) -> list[Expect]:
    r, email = at("GET", "/api/contact/searchByEmail"), w.contact["email"]
    return [
        ok(r("exact", OWN, {"email": email}), empty_search, SEARCH_OBTAINED),
        ok(r("other case", OWN, {"email": email.upper()}), empty_search),
        ok(r("second contact", OWN, {"email": w.contact2["email"]}), empty_search),
        ok(r("query", None, {"email": email, "workspaceId": me.ws}), empty_search),
    ]


def search_phone_addressing(w: World, me: Api) -> list[Req]:
    r, ws, phone = at("GET", "/api/contact/searchByCellphone"), w.victim.ws, w.phone
    return [
        r("header", VICTIM, {"cellphone": phone}),
        r("query", None, {"cellphone": phone, "workspaceId": ws}),
        r("query beside own header", OWN, {"cellphone": phone, "workspaceId": ws}),
    ]


def search_phone_records(w: World, me: Api) -> list[Expect]:
    r, phone = at("GET", "/api/contact/searchByCellphone"), w.phone
    formatted = f"+{phone[:2]} {phone[2:5]}-{phone[5:]}"
    return [
        ok(r("digits", OWN, {"cellphone": phone}), empty_search, SEARCH_OBTAINED),
        ok(r("formatted", OWN, {"cellphone": formatted}), empty_search),
        ok(r("query", None, {"cellphone": phone, "workspaceId": me.ws}), empty_search),
    ]


def delete_batch_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", "/api/contact/delete-batch"), w.victim.ws
    ids = [{"ids": w.contact["id"]}, {"ids": w.contact2["id"]}]
    return [
        r("header", VICTIM, json={"contactIds": ids}),
        r("body", None, json={"workspaceId": ws, "contactIds": ids}),
        r("body beside own header", OWN, json={"workspaceId": ws, "contactIds": ids}),
        r("header, invalid body", VICTIM, json={"contactIds": "all"}),
    ]


def delete_batch_records(w: World, me: Api) -> list[Expect]:
    r, cid, cid2 = at("POST", "/api/contact/delete-batch"), w.contact["id"], w.contact2["id"]
    own = w.own[me.ws]["contact"]["id"]

    def result(deleted: list[str], not_found: list[str]) -> Check:
        def check(data: Any) -> None:
            assert data == {"deletedIds": deleted, "notFoundIds": not_found}, data

        return check

    both = [{"ids": cid}, {"ids": cid2}]
    as_list = {"workspaceId": me.ws, "contactIds": [{"ids": [cid, cid2]}]}
    return [
        ok(r("victim's ids", OWN, json={"contactIds": both}), result([], [cid, cid2]), DELETED),
        ok(r("ids as a list, body", None, json=as_list), result([], [cid, cid2])),
        # With one of its own: only that one goes (last, so the cases above still see it).
        ok(
            r("mixed", OWN, json={"contactIds": [{"ids": cid}, {"ids": own}]}),
            result([own], [cid]),
        ),
    ]


def upsert_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", "/api/contact/upsert-batch"), w.victim.ws
    items = [{"name": "Intruder", "email": unique_email()}]
    return [
        r("header", VICTIM, json={"contacts": items}),
        r("body", None, json={"workspaceId": ws, "contacts": items}),
        r("body beside own header", OWN, json={"workspaceId": ws, "contacts": items}),
        r("header, dry run", VICTIM, json={"contacts": items, "dryRun": True}),
        r("header, invalid body", VICTIM, json={"contacts": "all"}),
    ]


def upsert_records(w: World, me: Api) -> list[Expect]:
    r, victim_id = at("POST", "/api/contact/upsert-batch"), w.contact["id"]
    refs = {
        "stageId": w.contact_stage,
        "segmentationId": w.segmentation["id"],
        "assignedAgentId": w.agent["id"],
        "tags": [w.tag["id"]],
    }

    def refused(data: Any) -> None:
        [result] = data["results"]
        assert result["status"] == "failed", data
        fields = {e["field"] for e in result["errors"]}
        assert fields == {"stageId", "segmentationId", "assignedAgentId", "tags[0]"}, data

    def not_theirs(data: Any) -> None:
        # The victim's phone and email match nothing here: the caller gets its own contact.
        assert all(r["id"] != victim_id and not r["errors"] for r in data["results"]), data

    item = {"name": "Intruder", "email": unique_email(), **refs}
    theirs = {"name": "Copy", "platformId": 2, "phone": w.phone, "email": w.contact["email"]}
    item_ws = {"name": "Intruder", "email": unique_email(), "workspaceId": w.victim.ws}

    def wrong_workspace(data: Any) -> None:
        assert data["results"][0]["errors"][0]["field"] == "workspaceId", data

    return [
        ok(r("victim's references", OWN, json={"contacts": [item]}), refused),
        ok(r("victim's phone and email", OWN, json={"contacts": [theirs]}), not_theirs),
        ok(
            r(
                "by email, dry run",
                OWN,
                json={"contacts": [theirs], "matchBy": "email", "dryRun": True},
            ),
            not_theirs,
        ),
        ok(r("victim's workspace in an item", OWN, json={"contacts": [item_ws]}), wrong_workspace),
    ]


def contact_activity_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", f"/api/contact/{w.contact['id']}/activities"), w.victim.ws
    return [
        r("header", VICTIM, json={"content": "x"}),
        r("body", None, json={"workspaceId": ws, "content": "x"}),
        r("body beside own header", OWN, json={"workspaceId": ws, "content": "x"}),
        r("header, invalid body", VICTIM, json={"content": ""}),
    ]


def contact_activity_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", f"/api/contact/{w.contact['id']}/activities")
    return [
        err(r("header", OWN, json={"content": "x"}), 404, NO_CONTACT),
        err(r("body", None, json={"workspaceId": me.ws, "content": "x"}), 404, NO_CONTACT),
    ]


def contact_activities_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", f"/api/contact/{w.contact['id']}/activities"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
        r("the victim's token", VICTIM, {"continuationToken": w.activities_token}),
    ]


def contact_activities_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", f"/api/contact/{w.contact['id']}/activities")
    own = at("GET", f"/api/contact/{w.own[me.ws]['contact']['id']}/activities")
    return [
        err(r("header", OWN), 404, NO_CONTACT),
        err(r("query", None, {"workspaceId": me.ws}), 404, NO_CONTACT),
        err(
            own("victim's token, own contact", OWN, {"continuationToken": w.activities_token}),
            400,
            "INVALID_CONTINUATION_TOKEN",
        ),
    ]


def list_opportunities_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", "/api/opportunity"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
        r("the victim's token", VICTIM, {"continuationToken": w.opportunities_token}),
    ]


def list_opportunities_records(w: World, me: Api) -> list[Expect]:
    r, empty = at("GET", "/api/opportunity"), empty_list(me)
    return [
        ok(r("own list", OWN, {"pageSize": "100"}), own_list(me, w), LIST_OBTAINED),
        ok(r("own list, query", None, {"workspaceId": me.ws}), own_list(me, w)),
        ok(r("q name", OWN, {"q": w.secret}), empty),
        # Codes restart in each workspace: the same code finds only the caller's own.
        ok(r("q code", OWN, {"q": w.opportunity["opportCode"]}), own_list(me, w)),
        ok(r("contactId", OWN, {"contactId": w.contact["id"]}), empty),
        ok(r("stageId", OWN, {"stageId": w.opportunity_stage}), empty),
        ok(r("assignedAgentId", OWN, {"assignedAgentId": w.agent["id"]}), empty),
        err(
            r("victim's token", OWN, {"continuationToken": w.opportunities_token}),
            400,
            "INVALID_CONTINUATION_TOKEN",
        ),
    ]


def create_opportunity_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", "/api/opportunity"), w.victim.ws
    body = {"name": "Intruder", "amount": 1}
    refs = {"contactId": w.contact["id"], "stageId": w.opportunity_stage}
    return [
        r("header", VICTIM, json=body),
        r("body", None, json={**body, "workspaceId": ws}),
        r("body beside own header", OWN, json={**body, "workspaceId": ws}),
        r("header, invalid body", VICTIM, json={"amount": -1}),
        r("header, victim's references", VICTIM, json={**body, **refs}),
    ]


def create_opportunity_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", "/api/opportunity")
    body = {"name": "Intruder", "amount": 1}
    refs = {
        "contactId": w.contact["id"],
        "stageId": w.opportunity_stage,
        "assignedAgentId": w.agent["id"],
        "segmentationId": w.segmentation["id"],
    }
    comercial = {**body, "workspaceId": me.ws, "assignedComercialId": w.agent["id"]}
    return [
        err(r("victim's references", OWN, json={**body, **refs}), 422, VALIDATION, *refs),
        err(r("assignedComercialId", None, json=comercial), 422, VALIDATION, "assignedComercialId"),
    ]


def update_opportunity_addressing(w: World, me: Api) -> list[Req]:
    r, ws, oid = at("PUT", "/api/opportunity"), w.victim.ws, w.opportunity["id"]
    rename = {"paramToUpdate": "name", "name": "Hacked"}
    return [
        r("header", VICTIM, {"id": oid}, rename),
        r("header and query", VICTIM, {"id": oid, "workspaceId": ws}, rename),
        r("query beside own header", OWN, {"id": oid, "workspaceId": ws}, rename),
        r("body beside own header", OWN, {"id": oid}, {**rename, "workspaceId": ws}),
        r("header, invalid body", VICTIM, {"id": oid}, {"name": "x"}),
    ]


def update_opportunity_records(w: World, me: Api) -> list[Expect]:
    r, oid = at("PUT", "/api/opportunity"), w.opportunity["id"]
    own = {"id": w.own[me.ws]["opportunity"]["id"]}
    won = {"paramToUpdate": "winLossStatus", "winLossStatus": 1}
    references = {
        "contactId": w.contact["id"],
        "stageId": w.opportunity_stage,
        "assignedAgentId": w.agent["id"],
        "segmentationId": w.segmentation["id"],
    }
    return [
        err(r("victim's", OWN, {"id": oid}, {"paramToUpdate": "amount", "amount": 1}), 404, NO_OPP),
        err(r("victim's, query", OWN, {"id": oid, "workspaceId": me.ws}, won), 404, NO_OPP),
        *[
            err(
                r(f"victim's {name}", OWN, own, {"paramToUpdate": name, name: value}),
                422,
                VALIDATION,
                name,
            )
            for name, value in references.items()
        ],
    ]


def get_opportunity_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", f"/api/opportunity/{w.opportunity['id']}"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
    ]


def get_opportunity_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", f"/api/opportunity/{w.opportunity['id']}")
    return [
        err(r("header", OWN), 404, NO_OPP),
        err(r("query", None, {"workspaceId": me.ws}), 404, NO_OPP),
    ]


def delete_opportunity_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("DELETE", f"/api/opportunity/{w.opportunity['id']}"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
    ]


def delete_opportunity_records(w: World, me: Api) -> list[Expect]:
    first = at("DELETE", f"/api/opportunity/{w.opportunity['id']}")
    second = at("DELETE", f"/api/opportunity/{w.opportunity2['id']}")
    return [
        err(first("header", OWN), 404, NO_OPP),
        err(first("query", None, {"workspaceId": me.ws}), 404, NO_OPP),
        err(second("header", OWN), 404, NO_OPP),
    ]


def activity(**extra: Any) -> dict[str, Any]:
    return {
        "content": "Called",
        "date": "2025-04-07T21:56:19.325443Z",
        "categoryType": "Calls",
        **extra,
    }


def opportunity_activity_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", f"/api/opportunity/{w.opportunity['id']}/agent/activities"), w.victim.ws
    return [
        r("header", VICTIM, json=activity()),
        r("body", None, json=activity(workspaceId=ws)),
        r("body beside own header", OWN, json=activity(workspaceId=ws)),
        r("header, invalid body", VICTIM, json=activity(categoryType="Fax")),
    ]


def opportunity_activity_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", f"/api/opportunity/{w.opportunity['id']}/agent/activities")
    return [
        err(r("header", OWN, json=activity()), 404, NO_OPP),
        err(r("body", None, json=activity(workspaceId=me.ws)), 404, NO_OPP),
    ]


def get_workspace_addressing(w: World, me: Api) -> list[Req]:
    r = at("GET", f"/api/workspace/{w.victim.ws}")
    return [r("path", None), r("path and header", VICTIM), r("path beside own header", OWN)]


def get_workspace_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", f"/api/workspace/{me.ws}")
    view = own_workspace_view(me, w)
    return [
        ok(r("own", None), view, "Workspace obtained successfully."),
        ok(r("own, header", OWN), view),
    ]


def update_workspace_addressing(w: World, me: Api) -> list[Req]:
    r = at("PUT", f"/api/workspace/{w.victim.ws}")
    body = {"agentsSeeOnlyAssigned": True}
    return [
        r("path", None, json=body),
        r("path and header", VICTIM, json=body),
        r("path beside own header", OWN, json=body),
        at("PUT", f"/api/workspace/{me.ws}")(
            "body", None, json={**body, "workspaceId": w.victim.ws}
        ),
    ]


def update_workspace_records(w: World, me: Api) -> list[Expect]:
    # Its own workspace, changed to what it already is: the victim's stays untouched.
    r = at("PUT", f"/api/workspace/{me.ws}")
    return [
        ok(
            r("own", None, json={"agentsSeeOnlyAssigned": False}),
            None,
            "Workspace updated successfully.",
        )
    ]


def create_workspace_addressing(w: World, me: Api) -> list[Req]:
    # A header or body workspaceId naming a workspace the key cannot use is refused as
    # everywhere else, never silently ignored.
    r = at("POST", "/api/workspace")
    return [
        r("header", VICTIM, json={"name": "Intruder"}),
        r("body", None, json={"name": "Intruder", "workspaceId": w.victim.ws}),
    ]


def create_workspace_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", "/api/workspace")
    view = own_workspace_view(me, w)
    return [
        ok(
            r("new workspace", None, json={"name": "Fresh"}),
            view,
            "Workspace created successfully.",
        )
    ]


def setup_case(kind: str, body: Callable[[World], dict[str, Any]], message: str) -> RouteCase:
    """POST /api/workspace/{workspaceId}/<kind>."""

    def addressing(w: World, me: Api) -> list[Req]:
        r = at("POST", f"/api/workspace/{w.victim.ws}/{kind}")
        own = at("POST", f"/api/workspace/{me.ws}/{kind}")
        return [
            r("path", None, json=body(w)),
            r("path and header", VICTIM, json=body(w)),
            r("path beside own header", OWN, json=body(w)),
            own(
                "body beside own path and header", OWN, json={**body(w), "workspaceId": w.victim.ws}
            ),
            r("path, invalid body", None, json={}),
        ]

    def records(w: World, me: Api) -> list[Expect]:
        def check(data: Any) -> None:
            assert data["id"] not in w.setup_ids, data

        # The victim's very names, in the caller's own workspace: a new item of its own
        # (the answer echoes the names the caller sent).
        r = at("POST", f"/api/workspace/{me.ws}/{kind}")
        return [replace(ok(r("victim's names", OWN, json=body(w)), check, message), echoes=True)]

    return RouteCase(addressing, records)


def _victim_event(w: World) -> str:
    events = ok_data(w.victim.get("/api/events", params={"pageSize": "1"}))["events"]
    return str(events[0]["id"])


def events_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", "/api/events"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
        r("the victim's cursor", VICTIM, {"after": _victim_event(w)}),
    ]


def events_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", "/api/events")

    def nothing_of_the_victim(data: Any) -> None:
        assert data["events"] == [] and data["workspaceId"] == me.ws, data

    return [
        err(r("victim's cursor", OWN, {"after": _victim_event(w)}), 400, "INVALID_CURSOR"),
        ok(r("victim's record", OWN, {"recordId": w.contact["id"]}), nothing_of_the_victim),
    ]


def history_case(kind: str, record: Callable[[World], dict[str, Any]], code: str) -> RouteCase:
    def path(w: World) -> str:
        return f"/api/{kind}/{record(w)['id']}/history"

    def addressing(w: World, me: Api) -> list[Req]:
        r, ws = at("GET", path(w)), w.victim.ws
        return [
            r("header", VICTIM),
            r("query", None, {"workspaceId": ws}),
            r("query beside own header", OWN, {"workspaceId": ws}),
        ]

    def records(w: World, me: Api) -> list[Expect]:
        r = at("GET", path(w))
        own = at("GET", f"/api/{kind}/{w.own[me.ws][kind]['id']}/history")
        return [
            err(r("header", OWN), 404, code),
            err(r("query", None, {"workspaceId": me.ws}), 404, code),
            err(own("victim's cursor", OWN, {"after": _victim_event(w)}), 400, "INVALID_CURSOR"),
        ]

    return RouteCase(addressing, records)


# --- webhooks -----------------------------------------------------------------------------


def hook_path(w: World, suffix: str = "") -> str:
    return f"/api/webhook/{w.webhook['id']}{suffix}"


def own_hook_path(w: World, me: Api, suffix: str = "") -> str:
    return f"/api/webhook/{w.own[me.ws]['webhook']['id']}{suffix}"


def create_webhook_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", "/api/webhook"), w.victim.ws
    body = {"url": "https://hooks.example/intruder"}
    return [
        r("header", VICTIM, json=body),
        r("body", None, json={**body, "workspaceId": ws}),
        r("body beside own header", OWN, json={**body, "workspaceId": ws}),
        r("header, invalid body", VICTIM, json={}),
    ]


def create_webhook_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", "/api/webhook")

    def check(data: Any) -> None:
        assert data["id"] != w.webhook["id"] and data["webhook"]["secret"] != w.webhook["secret"]

    # The victim's very URL, in the caller's own workspace: an endpoint of its own (the
    # answer echoes the URL the caller sent).
    body = {"url": w.webhook["url"]}
    return [replace(ok(r("victim's url", OWN, json=body), check, "Webhook created successfully."),
                    echoes=True)]  # fmt: skip


def list_webhooks_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", "/api/webhook"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
    ]


def list_webhooks_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", "/api/webhook")

    def check(data: Any) -> None:
        assert data == {"workspaceId": me.ws, "data": data["data"]}, data
        assert [h["id"] for h in data["data"]] == [w.own[me.ws]["webhook"]["id"]], data

    return [
        ok(r("own list", OWN), check, LIST_OBTAINED),
        ok(r("own list, query", None, {"workspaceId": me.ws}), check),
    ]


def webhook_by_id_addressing(method: str, suffix: str = "", json: Any = None) -> Any:
    """Requests naming the victim's workspace beside one of its endpoints."""

    def addressing(w: World, me: Api) -> list[Req]:
        r, ws = at(method, hook_path(w, suffix)), w.victim.ws
        return [
            r("header", VICTIM, json=json),
            r("query", None, {"workspaceId": ws}, json),
            r("query beside own header", OWN, {"workspaceId": ws}, json),
            at(method, f"/api/webhook/{uuid.uuid4()}{suffix}")("unknown id", VICTIM, json=json),
        ]

    return addressing


def webhook_by_id_records(method: str, suffix: str = "", json: Any = None) -> Any:
    def records(w: World, me: Api) -> list[Expect]:
        r = at(method, hook_path(w, suffix))
        return [
            err(r("header", OWN, json=json), 404, NO_HOOK),
            err(r("query", None, {"workspaceId": me.ws}, json), 404, NO_HOOK),
        ]

    return records


RENAME_HOOK = {"paramToUpdate": "description", "description": "Hacked"}


def update_webhook_addressing(w: World, me: Api) -> list[Req]:
    r = at("PUT", hook_path(w))
    return [
        *webhook_by_id_addressing("PUT", json=RENAME_HOOK)(w, me),
        r("body beside own header", OWN, json={**RENAME_HOOK, "workspaceId": w.victim.ws}),
        r("header, invalid body", VICTIM, json={"paramToUpdate": "secret"}),
    ]


def post_webhook_addressing(suffix: str, body: dict[str, Any]) -> Any:
    """POSTs under /api/webhook/{id} (rotate-secret, test, replay)."""

    def addressing(w: World, me: Api) -> list[Req]:
        r, ws = at("POST", hook_path(w, suffix)), w.victim.ws
        return [
            r("header", VICTIM, json=body),
            r("body", None, json={**body, "workspaceId": ws}),
            r("body beside own header", OWN, json={**body, "workspaceId": ws}),
            r("header, invalid body", VICTIM, json={"nope": 1}),
        ]

    return addressing


def post_webhook_records(suffix: str, body: dict[str, Any]) -> Any:
    def records(w: World, me: Api) -> list[Expect]:
        r = at("POST", hook_path(w, suffix))
        return [
            err(r("header", OWN, json=body), 404, NO_HOOK),
            err(r("body", None, json={**body, "workspaceId": me.ws}), 404, NO_HOOK),
        ]

    return records


def deliveries_addressing(w: World, me: Api) -> list[Req]:
    r = at("GET", hook_path(w, "/deliveries"))
    return [
        *webhook_by_id_addressing("GET", "/deliveries")(w, me),
        r("the victim's token", VICTIM, {"continuationToken": w.deliveries_token}),
    ]


def deliveries_records(w: World, me: Api) -> list[Expect]:
    own = at("GET", own_hook_path(w, me, "/deliveries"))
    return [
        *webhook_by_id_records("GET", "/deliveries")(w, me),
        err(
            own("victim's token, own webhook", OWN, {"continuationToken": w.deliveries_token}),
            400,
            "INVALID_CONTINUATION_TOKEN",
        ),
    ]


def replay_addressing(w: World, me: Api) -> list[Req]:
    return post_webhook_addressing("/replay", {"eventId": w.webhook_event})(w, me)


def replay_records(w: World, me: Api) -> list[Expect]:
    own = at("POST", own_hook_path(w, me, "/replay"))

    def only_own_events(data: Any) -> None:
        assert data["queued"] <= 2, data  # the caller's own contact and opportunity at most

    return [
        *post_webhook_records("/replay", {"eventId": w.webhook_event})(w, me),
        err(own("victim's event", OWN, json={"eventId": w.webhook_event}), 422, VALIDATION,
            "eventId"),
        ok(own("since", OWN, json={"since": "2000-01-01"}), only_own_events,
           "Events queued successfully."),
    ]  # fmt: skip


def delete_contact_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("DELETE", f"/api/contact/{w.contact['id']}"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
        at("DELETE", f"/api/contact/{uuid.uuid4()}")("unknown id", VICTIM),
    ]


def delete_contact_records(w: World, me: Api) -> list[Expect]:
    first = at("DELETE", f"/api/contact/{w.contact['id']}")
    second = at("DELETE", f"/api/contact/{w.contact2['id']}")
    return [
        err(first("header", OWN), 404, NO_CONTACT),
        err(first("query", None, {"workspaceId": me.ws}), 404, NO_CONTACT),
        err(second("header", OWN), 404, NO_CONTACT),
    ]


def restore_case(kind: str) -> RouteCase:
    missing = NO_CONTACT if kind == "contact" else NO_OPP

    def addressing(w: World, me: Api) -> list[Req]:
        r, ws = at("POST", f"/api/{kind}/{w.deleted[kind]['id']}/restore"), w.victim.ws
        return [
            r("header", VICTIM),
            r("query", None, {"workspaceId": ws}),
            r("query beside own header", OWN, {"workspaceId": ws}),
            r("body", None, json={"workspaceId": ws}),
            r("body beside own header", OWN, json={"workspaceId": ws}),
            r("header, invalid body", VICTIM, json={"name": "x"}),
        ]

    def records(w: World, me: Api) -> list[Expect]:
        deleted = at("POST", f"/api/{kind}/{w.deleted[kind]['id']}/restore")
        live = at("POST", f"/api/{kind}/{getattr(w, kind)['id']}/restore")
        return [
            err(deleted("deleted, header", OWN), 404, missing),
            err(deleted("deleted, query", None, {"workspaceId": me.ws}), 404, missing),
            err(deleted("deleted, body", None, json={"workspaceId": me.ws}), 404, missing),
            err(live("live", OWN), 404, missing),
        ]

    return RouteCase(addressing, records)


def merge_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", "/api/contact/merge"), w.victim.ws
    body = {"primaryId": w.contact["id"], "duplicateIds": [w.contact2["id"]]}
    return [
        r("header", VICTIM, json=body),
        r("body", None, json={**body, "workspaceId": ws}),
        r("body beside own header", OWN, json={**body, "workspaceId": ws}),
        r("header, invalid body", VICTIM, json={"primaryId": w.contact["id"]}),
    ]


def merge_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", "/api/contact/merge")
    own = w.own[me.ws]["contact"]["id"]
    theirs, deleted = w.contact["id"], w.deleted["contact"]["id"]
    return [
        err(r("victim's", OWN, json={"primaryId": theirs, "duplicateIds": [w.contact2["id"]]}),
            404, NO_CONTACT),
        err(r("victim's into own", OWN, json={"primaryId": own, "duplicateIds": [theirs]}),
            404, NO_CONTACT),
        err(r("own into victim's", None,
              json={"workspaceId": me.ws, "primaryId": theirs, "duplicateIds": [own]}),
            404, NO_CONTACT),
        err(r("victim's deleted", OWN, json={"primaryId": own, "duplicateIds": [deleted]}),
            404, NO_CONTACT),
    ]  # fmt: skip


def opportunity_activities_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", f"/api/opportunity/{w.opportunity['id']}/agent/activities"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
    ]


def opportunity_activities_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", f"/api/opportunity/{w.opportunity['id']}/agent/activities")
    own_id = w.own[me.ws]["opportunity"]["id"]
    own = at("GET", f"/api/opportunity/{own_id}/agent/activities")

    def empty(data: Any) -> None:
        assert data == {"opportunityId": own_id, "data": []}, data

    return [
        err(r("header", OWN), 404, NO_OPP),
        err(r("query", None, {"workspaceId": me.ws}), 404, NO_OPP),
        ok(own("own", OWN), empty, SEARCH_OBTAINED),
    ]


def list_workspaces_addressing(w: World, me: Api) -> list[Req]:
    return [at("GET", "/api/workspace")("header", VICTIM)]


def list_workspaces_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", "/api/workspace")

    def only_the_account(data: Any) -> None:
        ids = [item["id"] for item in data["data"]]
        assert me.ws in ids, data
        same_account = me.account.account_id == w.victim.account.account_id
        assert (w.victim.ws in ids) is same_account, data

    return [
        ok(r("no header", None), only_the_account, LIST_OBTAINED),
        ok(r("own header", OWN), only_the_account),
    ]


def board_case(kind: str) -> RouteCase:
    """GET /api/<kind>/board: the own board shows none of the victim's stages or records;
    the victim's stage is not a column of the own board (422)."""

    def addressing(w: World, me: Api) -> list[Req]:
        r, ws = at("GET", f"/api/{kind}/board"), w.victim.ws
        return [
            r("header", VICTIM),
            r("query", None, {"workspaceId": ws}),
            r("query beside own header", OWN, {"workspaceId": ws}),
        ]

    def records(w: World, me: Api) -> list[Expect]:
        r = at("GET", f"/api/{kind}/board")
        victim_stage = w.contact_stage if kind == "contact" else w.opportunity_stage

        def own_board(data: Any) -> None:
            assert data["workspaceId"] == me.ws, data
            assert victim_stage not in {c["stageId"] for c in data["columns"]}, data
            cards = [card["record"] for c in data["columns"] for card in c["cards"]]
            assert all(card["workspaceId"] == me.ws for card in cards), data
            assert {card["id"] for card in cards}.isdisjoint(w.record_ids), data

        def nothing_found(data: Any) -> None:
            assert all(c["count"] == 0 and c["cards"] == [] for c in data["columns"]), data

        return [
            ok(r("own board", OWN), own_board, SEARCH_OBTAINED),
            ok(r("q", OWN, {"q": w.secret}), nothing_found),
            err(r("victim's stage", OWN, {"stageId": victim_stage}), 422, "VALIDATION_ERROR"),
        ]

    return RouteCase(addressing, records)


def pipeline_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", "/api/opportunity/pipeline"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
    ]


def pipeline_records(w: World, me: Api) -> list[Expect]:
    def own(data: Any) -> None:
        assert data["workspaceId"] == me.ws
        assert w.opportunity_stage not in {s["stageId"] for s in data["stages"]}, data

    return [ok(at("GET", "/api/opportunity/pipeline")("own", OWN), own, SEARCH_OBTAINED)]


CASES: dict[tuple[str, str], RouteCase] = {
    ("GET", "/api/contact/board"): board_case("contact"),
    ("GET", "/api/opportunity/board"): board_case("opportunity"),
    ("GET", "/api/opportunity/pipeline"): RouteCase(pipeline_addressing, pipeline_records),
    ("GET", "/api/contact"): RouteCase(list_contacts_addressing, list_contacts_records),
    ("POST", "/api/contact"): RouteCase(create_contact_addressing, create_contact_records),
    ("PUT", "/api/contact"): RouteCase(update_contact_addressing, update_contact_records),
    ("GET", "/api/contact/{contactId}"): RouteCase(get_contact_addressing, get_contact_records),
    ("GET", "/api/contact/searchByEmail"): RouteCase(search_email_addressing, search_email_records),
    ("GET", "/api/contact/searchByCellphone"): RouteCase(
        search_phone_addressing, search_phone_records
    ),
    ("POST", "/api/contact/delete-batch"): RouteCase(delete_batch_addressing, delete_batch_records),
    ("POST", "/api/contact/upsert-batch"): RouteCase(upsert_addressing, upsert_records),
    ("DELETE", "/api/contact/{contactId}"): RouteCase(
        delete_contact_addressing, delete_contact_records
    ),
    ("POST", "/api/contact/{contactId}/restore"): restore_case("contact"),
    ("POST", "/api/opportunity/{opportunityId}/restore"): restore_case("opportunity"),
    ("GET", "/api/opportunity/{opportunityId}/agent/activities"): RouteCase(
        opportunity_activities_addressing, opportunity_activities_records
    ),
    ("GET", "/api/workspace"): RouteCase(list_workspaces_addressing, list_workspaces_records),
    ("POST", "/api/contact/merge"): RouteCase(merge_addressing, merge_records),
    ("POST", "/api/contact/{contactId}/activities"): RouteCase(
        contact_activity_addressing, contact_activity_records
    ),
    ("GET", "/api/contact/{contactId}/activities"): RouteCase(
        contact_activities_addressing, contact_activities_records
    ),
    ("GET", "/api/opportunity"): RouteCase(
        list_opportunities_addressing, list_opportunities_records
    ),
    ("POST", "/api/opportunity"): RouteCase(
        create_opportunity_addressing, create_opportunity_records
    ),
    ("PUT", "/api/opportunity"): RouteCase(
        update_opportunity_addressing, update_opportunity_records
    ),
    ("GET", "/api/opportunity/{opportunityId}"): RouteCase(
        get_opportunity_addressing, get_opportunity_records
    ),
    ("DELETE", "/api/opportunity/{opportunityId}"): RouteCase(
        delete_opportunity_addressing, delete_opportunity_records
    ),
    ("POST", "/api/opportunity/{opportunityId}/agent/activities"): RouteCase(
        opportunity_activity_addressing, opportunity_activity_records
    ),
    ("GET", "/api/workspace/{workspaceId}"): RouteCase(
        get_workspace_addressing, get_workspace_records
    ),
    ("GET", "/api/events"): RouteCase(events_addressing, events_records),
    ("GET", "/api/contact/{contactId}/history"): history_case(
        "contact", lambda w: w.contact, NO_CONTACT
    ),
    ("GET", "/api/opportunity/{opportunityId}/history"): history_case(
        "opportunity", lambda w: w.opportunity, NO_OPP
    ),
    ("POST", "/api/workspace"): RouteCase(create_workspace_addressing, create_workspace_records),
    ("PUT", "/api/workspace/{workspaceId}"): RouteCase(
        update_workspace_addressing, update_workspace_records
    ),
    ("POST", "/api/workspace/{workspaceId}/stages"): setup_case(
        "stages",
        lambda w: {"kind": "contact", "name": f"cst-{w.secret}"},
        "Stage created successfully.",
    ),
    ("POST", "/api/workspace/{workspaceId}/tags"): setup_case(
        "tags", lambda w: {"name": f"tag-{w.secret}", "color": None}, "Tag created successfully."
    ),
    ("POST", "/api/workspace/{workspaceId}/segmentations"): setup_case(
        "segmentations", lambda w: {"name": f"seg-{w.secret}"}, "Segmentation created successfully."
    ),
    ("POST", "/api/workspace/{workspaceId}/agents"): setup_case(
        "agents",
        lambda w: {"name": f"Agent {w.secret}", "email": f"agent.{w.secret}@example.com"},
        "Agent created successfully.",
    ),
    ("POST", "/api/webhook"): RouteCase(create_webhook_addressing, create_webhook_records),
    ("GET", "/api/webhook"): RouteCase(list_webhooks_addressing, list_webhooks_records),
    ("GET", "/api/webhook/{webhookId}"): RouteCase(
        webhook_by_id_addressing("GET"), webhook_by_id_records("GET")
    ),
    ("PUT", "/api/webhook/{webhookId}"): RouteCase(
        update_webhook_addressing, webhook_by_id_records("PUT", json=RENAME_HOOK)
    ),
    ("DELETE", "/api/webhook/{webhookId}"): RouteCase(
        webhook_by_id_addressing("DELETE"), webhook_by_id_records("DELETE")
    ),
    ("POST", "/api/webhook/{webhookId}/rotate-secret"): RouteCase(
        post_webhook_addressing("/rotate-secret", {}), post_webhook_records("/rotate-secret", {})
    ),
    ("POST", "/api/webhook/{webhookId}/test"): RouteCase(
        post_webhook_addressing("/test", {}), post_webhook_records("/test", {})
    ),
    ("GET", "/api/webhook/{webhookId}/deliveries"): RouteCase(
        deliveries_addressing, deliveries_records
    ),
    ("POST", "/api/webhook/{webhookId}/replay"): RouteCase(replay_addressing, replay_records),
}


# --- people (contract J): account-wide, so the sibling (same account) sees them ------------

NO_USER = "USER_NOT_FOUND"


def _same_account(me: Api, w: World) -> bool:
    return me.account.account_id == w.victim.account.account_id


def people_case(method: str, path: str, *, json: Any = None, reach: str | None = None) -> RouteCase:
    """An account-level route: naming the victim's workspace in the header is 403; the
    victim's user or key (`reach`: "user" or "key", in the path) is unknown to another
    account (404) — the sibling shares the account: only reads are tried there."""

    def target(w: World) -> str:
        if reach is None:
            return path
        return path.replace("{userId}", w.people["user"]["id"]).replace(
            "{keyId}", w.people["key"]["id"]
        )

    def addressing(w: World, me: Api) -> list[Req]:
        return [at(method, target(w))("header", VICTIM, None, json)]

    def records(w: World, me: Api) -> list[Expect]:
        if reach is None:
            return []
        r = at(method, target(w))
        if not _same_account(me, w):
            code = NO_USER if reach == "user" else "NOT_FOUND"
            return [err(r("another account's " + reach, OWN, None, json), 404, code)]
        if method == "GET":
            return [ok(r("the account's own " + reach, OWN))]
        return []

    return RouteCase(addressing, records)


def people_list_case(path: str, *, shows: Callable[[World], str]) -> RouteCase:
    """A list of the caller's account: another account's entries never in it."""

    def addressing(w: World, me: Api) -> list[Req]:
        return [at("GET", path)("header", VICTIM)]

    def records(w: World, me: Api) -> list[Expect]:
        def only_the_account(data: Any) -> None:
            listed = shows(w) in str(data)
            assert listed is _same_account(me, w), data

        return [ok(at("GET", path)("own header", OWN), only_the_account)]

    return RouteCase(addressing, records)


def _invite(w: World) -> dict[str, Any]:
    return {"email": unique_email(), "name": "New", "role": "viewer", "workspaceIds": [w.victim.ws]}


CASES.update(
    {
        ("POST", "/api/user"): RouteCase(
            lambda w, me: [at("POST", "/api/user")("header", VICTIM, None, _invite(w))],
            lambda w, me: (
                [
                    err(
                        at("POST", "/api/user")(
                            "another account's workspace", OWN, None, _invite(w)
                        ),
                        422,
                        "VALIDATION_ERROR",
                        "workspaceIds",
                    )
                ]
                if not _same_account(me, w)
                else []
            ),
        ),
        ("GET", "/api/user"): people_list_case("/api/user", shows=lambda w: w.people["user"]["id"]),
        ("GET", "/api/user/{userId}"): people_case("GET", "/api/user/{userId}", reach="user"),
        ("PUT", "/api/user/{userId}"): people_case(
            "PUT", "/api/user/{userId}", json={"name": "Renamed"}, reach="user"
        ),
        ("DELETE", "/api/user/{userId}"): people_case("DELETE", "/api/user/{userId}", reach="user"),
        ("POST", "/api/user/{userId}/reset-link"): people_case(
            "POST", "/api/user/{userId}/reset-link", json={}, reach="user"
        ),
        ("DELETE", "/api/user/{userId}/sessions"): people_case(
            "DELETE", "/api/user/{userId}/sessions", reach="user"
        ),
        ("GET", "/api/session"): people_case("GET", "/api/session"),
        ("DELETE", "/api/session"): people_case("DELETE", "/api/session"),
        ("GET", "/api/session/list"): people_case("GET", "/api/session/list"),
        ("DELETE", "/api/session/{sessionId}"): people_case(
            "DELETE", "/api/session/01a21a92-1522-7e60-a205-7019eb835a80"
        ),
        ("GET", "/api/me"): people_case("GET", "/api/me"),
        ("PUT", "/api/me/password"): people_case(
            "PUT", "/api/me/password", json={"currentPassword": "x", "newPassword": "y"}
        ),
        ("POST", "/api/me/2fa"): people_case("POST", "/api/me/2fa", json={}),
        ("POST", "/api/me/2fa/enable"): people_case(
            "POST", "/api/me/2fa/enable", json={"code": "123456"}
        ),
        ("DELETE", "/api/me/2fa"): people_case("DELETE", "/api/me/2fa", json={"password": "x"}),
        ("POST", "/api/key"): RouteCase(
            lambda w, me: [
                at("POST", "/api/key")("header", VICTIM, None, {"name": "k", "scopes": ["*"]})
            ],
            lambda w, me: (
                [
                    err(
                        at("POST", "/api/key")(
                            "another account's workspace",
                            OWN,
                            None,
                            {"name": "k", "scopes": ["*"], "workspaceIds": [w.victim.ws]},
                        ),
                        422,
                        "VALIDATION_ERROR",
                        "workspaceIds",
                    )
                ]
                if not _same_account(me, w)
                else []
            ),
        ),
        ("GET", "/api/key"): people_list_case("/api/key", shows=lambda w: w.people["key"]["id"]),
        ("DELETE", "/api/key/{keyId}"): people_case("DELETE", "/api/key/{keyId}", reach="key"),
        # The newest entry of the victim's account: the sibling's channel, made for this
        # test (the account's older entries are pages behind, after the earlier tests').
        ("GET", "/api/audit"): people_list_case(
            "/api/audit", shows=lambda w: w.own[w.sibling.ws]["channel"]["id"]
        ),
    }
)

# --- conversations (contract K): messages of a contact, channels of a workspace -----------

TEMPLATE = {"template": {"name": "hello", "language": "en_US", "parameters": []}}


def conversation_path(w: World, suffix: str = "") -> str:
    return f"/api/contact/{w.contact['id']}/messages{suffix}"


def own_conversation_path(w: World, me: Api, suffix: str = "") -> str:
    return f"/api/contact/{w.own[me.ws]['contact']['id']}/messages{suffix}"


def list_messages_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", conversation_path(w)), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
        r("header, before the victim's message", VICTIM, {"before": w.message["id"]}),
    ]


def list_messages_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", conversation_path(w))
    own_id = w.own[me.ws]["contact"]["id"]
    own = at("GET", own_conversation_path(w, me))

    def own_conversation(data: Any) -> None:
        assert data["contactId"] == own_id, data
        assert all(m["workspaceId"] == me.ws for m in data["messages"]), data
        assert w.message["id"] not in {m["id"] for m in data["messages"]}, data

    return [
        err(r("header", OWN), 404, NO_CONTACT),
        err(r("query", None, {"workspaceId": me.ws}), 404, NO_CONTACT),
        err(r("header, before the victim's message", OWN, {"before": w.message["id"]}), 404,
            NO_CONTACT),
        err(own("own contact, before the victim's message", OWN, {"before": w.message["id"]}),
            422, VALIDATION, "before"),
        ok(own("own contact", OWN), own_conversation, SEARCH_OBTAINED),
    ]  # fmt: skip


def send_message_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", conversation_path(w)), w.victim.ws
    text = {"text": "Intruder"}
    return [
        r("header", VICTIM, json=text),
        r("header, template", VICTIM, json=TEMPLATE),
        r("body", None, json={**text, "workspaceId": ws}),
        r("body beside own header", OWN, json={**text, "workspaceId": ws}),
        r("header, reply to the victim's message", VICTIM,
          json={**TEMPLATE, "replyToId": w.message["id"]}),
        r("header, invalid body", VICTIM, json={}),
    ]  # fmt: skip


def send_message_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", conversation_path(w))
    own = at("POST", own_conversation_path(w, me))
    reply = {**TEMPLATE, "replyToId": w.message["id"]}
    return [
        err(r("text", OWN, json={"text": "Intruder"}), 404, NO_CONTACT),
        err(r("template", OWN, json=TEMPLATE), 404, NO_CONTACT),
        err(r("body", None, json={**TEMPLATE, "workspaceId": me.ws}), 404, NO_CONTACT),
        # The caller's own contact and channel: the victim's message is no message of it.
        err(own("own contact, reply to the victim's message", OWN, json=reply), 422, VALIDATION,
            "replyToId"),
    ]  # fmt: skip


INBOUND = {"direction": "in", "text": "Intruder"}


def record_message_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", conversation_path(w, "/record")), w.victim.ws
    return [
        r("header", VICTIM, json=INBOUND),
        r("body", None, json={**INBOUND, "workspaceId": ws}),
        r("body beside own header", OWN, json={**INBOUND, "workspaceId": ws}),
        r("header, the victim's externalId", VICTIM,
          json={**INBOUND, "externalId": w.message["externalId"]}),
        r("header, invalid body", VICTIM, json={"direction": "sideways"}),
    ]  # fmt: skip


def record_message_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", conversation_path(w, "/record"))
    own = at("POST", own_conversation_path(w, me, "/record"))
    theirs = {**INBOUND, "externalId": w.message["externalId"]}

    def a_message_of_its_own(data: Any) -> None:
        # External ids are the workspace's: the victim's one finds nothing here.
        assert data["id"] != w.message["id"], data
        assert data["message"]["workspaceId"] == me.ws, data
        assert data["message"]["contactId"] == w.own[me.ws]["contact"]["id"], data
        assert data["message"]["text"] == "Intruder", data

    return [
        err(r("header", OWN, json=INBOUND), 404, NO_CONTACT),
        err(r("body", None, json={**INBOUND, "workspaceId": me.ws}), 404, NO_CONTACT),
        err(r("the victim's externalId", OWN, json=theirs), 404, NO_CONTACT),
        # The answer echoes the external id the caller sent (which holds the secret).
        replace(ok(own("own contact, the victim's externalId", OWN, json=theirs),
                   a_message_of_its_own, "Message recorded successfully."), echoes=True),
    ]  # fmt: skip


def mark_read_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", conversation_path(w, "/read")), w.victim.ws
    return [
        r("header", VICTIM),
        r("body", None, json={"workspaceId": ws}),
        r("body beside own header", OWN, json={"workspaceId": ws}),
        r("header, invalid body", VICTIM, json={"isRead": True}),
    ]


def mark_read_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", conversation_path(w, "/read"))
    return [
        err(r("header", OWN), 404, NO_CONTACT),
        err(r("body", None, json={"workspaceId": me.ws}), 404, NO_CONTACT),
    ]


def message_path(w: World, suffix: str) -> str:
    return f"/api/message/{w.message['id']}{suffix}"


def retry_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", message_path(w, "/retry")), w.victim.ws
    return [
        r("header", VICTIM),
        r("body", None, json={"workspaceId": ws}),
        r("body beside own header", OWN, json={"workspaceId": ws}),
        r("header, invalid body", VICTIM, json={"status": "queued"}),
        at("POST", f"/api/message/{uuid.uuid4()}/retry")("unknown id", VICTIM),
    ]


def retry_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", message_path(w, "/retry"))
    return [
        err(r("header", OWN), 404, NO_MESSAGE),
        err(r("body", None, json={"workspaceId": me.ws}), 404, NO_MESSAGE),
    ]


def media_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", message_path(w, "/media")), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
        at("GET", f"/api/message/{uuid.uuid4()}/media")("unknown id", VICTIM),
    ]


def media_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", message_path(w, "/media"))
    return [
        err(r("header", OWN), 404, NO_MESSAGE),
        err(r("query", None, {"workspaceId": me.ws}), 404, NO_MESSAGE),
    ]


def create_channel_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("POST", "/api/channel"), w.victim.ws
    return [
        r("header", VICTIM, json=channel_body("Intruder")),
        r("body", None, json={**channel_body("Intruder"), "workspaceId": ws}),
        r("body beside own header", OWN, json={**channel_body("Intruder"), "workspaceId": ws}),
        r("header, the victim's phoneNumberId", VICTIM,
          json=channel_body("Intruder", phoneNumberId=w.channel["phoneNumberId"])),
        r("header, invalid body", VICTIM, json={}),
    ]  # fmt: skip


def create_channel_records(w: World, me: Api) -> list[Expect]:
    r = at("POST", "/api/channel")
    # A phoneNumberId belongs to one channel of any workspace (K.2): refused, not taken.
    theirs = channel_body("Intruder", phoneNumberId=w.channel["phoneNumberId"])
    return [
        err(r("the victim's phoneNumberId", OWN, json=theirs), 409, "DUPLICATE_CHANNEL"),
        err(r("the victim's phoneNumberId, body", None, json={**theirs, "workspaceId": me.ws}),
            409, "DUPLICATE_CHANNEL"),
    ]  # fmt: skip


def list_channels_addressing(w: World, me: Api) -> list[Req]:
    r, ws = at("GET", "/api/channel"), w.victim.ws
    return [
        r("header", VICTIM),
        r("query", None, {"workspaceId": ws}),
        r("query beside own header", OWN, {"workspaceId": ws}),
    ]


def list_channels_records(w: World, me: Api) -> list[Expect]:
    r = at("GET", "/api/channel")

    def only_its_own(data: Any) -> None:
        assert [c["id"] for c in data["data"]] == [w.own[me.ws]["channel"]["id"]], data

    return [
        ok(r("own list", OWN), only_its_own, LIST_OBTAINED),
        ok(r("own list, query", None, {"workspaceId": me.ws}), only_its_own),
    ]


RENAME_CHANNEL = {"paramToUpdate": "name", "name": "Hacked"}
# What taking over the victim's channel would take: its secrets and where it calls.
TAKE_OVER = {"accessToken": "stolen", "appSecret": "stolen", "verifyToken": "stolen"}


def channel_by_id_addressing(method: str, json: Any = None) -> Any:
    def addressing(w: World, me: Api) -> list[Req]:
        r, ws = at(method, f"/api/channel/{w.channel['id']}"), w.victim.ws
        return [
            r("header", VICTIM, json=json),
            r("query", None, {"workspaceId": ws}, json),
            r("query beside own header", OWN, {"workspaceId": ws}, json),
            at(method, f"/api/channel/{uuid.uuid4()}")("unknown id", VICTIM, json=json),
        ]

    return addressing


def channel_by_id_records(method: str, json: Any = None) -> Any:
    def records(w: World, me: Api) -> list[Expect]:
        r = at(method, f"/api/channel/{w.channel['id']}")
        return [
            err(r("header", OWN, json=json), 404, NO_CHANNEL),
            err(r("query", None, {"workspaceId": me.ws}, json), 404, NO_CHANNEL),
        ]

    return records


def update_channel_addressing(w: World, me: Api) -> list[Req]:
    r = at("PUT", f"/api/channel/{w.channel['id']}")
    return [
        *channel_by_id_addressing("PUT", json=RENAME_CHANNEL)(w, me),
        r("header, its secrets", VICTIM, json=TAKE_OVER),
        r("body beside own header", OWN, json={**RENAME_CHANNEL, "workspaceId": w.victim.ws}),
        r("header, invalid body", VICTIM, json={"paramToUpdate": "phoneNumberId"}),
    ]


def update_channel_records(w: World, me: Api) -> list[Expect]:
    r = at("PUT", f"/api/channel/{w.channel['id']}")
    return [
        *channel_by_id_records("PUT", json=RENAME_CHANNEL)(w, me),
        err(r("its secrets", OWN, json=TAKE_OVER), 404, NO_CHANNEL),
        err(r("disabled", OWN, json={"enabled": False}), 404, NO_CHANNEL),
    ]


CASES.update(
    {
        ("GET", "/api/contact/{contactId}/messages"): RouteCase(
            list_messages_addressing, list_messages_records
        ),
        ("POST", "/api/contact/{contactId}/messages"): RouteCase(
            send_message_addressing, send_message_records
        ),
        ("POST", "/api/contact/{contactId}/messages/record"): RouteCase(
            record_message_addressing, record_message_records
        ),
        ("POST", "/api/contact/{contactId}/messages/read"): RouteCase(
            mark_read_addressing, mark_read_records
        ),
        ("POST", "/api/message/{messageId}/retry"): RouteCase(retry_addressing, retry_records),
        ("GET", "/api/message/{messageId}/media"): RouteCase(media_addressing, media_records),
        ("POST", "/api/channel"): RouteCase(create_channel_addressing, create_channel_records),
        ("GET", "/api/channel"): RouteCase(list_channels_addressing, list_channels_records),
        ("GET", "/api/channel/{channelId}"): RouteCase(
            channel_by_id_addressing("GET"), channel_by_id_records("GET")
        ),
        ("PUT", "/api/channel/{channelId}"): RouteCase(
            update_channel_addressing, update_channel_records
        ),
        ("DELETE", "/api/channel/{channelId}"): RouteCase(
            channel_by_id_addressing("DELETE"), channel_by_id_records("DELETE")
        ),
    }
)

# Routes with no caller, hence no workspace to name: signing in, accepting a link.
OPEN_ROUTES = {("POST", "/api/session"), ("POST", "/api/invitation/accept")}
ROUTE_IDS = [f"{method} {path}" for method, path in CASES]


def api_routes(settings: Settings) -> set[tuple[str, str]]:
    """Every (method, path template) the app serves under /api."""
    routes: list[Any] = list(create_app(settings).routes)
    if iter_route_contexts is not None:
        routes = list(iter_route_contexts(routes))
    out: set[tuple[str, str]] = set()
    for route in routes:
        path = getattr(route, "path", None)
        if not isinstance(path, str) or not path.startswith("/api"):
            continue
        for method in getattr(route, "methods", None) or ():
            if method != "HEAD":
                out.add((method, path))
    return out


def _case(route_id: str) -> RouteCase:
    method, path = route_id.split(" ", 1)
    return CASES[(method, path)]


# --- the tests --------------------------------------------------------------------------


def test_every_api_route_is_walked(settings: Settings) -> None:
    served = api_routes(settings)
    assert len(served) >= 21
    missing = sorted(served - set(CASES) - OPEN_ROUTES)
    assert not missing, f"routes without a tenancy case: {missing}"
    stale = sorted(set(CASES) - served)
    assert not stale, f"tenancy cases for routes the app does not serve: {stale}"


def walk(caller: Api, w: World, expectations: list[Expect]) -> None:
    """Send every request (none is skipped because an earlier one failed); fail with all."""
    failures = []
    for e in expectations:
        try:
            expect(caller, w, e)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)


def refused(requests: list[Req]) -> list[Expect]:
    return [Expect(req, 403, "FORBIDDEN") for req in requests]


@pytest.mark.parametrize("route_id", ROUTE_IDS)
def test_another_account_cannot_use_the_victim_workspace(world: World, route_id: str) -> None:
    """Naming the victim's workspace anywhere: 403. Naming its records from the attacker's
    own workspace: 404 / 422 / nothing listed. Either way the victim is untouched."""
    attacker = world.stranger
    requests = _case(route_id).addressing(world, attacker)
    assert requests
    with untouched(world):
        walk(attacker, world, refused(requests) + _case(route_id).records(world, attacker))


@pytest.mark.parametrize("route_id", ROUTE_IDS)
def test_a_second_workspace_of_the_account_cannot_reach_the_first(
    world: World, route_id: str
) -> None:
    """Same key, the header of another workspace: the first one's records are not there;
    naming the first workspace beside that header is a contradiction (403)."""
    sibling = world.sibling
    contradictions = [r for r in _case(route_id).addressing(world, sibling) if r.header == OWN]
    with untouched(world):
        walk(sibling, world, _case(route_id).records(world, sibling) + refused(contradictions))


BODY_ROUTES = [(method, path) for method, path in CASES if method in ("POST", "PUT")]


@pytest.mark.parametrize("route", BODY_ROUTES, ids=[f"{m} {p}" for m, p in BODY_ROUTES])
def test_a_foreign_workspace_header_is_refused_before_the_body_is_read(
    world: World, route: tuple[str, str]
) -> None:
    """Contract order: workspace rules (403) come before the body (400), so a foreign
    workspace is refused the same way whatever the body holds."""
    method, template = route
    v = world.victim
    path = (
        template.replace("{contactId}", world.contact["id"])
        .replace("{opportunityId}", world.opportunity["id"])
        .replace("{workspaceId}", v.ws)
        .replace("{webhookId}", world.webhook["id"])
        .replace("{messageId}", world.message["id"])
        .replace("{channelId}", world.channel["id"])
    )
    params: dict[str, str] | None = None
    if template == "/api/contact" and method == "PUT":
        params = {"id": world.contact["id"], "workspaceId": v.ws}
    elif template == "/api/opportunity" and method == "PUT":
        params = {"id": world.opportunity["id"]}
    requests = [
        Req(f"body {content!r}", method, path, VICTIM, params, content=content)
        for content in (b'{"name": ', b"[]", b"null")
    ]
    with untouched(world):
        walk(world.stranger, world, refused(requests))


def test_the_walk_is_not_vacuous(world: World) -> None:
    """The victim's key does reach everything the others were refused."""
    world.seen.clear()  # the victim's own requests below: the next walk reads it again
    v = world.victim
    assert (
        ok_data(v.get_contact(world.contact["id"]))["data"][0]["name"] == f"Victim {world.secret}"
    )
    assert ok_data(v.get(f"/api/opportunity/{world.opportunity['id']}"))["data"][0]["name"] == (
        f"Deal {world.secret}"
    )
    by_email = ok_data(
        v.get("/api/contact/searchByEmail", params={"email": world.contact["email"]})
    )
    assert by_email["contactId"] == world.contact["id"]
    by_phone = ok_data(v.get("/api/contact/searchByCellphone", params={"cellphone": world.phone}))
    assert by_phone["contactId"] == world.contact["id"]
    listed = ok_data(v.get("/api/contact", params={"q": world.secret}))
    assert {c["id"] for c in listed["data"]} == {world.contact["id"], world.contact2["id"]}
    page2 = ok_data(v.get("/api/contact", params={"continuationToken": world.contacts_token}))
    assert [c["id"] for c in page2["data"]] == [world.contact["id"]]
    # Same key, no header: the path names the first workspace, which the account owns.
    assert ok_data(world.sibling.get(f"/api/workspace/{v.ws}", workspace=None))["id"] == v.ws
    # ...and the sibling's header names its own workspace, not the first one.
    assert ok_data(world.sibling.get("/api/contact"))["workspaceId"] == world.sibling.ws
    hook = ok_data(v.get(f"/api/webhook/{world.webhook['id']}"))["webhook"]
    assert hook["secret"] == world.webhook["secret"]
    assert hook["description"] == f"hook {world.secret}"
    deliveries = ok_data(v.get(f"/api/webhook/{world.webhook['id']}/deliveries"))["data"]
    assert world.webhook_event in {d["eventId"] for d in deliveries}
    conversation = ok_data(v.get(f"/api/contact/{world.contact['id']}/messages"))["messages"]
    assert [m["text"] for m in conversation] == [f"Hello {world.secret}"]
    channel = ok_data(v.get(f"/api/channel/{world.channel['id']}"))["channel"]
    assert channel["name"] == f"Channel {world.secret}"
    assert channel["verifyToken"] == world.channel["verifyToken"]
    # The victim's message is a message of its own workspace: found, then refused (409).
    error(v.post(f"/api/message/{world.message['id']}/retry"), 409, "MESSAGE_NOT_FAILED")
    # ...and its contact gets past NO_CHANNEL with a template (not queued: 422 on replyToId).
    refused_reply = v.post(
        f"/api/contact/{world.contact['id']}/messages",
        json={**TEMPLATE, "replyToId": str(uuid.uuid4())},
    )
    error(refused_reply, 422, VALIDATION)


def test_lists_of_other_workspaces_never_hold_the_victim_records(world: World) -> None:
    """Every page of both lists of the other two workspaces, one record per page."""
    victim_ids = world.record_ids
    for caller in (world.stranger, world.sibling):
        for path in ("/api/contact", "/api/opportunity"):
            token: str | None = None
            seen = 0
            while True:
                params = {"pageSize": "1", **({"continuationToken": token} if token else {})}
                response = caller.get(path, params=params)
                data = ok_data(response, LIST_OBTAINED)
                assert_private(world, response, path)
                assert {item["id"] for item in data["data"]}.isdisjoint(victim_ids)
                seen += len(data["data"])
                token = data["continuationToken"]
                if token is None:
                    break
            assert seen >= 1  # each has its own contact and opportunity


def test_the_openapi_document_lists_the_same_routes(http: TestClient) -> None:
    """A second source for the route list: every documented /api operation is walked."""
    document = http.get("/openapi.json").json()
    documented = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        if path.startswith("/api")
        for method in operations
    }
    assert documented == set(CASES) | OPEN_ROUTES
