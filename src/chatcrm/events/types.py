"""The event types of contract D.1, their families, and how a subscription matches them."""

from __future__ import annotations

from collections.abc import Iterable

RECORD_TYPES = (
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "contact.restored",
    "contact.merged",
    "contact.activity.created",
    "opportunity.created",
    "opportunity.updated",
    "opportunity.deleted",
    "opportunity.restored",
    "opportunity.activity.created",
    "message.created",
    "message.updated",
)
WEBHOOK_TEST = "webhook.test"  # sent to one endpoint only, never in the feed
TYPES = (*RECORD_TYPES, WEBHOOK_TEST)
FAMILIES = ("contact.*", "opportunity.*", "message.*")
EVERYTHING = "*"


def family(event_type: str) -> str:
    """`contact.activity.created` → `contact.*`."""
    return event_type.split(".", 1)[0] + ".*"


def is_pattern(value: str, *, everything: bool = True) -> bool:
    """A type, a family (`contact.*`) or, where allowed, `*`."""
    return value in TYPES or value in FAMILIES or (everything and value == EVERYTHING)


def matches(patterns: Iterable[str], event_type: str) -> bool:
    """Whether a subscription (types, families, `*`) takes an event of this type."""
    wanted = set(patterns)
    return EVERYTHING in wanted or event_type in wanted or family(event_type) in wanted
