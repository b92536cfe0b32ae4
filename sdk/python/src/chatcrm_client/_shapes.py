"""Wire names, snake_case names and value kinds of the records of contract parts J and K
(users, keys, audit entries, messages, channels), in the form of _fields.py.

scripts/generate_sdk_fields.py writes the tables of parts A–E; these are kept here by
hand, and tests/sdk/test_people.py and test_messages.py check each one against what the
service answers (the same keys in the same order, timestamps where it says so)."""

from __future__ import annotations

# Table name → ((wire name, snake_case name, kind), ...) in the record's key order.
SHAPES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "user": (
        ("id", "id", "other"),
        ("email", "email", "other"),
        ("name", "name", "other"),
        ("role", "role", "other"),
        ("status", "status", "other"),
        ("workspaceIds", "workspace_ids", "other"),
        ("agentIds", "agent_ids", "other"),
        ("twoFactorEnabled", "two_factor_enabled", "other"),
        ("createdAt", "created_at", "timestamp"),
        ("lastSignInAt", "last_sign_in_at", "timestamp"),
    ),
    "key": (
        ("id", "id", "other"),
        ("name", "name", "other"),
        ("scopes", "scopes", "other"),
        ("workspaceIds", "workspace_ids", "other"),
        ("expiresAt", "expires_at", "timestamp"),
        ("createdAt", "created_at", "timestamp"),
        ("lastUsedAt", "last_used_at", "timestamp"),
        ("revokedAt", "revoked_at", "timestamp"),
        ("createdBy", "created_by", "other"),
    ),
    "auditEntry": (
        ("id", "id", "other"),
        ("at", "at", "timestamp"),
        ("actor", "actor", "other"),
        ("action", "action", "other"),
        ("target", "target", "other"),
        ("ip", "ip", "other"),
        ("userAgent", "user_agent", "other"),
    ),
    "message": (
        ("id", "id", "other"),
        ("workspaceId", "workspace_id", "other"),
        ("contactId", "contact_id", "other"),
        ("direction", "direction", "other"),
        ("channel", "channel", "other"),
        ("type", "type", "other"),
        ("text", "text", "other"),
        ("media", "media", "other"),
        ("location", "location", "other"),
        ("status", "status", "other"),
        ("error", "error", "other"),
        ("externalId", "external_id", "other"),
        ("replyToId", "reply_to_id", "other"),
        ("sentBy", "sent_by", "other"),
        ("createdAt", "created_at", "timestamp"),
        ("statusAt", "status_at", "timestamp"),
    ),
    "channel": (
        ("id", "id", "other"),
        ("type", "type", "other"),
        ("name", "name", "other"),
        ("phoneNumberId", "phone_number_id", "other"),
        ("displayPhoneNumber", "display_phone_number", "other"),
        ("apiBaseUrl", "api_base_url", "other"),
        ("verifyToken", "verify_token", "other"),
        ("webhookUrl", "webhook_url", "other"),
        ("enabled", "enabled", "other"),
        ("createdAt", "created_at", "timestamp"),
        ("updatedAt", "updated_at", "timestamp"),
    ),
}
