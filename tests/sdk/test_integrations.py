"""The client over contract E (upsert, merge, single delete, restore, the account's
workspaces, an opportunity's activities)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import pytest

from chatcrm.provisioning import NewAccount
from chatcrm_client import ApiError, Conflict, NotFound, ValidationFailed, WorkspaceNotChosen
from tests.servers import Server

pytestmark = pytest.mark.slow


@contextmanager
def server_side() -> Iterator[None]:
    """Skip (not fail) while the server in this checkout lacks the route: an unknown route
    is a 404 NOT_FOUND or a 405, never a domain error."""
    try:
        yield
    except ApiError as exc:
        if exc.error_code in ("NOT_FOUND", "METHOD_NOT_ALLOWED"):
            pytest.skip(f"the server has no route for this call yet: {exc}")
        raise


def test_upsert_merge_delete_and_restore(client: Any) -> None:
    with server_side():
        result = client.contacts.upsert_batch(
            [
                {
                    "name": "Ana",
                    "phone": "51 911 111 111",
                    "variables": [{"name": "a", "value": 1}],
                },
                {"name": "Bo", "email": "bo@example.com"},
                {"name": "", "email": "bad"},
            ]
        )
    assert (result.created, result.updated, result.failed) == (2, 0, 1)
    assert [r["status"] for r in result.results] == ["created", "created", "failed"]
    ana_id, bo_id = result.results[0]["id"], result.results[1]["id"]

    again = client.contacts.upsert_batch(
        [{"phone": "+51911111111", "name": "Ana", "lastname": "x"}],
        match_by="phone",
        dry_run=True,
    )
    assert again.results[0]["id"] == ana_id and client.contacts.get(ana_id).lastname == ""

    merged = client.contacts.merge(ana_id, [bo_id])
    assert merged.id == ana_id and merged.email == "bo@example.com"
    with pytest.raises(NotFound):
        client.contacts.get(bo_id)

    assert client.contacts.delete(ana_id) == [ana_id]
    with pytest.raises(NotFound):
        client.contacts.delete(ana_id)
    restored = client.contacts.restore(ana_id)
    assert restored.id == ana_id and client.contacts.get(ana_id).name == "Ana"
    with pytest.raises(ValidationFailed):
        client.contacts.merge(ana_id, [ana_id])
    client.contacts.delete(ana_id)
    client.contacts.create(name="Ana 3", phone="51911111111", email="y@example.com")
    with pytest.raises(Conflict) as taken:
        client.contacts.restore(ana_id)
    assert taken.value.error_code == "CONTACT_DELETED_CONFLICT"


def test_opportunity_restore_and_activities(client: Any) -> None:
    deal = client.opportunities.create(name="Deal", amount=10)
    client.opportunities.add_activity(deal.id, "met", "Meeting", "2025-04-07T10:00:00Z")
    client.opportunities.add_activity(deal.id, "called", "Calls")
    with server_side():
        activities = client.opportunities.activities(deal.id)
    assert [a.content for a in activities] == ["met", "called"]
    assert activities[0].date.isoformat() == "2025-04-07T10:00:00+00:00"
    client.opportunities.delete(deal.id)
    restored = client.opportunities.restore(deal.id)
    assert (restored.id, restored.status_id, restored.amount) == (deal.id, 1, Decimal(10))


def test_the_workspace_is_found_when_not_given(
    make_client: Callable[..., Any], sdk_server: Server, account: NewAccount
) -> None:
    client = make_client(sdk_server.base_url, account.api_key)
    with server_side():
        [workspace] = client.workspaces.list()
    assert workspace.id == account.workspace_id
    contact = client.contacts.create(name="Found", email="found@example.com")
    assert contact.workspace_id == account.workspace_id == client.workspace_id

    client.request("POST", "/api/workspace", json={"name": "Second"})
    fresh = make_client(sdk_server.base_url, account.api_key)
    with pytest.raises(WorkspaceNotChosen):
        fresh.contacts.get(contact.id)
