"""`client.users`, `client.keys` and `client.audit` against a real `chatcrm serve` (contract
J), sync and async alike."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chatcrm.provisioning import NewAccount
from chatcrm_client import (
    ApiKey,
    AuditEntry,
    BadRequest,
    Conflict,
    Forbidden,
    Invitation,
    NewKey,
    NotFound,
    Unauthorized,
    User,
    ValidationFailed,
    WorkspaceNotChosen,
)
from tests.sdk.shapes import assert_shape
from tests.servers import Server

pytestmark = pytest.mark.slow

UNKNOWN = "01a2170f-0000-7000-8000-000000000000"


def email(name: str) -> str:
    """An address no other test uses: e-mails are unique across the service."""
    return f"{name}-{uuid.uuid4().hex[:12]}@example.com"


def test_users_are_invited_changed_and_removed(client: Any, account: NewAccount) -> None:
    address = email("ana")
    invited = client.users.invite(address, "Ana", "agent", workspace_ids=[account.workspace_id])
    assert isinstance(invited, Invitation) and isinstance(invited.user, User)
    user = invited.user
    assert (user.email, user.name, user.role, user.status) == (address, "Ana", "agent", "invited")
    assert user.workspace_ids == [account.workspace_id] and user.two_factor_enabled is False
    assert user.last_sign_in_at is None and user.created_at.tzinfo is not None
    assert "/console/#invite/" in invited.invite_url
    assert_shape(user, "user")

    assert client.users.list() == [user]
    assert client.users.get(user.id) == user
    changed = client.users.update(user.id, name="Ana M", role="viewer")
    assert (changed.id, changed.name, changed.role) == (user.id, "Ana M", "viewer")
    assert "/console/#reset/" in client.users.reset_link(user.id)
    client.users.end_sessions(user.id)
    client.users.remove(user.id)
    assert client.users.get(user.id).status == "disabled"  # the record stays

    with pytest.raises(Conflict) as duplicate:
        client.users.invite(address.upper(), "Ana again", "viewer", [account.workspace_id])
    assert duplicate.value.error_code == "DUPLICATE_USER"
    with pytest.raises(NotFound) as missing:
        client.users.get(UNKNOWN)
    assert missing.value.error_code == "USER_NOT_FOUND"
    with pytest.raises(ValidationFailed) as invalid:
        client.users.invite(email("bo"), "Bo", "boss", [account.workspace_id])
    assert [e["field"] for e in invalid.value.errors] == ["role"]
    with pytest.raises(ValueError):
        client.users.update(user.id)  # nothing to change


def test_scoped_keys_are_limited_and_revoked(
    client: Any, make_client: Any, sdk_server: Server, account: NewAccount
) -> None:
    expires = datetime.now(UTC) + timedelta(days=1)
    made = client.keys.create(
        "reader", ["contacts:read"], workspace_ids=[account.workspace_id], expires_at=expires
    )
    assert isinstance(made, NewKey) and isinstance(made.key, ApiKey)
    key = made.key
    assert made.api_key.startswith("ccrm_") and made.api_key not in str(key.to_dict())
    assert (key.name, key.scopes, key.workspace_ids) == (
        "reader",
        ["contacts:read"],
        [account.workspace_id],
    )
    assert abs(key.expires_at - expires) < timedelta(seconds=1)
    assert key.revoked_at is None and key.created_by == account.key_id
    assert_shape(key, "key")
    assert [k.id for k in client.keys.list()] == [account.key_id, key.id]
    assert client.keys.current().id == account.key_id

    # The new key: its workspace looked up (the only one it may use), reads only.
    reader = make_client(sdk_server.base_url, made.api_key)
    assert reader.keys.current().id == key.id
    contact = client.contacts.create(name="Ana", email=email("ana"))
    assert reader.contacts.get(contact.id).name == "Ana"
    with pytest.raises(Forbidden) as refused:
        reader.contacts.create(name="Bo", email=email("bo"))
    assert refused.value.error_code == "PERMISSION_DENIED"
    assert refused.value.data == {"required": "contacts:write"}
    with pytest.raises(Forbidden):
        reader.keys.list()

    revoked = client.keys.revoke(key.id)
    assert revoked.id == key.id and isinstance(revoked.revoked_at, datetime)
    with pytest.raises(Unauthorized):
        reader.contacts.get(contact.id)
    with pytest.raises(NotFound):
        client.keys.revoke(UNKNOWN)
    with pytest.raises(ValidationFailed) as invalid:
        client.keys.create("bad", ["no:such"])
    assert [e["field"] for e in invalid.value.errors] == ["scopes"]


def test_the_audit_log_pages_newest_first(client: Any, account: NewAccount) -> None:
    invited = client.users.invite(email("cy"), "Cy", "admin")
    client.users.update(invited.user.id, role="agent", workspace_ids=[account.workspace_id])
    made = client.keys.create("temporary", ["*"])
    client.keys.revoke(made.key.id)

    entries = list(client.audit.list(page_size=3))  # two pages
    assert all(isinstance(e, AuditEntry) for e in entries)
    assert [e.action for e in entries] == [
        "key.revoked",
        "key.created",
        "user.updated",
        "user.invited",
    ]
    assert [e.target for e in entries] == [made.key.id, made.key.id, *[invited.user.id] * 2]
    assert {(e.actor["type"], e.actor["id"]) for e in entries} == {("key", account.key_id)}
    assert entries[0].at >= entries[-1].at and entries[0].user_agent.startswith("chatcrm-client/")
    assert_shape(entries[0], "auditEntry")
    assert list(client.audit.list()) == entries


def test_account_calls_need_no_workspace(
    client: Any, make_client: Any, sdk_server: Server, account: NewAccount
) -> None:
    """Users, keys and the audit log are the account's: a client of an account with two
    workspaces and none chosen still reaches them."""
    client.request("POST", "/api/workspace", json={"name": "Second"})
    unchosen = make_client(sdk_server.base_url, account.api_key)
    assert unchosen.users.list() == []
    assert [k.id for k in unchosen.keys.list()] == [account.key_id]
    assert list(unchosen.audit.list()) == []
    with pytest.raises(WorkspaceNotChosen):
        list(unchosen.contacts.list())


def test_a_new_key_and_an_invitation_keep_their_secrets_out_of_repr(
    client: Any, account: NewAccount
) -> None:
    """Logging what keys.create or users.invite returned must not hand out the secret."""
    made = client.keys.create("logged", ["contacts:read"])
    invited = client.users.invite(email("logged"), "Logged", "viewer", [account.workspace_id])
    assert made.api_key not in repr(made) and made.key.id in repr(made)
    assert invited.invite_url not in repr(invited) and invited.user.id in repr(invited)


def test_an_invited_user_accepts_with_the_token_of_its_link(
    client: Any, account: NewAccount
) -> None:
    """J.1's Accept: the token of the link, a password, and the user is active."""
    invited = client.users.invite(email("accepts"), "Accepts", "agent", [account.workspace_id])
    token = invited.invite_url.rsplit("/", 1)[1]
    user = client.users.accept(token, "a long enough password 1", name="Accepted")
    assert (user.id, user.status, user.name) == (invited.user.id, "active", "Accepted")
    with pytest.raises(BadRequest) as used:
        client.users.accept(token, "a long enough password 2")
    assert used.value.error_code == "INVALID_TOKEN"
