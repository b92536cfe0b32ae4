"""`client.users`, `client.keys` and `client.audit`: contract J.1, J.5 and J.6.

These are the account's, not a workspace's: the calls name no workspace, so a client of an
account with several workspaces needs no `workspace_id` for them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime

from chatcrm_client._describe import given, nothing, segment, token_pages, update_body
from chatcrm_client._engine import Answer, Call, Pages
from chatcrm_client._operations import M, Resource, listing, operation
from chatcrm_client._records import ApiKey, AuditEntry, User

USERS, KEYS = "/api/user", "/api/key"
Users_ = list[User]  # (inside the classes, `list` is the method)
Keys_ = list[ApiKey]


@dataclass(frozen=True)
class Invitation:
    """An invited user and the single-use link (7 days) that sets its password."""

    user: User
    # Not in repr: a logged Invitation would hand out the link that sets the password.
    invite_url: str = field(repr=False)


@dataclass(frozen=True)
class NewKey:
    """A created key and its secret, which the service shows this once."""

    key: ApiKey
    # Not in repr: a logged NewKey would hand out the secret.
    api_key: str = field(repr=False)


def _ids(values: Iterable[str] | None) -> list[str] | None:
    return None if values is None else [*values]


def _user(answer: Answer) -> User:
    return User(answer.data["user"])


def _users(answer: Answer) -> Users_:
    return [User(item) for item in answer.data["data"]]


def _invitation(answer: Answer) -> Invitation:
    return Invitation(User(answer.data["user"]), str(answer.data["inviteUrl"]))


def _key(answer: Answer) -> ApiKey:
    return ApiKey(answer.data["key"])


def _keys(answer: Answer) -> Keys_:
    return [ApiKey(item) for item in answer.data["data"]]


def _new_key(answer: Answer) -> NewKey:
    return NewKey(ApiKey(answer.data["key"]), str(answer.data["apiKey"]))


class Users(Resource[M]):
    @operation
    def invite(
        self, email: str, name: str, role: str, workspace_ids: Iterable[str] | None = None
    ) -> Call[Invitation]:
        """A new user, `invited` until it sets a password through `invite_url`. `role`:
        owner, admin, agent or viewer; agents and viewers need `workspace_ids`."""
        body = given(email=email, name=name, role=role, workspaceIds=_ids(workspace_ids))
        return Call("POST", USERS, _invitation, json=body, workspace="none")

    @operation
    def list(self) -> Call[Users_]:
        """The account's users, oldest first."""
        return Call("GET", USERS, _users, workspace="none")

    @operation
    def get(self, id: str) -> Call[User]:
        return Call("GET", f"{USERS}/{segment(id)}", _user, workspace="none")

    @operation
    def update(
        self,
        id: str,
        *,
        name: str | None = None,
        role: str | None = None,
        workspace_ids: Iterable[str] | None = None,
        status: str | None = None,
    ) -> Call[User]:
        """Change what is given; `status` "disabled" ends the user's sessions at once."""
        fields = given(name=name, role=role, workspaceIds=_ids(workspace_ids), status=status)
        body = update_body("user", fields)
        return Call("PUT", f"{USERS}/{segment(id)}", _user, json=body, workspace="none")

    @operation
    def remove(self, id: str) -> Call[None]:
        """Disable the user and end its sessions; the record stays (past events name it)."""
        return Call("DELETE", f"{USERS}/{segment(id)}", nothing, workspace="none")

    @operation
    def reset_link(self, id: str) -> Call[str]:
        """A single-use link (1 hour) to set a new password; earlier ones stop working."""
        path = f"{USERS}/{segment(id)}/reset-link"
        return Call("POST", path, lambda a: str(a.data["resetUrl"]), json={}, workspace="none")

    @operation
    def accept(self, token: str, password: str, *, name: str | None = None) -> Call[User]:
        """Set the password of an invited user (or a reset one) with the token of its link
        (`…/console/#invite/<token>`): the user, now `active`. The service also starts a
        console session, which a client of keys does not keep."""
        body = given(token=token, password=password, name=name)
        return Call("POST", "/api/invitation/accept", _user, json=body, workspace="none")

    @operation
    def end_sessions(self, id: str) -> Call[None]:
        """Sign the user out everywhere."""
        path = f"{USERS}/{segment(id)}/sessions"
        return Call("DELETE", path, nothing, workspace="none")


class Keys(Resource[M]):
    @operation
    def create(
        self,
        name: str,
        scopes: Iterable[str],
        *,
        workspace_ids: Iterable[str] | None = None,
        expires_at: datetime | str | None = None,
    ) -> Call[NewKey]:
        """A key with these scopes (`["*"]`: all the caller has), limited to
        `workspace_ids` when given, until `expires_at` when given."""
        body = given(
            name=name,
            scopes=[*scopes],
            workspaceIds=_ids(workspace_ids),
            expiresAt=expires_at,
        )
        return Call("POST", KEYS, _new_key, json=body, workspace="none")

    @operation
    def list(self) -> Call[Keys_]:
        """The account's keys, oldest first, revoked ones included; never a secret."""
        return Call("GET", KEYS, _keys, workspace="none")

    @operation
    def revoke(self, id: str) -> Call[ApiKey]:
        """The key is refused everywhere within a second; the key, with `revoked_at`."""
        return Call("DELETE", f"{KEYS}/{segment(id)}", _key, workspace="none")

    @operation
    def current(self) -> Call[ApiKey]:
        """The key this client calls with (`GET /api/me`)."""
        return Call("GET", "/api/me", _key, workspace="none")


class Audit(Resource[M]):
    @listing
    def list(self, page_size: int | None = None) -> Pages[AuditEntry]:
        """The account's audit log, newest first, the pages followed."""
        params = {} if page_size is None else {"pageSize": page_size}
        pages = token_pages(AuditEntry, "/api/audit", params)
        return replace(pages, call=replace(pages.call, workspace="none"))
