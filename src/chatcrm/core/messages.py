"""The contract's exact words: success messages and error codes live here and nowhere else."""

# Success messages (contract part A and B.3).
OPPORTUNITY_UPDATED = "Opportunity successfully updated."
OPPORTUNITY_CREATED = "Opportunity successfully created."
OPPORTUNITY_DELETED = "Opportunity successfully deleted."
CONTACT_UPDATED = "Contact updated successfully."
CONTACT_CREATED = "Contact created successfully."
CONTACTS_DELETED = "Contacts deleted successfully."
CONTACTS_UPSERTED = "Contacts upserted successfully."
LIST_OBTAINED = "Successfully obtained list."
LIST_PAGE_OBTAINED = "List obtained successfully."
ACTIVITY_RECORDED = "The activity was recorded successfully."
WORKSPACE_OBTAINED = "Workspace obtained successfully."
WORKSPACE_CREATED = "Workspace created successfully."
WORKSPACE_UPDATED = "Workspace updated successfully."
STAGE_CREATED = "Stage created successfully."
TAG_CREATED = "Tag created successfully."
SEGMENTATION_CREATED = "Segmentation created successfully."
AGENT_CREATED = "Agent created successfully."
ACTIVITIES_OBTAINED = "Activities obtained successfully."
EVENTS_OBTAINED = LIST_OBTAINED  # the feed and record history (contract D.2, D.3)
WEBHOOK_CREATED = "Webhook created successfully."
WEBHOOK_OBTAINED = "Webhook obtained successfully."
WEBHOOKS_OBTAINED = LIST_PAGE_OBTAINED
WEBHOOK_UPDATED = "Webhook updated successfully."
WEBHOOK_DELETED = "Webhook deleted successfully."
WEBHOOK_SECRET_ROTATED = "Webhook secret rotated successfully."
WEBHOOK_TEST_QUEUED = "Test event queued successfully."
DELIVERIES_OBTAINED = LIST_PAGE_OBTAINED
EVENTS_QUEUED = "Events queued successfully."
HEALTHY = "Service is healthy."
READY = "Service is ready."

# Error codes (contract section 5).
BAD_REQUEST = "BAD_REQUEST"
INVALID_CONTINUATION_TOKEN = "INVALID_CONTINUATION_TOKEN"
UNAUTHORIZED = "UNAUTHORIZED"
WORKSPACE_REQUIRED = "WORKSPACE_REQUIRED"
FORBIDDEN = "FORBIDDEN"
NOT_FOUND = "NOT_FOUND"
CONTACT_NOT_FOUND = "CONTACT_NOT_FOUND"
OPPORTUNITY_NOT_FOUND = "OPPORTUNITY_NOT_FOUND"
METHOD_NOT_ALLOWED = "METHOD_NOT_ALLOWED"
DUPLICATE_CONTACT = "DUPLICATE_CONTACT"
IDEMPOTENCY_KEY_REUSED = "IDEMPOTENCY_KEY_REUSED"
PRECONDITION_FAILED = "PRECONDITION_FAILED"
PAYLOAD_TOO_LARGE = "PAYLOAD_TOO_LARGE"
UNSUPPORTED_MEDIA_TYPE = "UNSUPPORTED_MEDIA_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
RATE_LIMITED = "RATE_LIMITED"
INTERNAL_ERROR = "INTERNAL_ERROR"
SERVICE_UNAVAILABLE = "SERVICE_UNAVAILABLE"
# Contract D.5.
INVALID_CURSOR = "INVALID_CURSOR"
WEBHOOK_NOT_FOUND = "WEBHOOK_NOT_FOUND"
CONTACT_DELETED_CONFLICT = "CONTACT_DELETED_CONFLICT"

# Contract E.1 and E.2: single delete, restore, merge, the account's workspaces.
CONTACT_DELETED = "Contact deleted successfully."
CONTACT_RESTORED = "Contact restored successfully."
OPPORTUNITY_RESTORED = "Opportunity restored successfully."
CONTACTS_MERGED = "Contacts merged successfully."
WORKSPACES_OBTAINED = LIST_PAGE_OBTAINED
OPPORTUNITY_ACTIVITIES_OBTAINED = LIST_OBTAINED

# Contract J: people, sessions, scoped keys, the audit log.
USER_INVITED = "User invited successfully."
USER_OBTAINED = "User obtained successfully."
USER_UPDATED = "User updated successfully."
USER_REMOVED = "User removed successfully."
USERS_OBTAINED = LIST_PAGE_OBTAINED
RESET_LINK_CREATED = "Reset link created successfully."
SIGNED_IN = "Signed in successfully."
SIGNED_OUT = "Signed out successfully."
SESSION_OBTAINED = "Session obtained successfully."
SESSIONS_OBTAINED = LIST_PAGE_OBTAINED
SESSION_ENDED = "Session ended successfully."
SESSIONS_ENDED = "Sessions ended successfully."
ME_OBTAINED = "Caller obtained successfully."
PASSWORD_CHANGED = "Password changed successfully."
TWO_FACTOR_STARTED = "Two-factor set-up started successfully."
TWO_FACTOR_ENABLED = "Two-factor enabled successfully."
TWO_FACTOR_DISABLED = "Two-factor disabled successfully."
KEY_CREATED = "Key created successfully."
KEYS_OBTAINED = LIST_PAGE_OBTAINED
KEY_REVOKED = "Key revoked successfully."
AUDIT_OBTAINED = LIST_PAGE_OBTAINED
INVALID_TOKEN = "INVALID_TOKEN"
INVALID_CREDENTIALS = "INVALID_CREDENTIALS"
TWO_FACTOR_REQUIRED = "TWO_FACTOR_REQUIRED"
SESSION_EXPIRED = "SESSION_EXPIRED"
PERMISSION_DENIED = "PERMISSION_DENIED"
CSRF_FAILED = "CSRF_FAILED"
USER_NOT_FOUND = "USER_NOT_FOUND"
DUPLICATE_USER = "DUPLICATE_USER"
LAST_OWNER = "LAST_OWNER"
TWO_FACTOR_ON = "TWO_FACTOR_ON"
TOO_MANY_ATTEMPTS = "TOO_MANY_ATTEMPTS"

# Contract K: conversations and the WhatsApp channel.
MESSAGE_QUEUED = "Message queued successfully."
MESSAGE_RECORDED = "Message recorded successfully."
MESSAGES_OBTAINED = LIST_OBTAINED
CONVERSATION_READ = "Conversation marked as read successfully."
MESSAGE_RETRIED = MESSAGE_QUEUED
CHANNEL_CREATED = "Channel created successfully."
CHANNEL_OBTAINED = "Channel obtained successfully."
CHANNELS_OBTAINED = LIST_PAGE_OBTAINED
CHANNEL_UPDATED = "Channel updated successfully."
CHANNEL_DELETED = "Channel deleted successfully."
DELIVERY_STORED = "Delivery stored successfully."
CHANNEL_NOT_FOUND = "CHANNEL_NOT_FOUND"
MESSAGE_NOT_FOUND = "MESSAGE_NOT_FOUND"
DUPLICATE_CHANNEL = "DUPLICATE_CHANNEL"
MESSAGE_NOT_FAILED = "MESSAGE_NOT_FAILED"
NO_CHANNEL = "NO_CHANNEL"
WINDOW_CLOSED = "WINDOW_CLOSED"
