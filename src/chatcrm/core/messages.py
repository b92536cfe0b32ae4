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
