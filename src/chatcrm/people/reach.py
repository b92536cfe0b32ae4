"""Who may make or manage which user or key (contract J.1, J.2, J.5): roles, scopes and
the workspaces a caller reaches."""

from __future__ import annotations

import orjson

from chatcrm.auth import scopes
from chatcrm.auth.service import Principal
from chatcrm.core.errors import Forbidden
from chatcrm.db.database import Row
from chatcrm.people.errors import PermissionDenied


def workspace_list(row: Row) -> list[str]:
    ids: list[str] = orjson.loads(row["workspace_ids"])
    return ids


def sees_every_workspace(role: str) -> bool:
    return role in (scopes.OWNER, scopes.ADMIN)


def check_role_change(caller: Principal, *, touching: str | None, making: str | None) -> None:
    """An admin cannot make, change or remove an owner (J.2)."""
    if caller.role == scopes.OWNER:
        return
    if scopes.OWNER in (touching, making):
        raise PermissionDenied(
            scopes.USERS_MANAGE, "Only an owner can make, change or remove an owner."
        )


def check_holds(caller: Principal, role: str) -> None:
    """Nobody makes a user who holds a scope the caller lacks, nor takes one over (a reset
    link): a key with `users:manage` alone inviting an owner would own the account through
    that user (J.5's rule for keys, kept for the users a caller makes). 403
    PERMISSION_DENIED, naming the first scope of `role` the caller lacks."""
    for scope in scopes.ALL:
        if scope in scopes.ROLES[role] and scope not in caller.scopes:
            raise PermissionDenied(
                scope, f"Cannot give the role '{role}': it holds '{scope}', which the caller lacks."
            )


def check_reach(caller: Principal, role: str, workspace_ids: list[str]) -> None:
    """A caller limited to some workspaces (a key's `workspaceIds`, J.5) manages only users
    wholly inside them, never one who belongs to every workspace: else through that user
    it would reach the others (403 FORBIDDEN, as any workspace outside its list)."""
    allowed = caller.workspace_ids
    if allowed is None:
        return
    if sees_every_workspace(role):
        raise Forbidden(
            "This API key is limited to some workspaces: it cannot make or manage an owner "
            "or an admin, who belong to every workspace."
        )
    for workspace_id in workspace_ids:
        if workspace_id not in allowed:
            raise Forbidden(f"This API key cannot use workspace '{workspace_id}'.")


def check_may_manage(caller: Principal, row: Row) -> None:
    """Whether `caller` may change this user, end its sessions or give it a reset link
    (a reset link is the user's password: an admin giving one to an owner would own the
    account)."""
    check_role_change(caller, touching=row["role"], making=None)
    check_reach(caller, row["role"], workspace_list(row))


def reaches_key(caller: Principal, workspace_ids: list[str] | None) -> bool:
    """Whether `caller` may see and revoke a key of `workspace_ids` (None: every one). A
    caller limited to some workspaces reaches only keys wholly inside them: through the
    account's other keys (its owner's unlimited one) it would act on every workspace,
    revoking them all (a revoked key ends the keys made with it)."""
    allowed = caller.workspace_ids
    if allowed is None:
        return True
    return workspace_ids is not None and all(w in allowed for w in workspace_ids)


def check_key_reach(caller: Principal, workspace_ids: list[str] | None) -> None:
    if not reaches_key(caller, workspace_ids):
        raise Forbidden(
            "This API key is limited to some workspaces: it cannot manage a key that "
            "reaches others."
        )
