"""Opportunity list filters (contract C)."""

from __future__ import annotations

from chatcrm.opportunities.fields import FIELDS
from chatcrm.records.listing import ChangedSince, FieldEquals, Filter, TextSearch

# In this order: the digest a continuation token binds is taken over them in this order.
FILTERS: tuple[Filter, ...] = (
    TextSearch("Substring of name, description or opportCode.", ("name", "description", "code")),
    FieldEquals(FIELDS, "stageId", "Only opportunities in this stage."),
    FieldEquals(FIELDS, "assignedAgentId", "Only opportunities assigned to this agent."),
    FieldEquals(FIELDS, "contactId", "Only opportunities of this contact."),
    FieldEquals(FIELDS, "winLossStatus", "0 open, 1 won, 2 lost."),
    ChangedSince(),
)
