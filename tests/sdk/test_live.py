"""The client against a real `chatcrm serve` (SQLite and PostgreSQL), sync and async alike:
records, pages, searches, errors, conditional updates, events and workspaces."""

from __future__ import annotations

import json
import threading
import time
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest

from chatcrm.provisioning import NewAccount
from chatcrm_client import (
    BadRequest,
    Conflict,
    Contact,
    Forbidden,
    NotFound,
    Opportunity,
    PreconditionFailed,
    Unauthorized,
    ValidationFailed,
)
from tests.servers import Server

pytestmark = pytest.mark.slow


def raw(server: Server, account: NewAccount, path: str, **params: Any) -> Any:
    """The envelope's data of a GET, read with plain httpx (what to_dict must give back)."""
    response = httpx.get(
        server.base_url + path,
        params=params,
        headers={
            "authorization": f"Bearer {account.api_key}",
            "x-workspace-id": account.workspace_id,
        },
    )
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_contact_records_round_trip(client: Any, sdk_server: Server, account: NewAccount) -> None:
    tag = client.request("POST", "/api/workspace/{workspace}/tags", json={"name": "vip"})
    created = client.contacts.create(
        name="Ana",
        lastname="Pérez",
        email="ana@example.com",
        phone="+51 987-654-321",  # an alias of internalWhatsappNumber
        last_message="hola",  # snake_case
        isBotEnabled=False,  # wire name
        tags=[tag["id"]],
        variables=[{"name": "plan", "value": "gold"}, {"name": "score", "value": 4.5}],
    )
    assert isinstance(created, Contact)
    assert created.internal_whatsapp_number == "51987654321"
    assert (created.last_message, created.is_bot_enabled) == ("hola", False)
    assert created.variables == {"plan": "gold", "score": Decimal("4.5")}
    assert created.creation_date.tzinfo is not None
    assert abs(created.creation_date - datetime.now(UTC)).total_seconds() < 60
    [assigned] = created.tags
    assert (assigned.id, assigned.name) == (tag["id"], "vip")
    assert isinstance(assigned.assignment_date, datetime)

    got = client.contacts.get(created.id)
    wire = raw(sdk_server, account, f"/api/contact/{created.id}")["data"][0]
    assert got.to_dict() == wire and list(got.to_dict()) == list(wire)
    assert got.etag and got.name == "Ana"

    updated = client.contacts.update(created.id, if_match=got.etag, is_solved=True, name="Ana M")
    assert (updated.name, updated.is_solved) == ("Ana M", True)
    assert isinstance(updated.solved_date, datetime)
    assert updated.etag != got.etag
    with pytest.raises(PreconditionFailed) as stale:
        client.contacts.update(created.id, if_match=got.etag, name="lost")
    assert stale.value.status == 412 and stale.value.error_code == "PRECONDITION_FAILED"
    assert client.contacts.get(created.id).name == "Ana M"

    assert client.contacts.search_by_email("ANA@example.com").id == created.id
    assert client.contacts.search_by_phone("+51 987 654 321").id == created.id
    assert client.contacts.search_by_email("nobody@example.com") is None

    client.contacts.add_activity(created.id, "called back")
    [activity] = list(client.contacts.activities(created.id))
    assert activity.content == "called back" and isinstance(activity.date, datetime)
    history = [e.type for e in client.contacts.history(created.id)]
    assert history == ["contact.created", "contact.updated", "contact.activity.created"]

    # What was read can be sent back as it is: tags (records), variables (a dict).
    full = client.contacts.list(shape="full")
    [mine] = [c for c in full if c.id == created.id]
    again = client.contacts.update(created.id, tags=got.tags, variables=mine.variables)
    assert [t.id for t in again.tags] == [tag["id"]]
    assert again.tags[0].assignment_date == assigned.assignment_date  # kept: nothing changed
    assert again.variables == {"plan": "gold", "score": Decimal("4.5")}


def test_lists_follow_every_page(client: Any, sdk_server: Server, account: NewAccount) -> None:
    workspace = client.workspaces.get()
    first, second = (s.id for s in workspace.contact_stages[:2])
    ids = [
        client.contacts.create(name=f"Page {i}", email=f"p{i}@example.com", stage_id=stage).id
        for i, stage in enumerate([first, second] * 4)
    ]
    listed = [c.id for c in client.contacts.list(page_size=3)]
    assert listed == ids[::-1]  # newest first, each once, over 3 pages
    assert [c.id for c in client.contacts.list(stage_id=second, pageSize=2)] == ids[1::2][::-1]
    assert [c.id for c in client.contacts.list(q="p5@")] == [ids[5]]
    [full] = client.contacts.list(shape="full", q="p5@")
    assert (full.variables, full.internal_whatsapp_number) == ({}, "")
    [short] = client.contacts.list(q="p5@")
    assert "variables" not in short and full.to_dict().keys() > short.to_dict().keys()

    assert sorted(client.contacts.delete(ids[0], ids[1], ids[2], "unknown")) == sorted(ids[:3])
    assert len(list(client.contacts.list())) == 5
    with pytest.raises(NotFound):
        client.contacts.get(ids[0])


def test_opportunities_keep_money_exact(
    client: Any, sdk_server: Server, account: NewAccount
) -> None:
    contact = client.contacts.create(name="Buyer", email="buyer@example.com")
    created = client.opportunities.create(
        name="Deal", amount=Decimal("1234567.8901"), contact_id=contact.id, creation_type_id=2
    )
    assert created.creation_type_id == 2
    assert isinstance(created, Opportunity)
    assert created.amount == Decimal("1234567.8901") == created.final_amount
    assert created.opport_code.startswith("OPP-") and created.contact_id == contact.id
    updated = client.opportunities.update(created.id, win_loss_status=1, amount="0.1")
    assert (updated.amount, updated.win_loss_status) == (Decimal("0.1"), 1)
    assert isinstance(updated.win_loss_date, datetime)

    client.opportunities.add_activity(created.id, "intro call", "Calls")
    got = client.opportunities.get(created.id)
    [activity] = got.activities
    assert (activity.category_type, activity.content) == ("Calls", "intro call")
    wire = raw(sdk_server, account, f"/api/opportunity/{created.id}")["data"][0]
    assert got.to_dict() == wire and list(got.to_dict()) == list(wire)
    assert [o.id for o in client.opportunities.list()] == [created.id]

    # An amount a float would change (16 significant digits) stays exact in to_dict(),
    # where every other number is as json.loads gives it (a float json.dumps takes).
    big = client.opportunities.update(created.id, amount="622051690711.6507")
    assert big.to_dict()["amount"] == Decimal("622051690711.6507")
    assert json.loads(json.dumps(got.to_dict())) == wire

    client.opportunities.delete(created.id)
    with pytest.raises(NotFound) as missing:
        client.opportunities.get(created.id)
    assert missing.value.error_code == "OPPORTUNITY_NOT_FOUND"
    types = [e.type for e in client.opportunities.history(created.id)]
    assert types[0] == "opportunity.created" and types[-1] == "opportunity.deleted"


def test_errors_are_raised_as_their_classes(
    client: Any, make_client: Any, sdk_server: Server, account: NewAccount
) -> None:
    with pytest.raises(NotFound) as missing:
        client.contacts.get("01a2170f-0000-7000-8000-000000000000")
    assert missing.value.error_code == "CONTACT_NOT_FOUND" and missing.value.request_id

    with pytest.raises(ValidationFailed) as invalid:
        client.contacts.create(name="X", email="not an email")
    assert invalid.value.status == 422
    assert [e["field"] for e in invalid.value.errors] == ["email"]

    first = client.contacts.create(name="Dup", email="dup@example.com")
    with pytest.raises(Conflict) as duplicate:
        client.contacts.create(name="Dup 2", email="DUP@example.com")
    assert duplicate.value.data["existingId"] == first.id

    with pytest.raises(BadRequest):
        list(client.contacts.list(no_such_filter=1))
    with pytest.raises(Unauthorized):
        make_client(sdk_server.base_url, "ccrm_wrong", account.workspace_id).contacts.get(first.id)
    other = "01a2170f-0000-7000-8000-000000000001"
    with pytest.raises(Forbidden):
        make_client(sdk_server.base_url, account.api_key, other).contacts.get(first.id)


def test_events_list_ends_and_stream_waits(client: Any, account: NewAccount) -> None:
    contact = client.contacts.create(name="Eve", email="eve@example.com")
    client.contacts.update(contact.id, name="Eve 2")
    events = events_once_settled(client, 2)
    assert [e.type for e in events] == ["contact.created", "contact.updated"]
    assert events[1].changed == ["name"] and events[1].record.name == "Eve 2"
    assert isinstance(events[0].created_at, datetime)
    assert list(client.events.list(after=events[0].id)) == events[1:]
    assert list(client.events.list(types=["opportunity.*"])) == []

    # The stream waits at the end of the feed and yields the next event as it commits.
    stream = client.events.stream(after=events[-1].id, wait=10)
    timer = threading.Timer(0.5, lambda: client_for_thread(client, contact.id))
    started = time.monotonic()
    timer.start()
    try:
        arrived = next(iter(stream))
    finally:
        timer.join()
    assert arrived.type == "contact.updated" and arrived.record_id == contact.id
    assert time.monotonic() - started >= 0.4


def events_once_settled(client: Any, count: int) -> list[Any]:
    """The feed's events once `count` are shown. An event is shown once every writing
    transaction older than it has ended on the whole PostgreSQL server, and a read waits
    for those only up to a second: the no-gap tests, on the other test process, hold one
    open longer on purpose."""
    deadline = time.monotonic() + 15
    while True:
        events = list(client.events.list())
        if len(events) >= count or time.monotonic() > deadline:
            return events
        time.sleep(0.1)


def client_for_thread(client: Any, contact_id: str) -> None:
    """A change made from another thread, with a client of its own (an async client's
    loop is busy with the stream)."""
    from chatcrm_client import Client

    engine = (client._target if hasattr(client, "_target") else client)._engine
    with Client(engine.base_url, engine.api_key, engine.workspace_id) as other:
        other.contacts.update(contact_id, name="Eve 3")


def test_workspaces_and_raw_requests(
    client: Any, make_client: Any, sdk_server: Server, account: NewAccount
) -> None:
    workspace = client.workspaces.get()
    assert workspace.id == account.workspace_id
    assert [s.order for s in workspace.opportunity_stages] == sorted(
        s.order for s in workspace.opportunity_stages
    )
    agent = client.request(
        "POST", "/api/workspace/{workspace}/agents", json={"name": "Bo", "email": "bo@x.com"}
    )
    contact = client.contacts.create(name="Cy", email="cy@x.com", assigned_agent_id=agent["id"])
    assert contact.assigned_agent_name == "Bo"
    page = client.request("GET", "/api/contact", params={"pageSize": 1})
    assert [c["id"] for c in page["data"]] == [contact.id]


def test_workspace_update_and_phones_read_in_its_country(
    client: Any, sdk_server: Server, account: NewAccount
) -> None:
    assert client.workspaces.get().default_country is None
    updated = client.workspaces.update(default_country="pe")
    assert updated.default_country == "PE" and updated.id == account.workspace_id
    contact = client.contacts.create(name="Ana", platform_id=2, phone="922 333 444")
    assert contact.internal_whatsapp_number == "51922333444"
    assert client.contacts.search_by_phone("+51 (0) 922 333 444").id == contact.id
    assert client.workspaces.update(default_country=None).default_country is None
