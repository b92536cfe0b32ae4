"""The field tables of webhooks (contract D.4): the endpoint, a delivery as its log shows
it, and the bodies of a replay and of the operations without body fields."""

from __future__ import annotations

from typing import Any

from chatcrm.events.types import EVERYTHING
from chatcrm.records.changes import Change, Effect
from chatcrm.records.defaults import NOW, RECORD_ID, Creation, Default
from chatcrm.records.fields import FULL, NULL, OPTIONAL, READ, REQUIRED, UPDATE, Field, FieldTable
from chatcrm.records.scalar_types import BOOLEAN, ID, TEXT, TIMESTAMP, Text, WholeNumber, Word
from chatcrm.webhooks.signing_secret import new_secret
from chatcrm.webhooks.value_types import DISABLED_REASON, EVENT_TYPES, SECRET, URL

# The list shows every field but the secret (READ); create, get, update and rotate show
# the whole record (FULL).
LISTED, WHOLE = READ, FULL
DESCRIPTION_MAX = 200


class _NewSecret(Default):
    async def value(self, creation: Creation) -> Any:
        return new_secret()


class _Reenable(Effect):
    """`enabled: true` gives the endpoint a fresh start: no reason to be disabled, no
    failures counted towards disabling it again."""

    direct = True
    sets = ("disabledReason",)

    async def apply(self, change: Change) -> None:
        if change.clean["enabled"]:
            change.columns.update(disabled_reason=None, consecutive_failures=0)


# fmt: off
WEBHOOK = FieldTable("webhook", [
    Field("id", ID, "id", default=RECORD_ID),
    Field("url", URL, "url", REQUIRED, UPDATE),
    Field("eventTypes", EVENT_TYPES, "event_types", OPTIONAL, UPDATE, default=[EVERYTHING]),
    Field("description", Text(DESCRIPTION_MAX), "description", OPTIONAL, UPDATE,
          description="Free text for people, at most 200 characters (default empty)."),
    Field("enabled", BOOLEAN, "enabled", UPDATE, default=True, effect=_Reenable(),
          description="false: no deliveries are made; true also clears disabledReason."),
    Field("disabledReason", DISABLED_REASON, "disabled_reason", NULL),
    Field("secret", SECRET, "secret", default=_NewSecret(), shapes=frozenset({WHOLE})),
    Field("createdAt", TIMESTAMP, "created_at", default=NOW),
    Field("updatedAt", TIMESTAMP, "updated_at", default=NOW),
])
# fmt: on

STATUSES = ("pending", "succeeded", "failed")
STATUS = Word(STATUSES, "must be one of " + ", ".join(STATUSES))

# fmt: off
DELIVERY = FieldTable("delivery", [
    Field("eventId", ID, "event_id", description="The event's id (its webhook-id header)."),
    Field("eventType", TEXT, "event_type"),
    Field("status", STATUS, "status"),
    Field("attempts", WholeNumber(), "attempts", description="Attempts made so far."),
    Field("lastAttemptAt", TIMESTAMP, "last_attempt_at", NULL),
    Field("nextAttemptAt", TIMESTAMP, "next_attempt_at", NULL,
          description="When the next attempt is due (pending deliveries)."),
    Field("lastResponseStatus", WholeNumber(), "last_response_status", NULL,
          description="The HTTP status of the last answer; null when none came."),
    Field("lastError", TEXT, "last_error", NULL,
          description="Why the last attempt failed (a timeout, a refused connection…)."),
])
# What a replay queues: one event, or the feed's events from a time on (exactly one).
REPLAY = FieldTable("replay", [
    Field("eventId", Text(64, nonblank=True), None, OPTIONAL,
          description="An event of the workspace, queued again whatever its type."),
    Field("since", TIMESTAMP, None, OPTIONAL,
          description="The feed's events created at or after this time that the endpoint's "
                      "eventTypes take."),
])
# Rotate and test: no body fields (workspaceId may name the workspace, as on every POST).
NO_FIELDS = FieldTable("none", [])
# fmt: on
