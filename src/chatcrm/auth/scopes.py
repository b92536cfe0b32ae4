"""Permissions as named scopes (contract J.2): what each role holds, and the one table of
what every operation requires. The gate (api/routing.py), `docs/api.md` and the OpenAPI
document (each operation's security requirement) all read `ROUTE_SCOPES`; an operation
missing from it cannot be served (the app refuses to start) and fails the scope walk test.
"""

from __future__ import annotations

from collections.abc import Iterable

CONTACTS_READ = "contacts:read"
CONTACTS_WRITE = "contacts:write"
CONTACTS_DELETE = "contacts:delete"
OPPORTUNITIES_READ = "opportunities:read"
OPPORTUNITIES_WRITE = "opportunities:write"
OPPORTUNITIES_DELETE = "opportunities:delete"
MESSAGES_READ = "messages:read"
MESSAGES_WRITE = "messages:write"
EVENTS_READ = "events:read"
WORKSPACE_MANAGE = "workspace:manage"
WEBHOOKS_MANAGE = "webhooks:manage"
USERS_MANAGE = "users:manage"
KEYS_MANAGE = "keys:manage"
AUDIT_READ = "audit:read"

READS = (CONTACTS_READ, OPPORTUNITIES_READ, MESSAGES_READ, EVENTS_READ)
WRITES = (CONTACTS_WRITE, OPPORTUNITIES_WRITE, MESSAGES_WRITE)
DELETES = (CONTACTS_DELETE, OPPORTUNITIES_DELETE)
MANAGE = (WORKSPACE_MANAGE, WEBHOOKS_MANAGE, USERS_MANAGE, KEYS_MANAGE, AUDIT_READ)
ALL: tuple[str, ...] = (*READS, *WRITES, *DELETES, *MANAGE)
EVERY = "*"  # a key's `scopes: ["*"]`: every permission of its creator

OWNER, ADMIN, AGENT, VIEWER = "owner", "admin", "agent", "viewer"
ROLE_NAMES = (OWNER, ADMIN, AGENT, VIEWER)
ROLES: dict[str, frozenset[str]] = {
    OWNER: frozenset(ALL),
    ADMIN: frozenset(ALL),
    AGENT: frozenset((*READS, *WRITES)),
    VIEWER: frozenset(READS),
}

# A scope, or several any one of which is enough (the workspace reads serve both kinds of
# record). None: no authentication at all (sign-in, accepting an invitation, probes);
# SIGNED_IN: any authenticated caller (who am I, its own sessions and password).
SIGNED_IN = ""
Requirement = tuple[str, ...] | None

ROUTE_SCOPES: dict[str, Requirement] = {
    # contacts (A.2, A.3, B.3, E)
    "searchContactByEmail": (CONTACTS_READ,),
    "searchContactByCellphone": (CONTACTS_READ,),
    "listContacts": (CONTACTS_READ,),
    "contactBoard": (CONTACTS_READ,),
    "getContactById": (CONTACTS_READ,),
    "contactHistory": (CONTACTS_READ,),
    "listContactActivities": (CONTACTS_READ,),
    "createContact": (CONTACTS_WRITE,),
    "updateContact": (CONTACTS_WRITE,),
    "upsertContacts": (CONTACTS_WRITE,),
    "createContactActivity": (CONTACTS_WRITE,),
    "deleteContact": (CONTACTS_DELETE,),
    "deleteContacts": (CONTACTS_DELETE,),
    "restoreContact": (CONTACTS_DELETE,),
    "mergeContacts": (CONTACTS_DELETE,),
    # opportunities (A.4, B.4, E, H)
    "opportunityPipeline": (OPPORTUNITIES_READ,),
    "listOpportunities": (OPPORTUNITIES_READ,),
    "opportunityBoard": (OPPORTUNITIES_READ,),
    "getOpportunity": (OPPORTUNITIES_READ,),
    "opportunityHistory": (OPPORTUNITIES_READ,),
    "listOpportunityActivities": (OPPORTUNITIES_READ,),
    "createOpportunity": (OPPORTUNITIES_WRITE,),
    "updateOpportunity": (OPPORTUNITIES_WRITE,),
    "createOpportunityActivity": (OPPORTUNITIES_WRITE,),
    "deleteOpportunity": (OPPORTUNITIES_DELETE,),
    "restoreOpportunity": (OPPORTUNITIES_DELETE,),
    # workspaces (C, J.2)
    "getWorkspace": (CONTACTS_READ, OPPORTUNITIES_READ),
    "listWorkspaces": (CONTACTS_READ, OPPORTUNITIES_READ),
    "createWorkspace": (WORKSPACE_MANAGE,),
    "updateWorkspace": (WORKSPACE_MANAGE,),
    "createStage": (WORKSPACE_MANAGE,),
    "createTag": (WORKSPACE_MANAGE,),
    "createSegmentation": (WORKSPACE_MANAGE,),
    "createAgent": (WORKSPACE_MANAGE,),
    # events and webhooks (D)
    "listEvents": (EVENTS_READ,),
    "createWebhook": (WEBHOOKS_MANAGE,),
    "listWebhooks": (WEBHOOKS_MANAGE,),
    "getWebhook": (WEBHOOKS_MANAGE,),
    "updateWebhook": (WEBHOOKS_MANAGE,),
    "deleteWebhook": (WEBHOOKS_MANAGE,),
    "rotateWebhookSecret": (WEBHOOKS_MANAGE,),
    "testWebhook": (WEBHOOKS_MANAGE,),
    "listWebhookDeliveries": (WEBHOOKS_MANAGE,),
    "replayWebhook": (WEBHOOKS_MANAGE,),
    # people (J)
    "inviteUser": (USERS_MANAGE,),
    "listUsers": (USERS_MANAGE,),
    "getUser": (USERS_MANAGE,),
    "updateUser": (USERS_MANAGE,),
    "removeUser": (USERS_MANAGE,),
    "createResetLink": (USERS_MANAGE,),
    "endUserSessions": (USERS_MANAGE,),
    "acceptInvitation": None,
    "signIn": None,
    "getSession": (SIGNED_IN,),
    "signOut": (SIGNED_IN,),
    "listSessions": (SIGNED_IN,),
    "endSession": (SIGNED_IN,),
    "getMe": (SIGNED_IN,),
    "changePassword": (SIGNED_IN,),
    "startTwoFactor": (SIGNED_IN,),
    "enableTwoFactor": (SIGNED_IN,),
    "disableTwoFactor": (SIGNED_IN,),
    "createKey": (KEYS_MANAGE,),
    "listKeys": (KEYS_MANAGE,),
    "revokeKey": (KEYS_MANAGE,),
    "listAudit": (AUDIT_READ,),
    # conversations (K)
    "listMessages": (MESSAGES_READ,),
    "sendMessage": (MESSAGES_WRITE,),
    "recordMessage": (MESSAGES_WRITE,),
    "markConversationRead": (MESSAGES_WRITE,),
    "retryMessage": (MESSAGES_WRITE,),
    "getMessageMedia": (MESSAGES_READ,),
    "createChannel": (WORKSPACE_MANAGE,),
    "listChannels": (WORKSPACE_MANAGE,),
    "getChannel": (WORKSPACE_MANAGE,),
    "updateChannel": (WORKSPACE_MANAGE,),
    "deleteChannel": (WORKSPACE_MANAGE,),
    # Meta's calls: the verify token and the body's signature authenticate them (K.2)
    "verifyWhatsappWebhook": None,
    "receiveWhatsappWebhook": None,
    # operations (F): probes and metrics, no authentication
    "health": None,
    "ready": None,
    "metrics": None,
}


def allows(granted: frozenset[str], required: Iterable[str]) -> bool:
    """Whether scopes `granted` satisfy a requirement (any one of `required`)."""
    return any(s == SIGNED_IN or s in granted for s in required)


def parse_scopes(values: object) -> list[str] | None:
    """A key's requested scopes as a sorted list without repeats, `["*"]` kept as is;
    None when malformed."""
    if not isinstance(values, list) or not values:
        return None
    if not all(isinstance(v, str) for v in values):
        return None
    if values == [EVERY]:
        return [EVERY]
    if any(v not in ALL for v in values):
        return None
    return sorted(set(values), key=ALL.index)
