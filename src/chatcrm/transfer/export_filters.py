"""The filter options of an export: names (a stage, an agent's email, a tag, a contact's
phone) resolved to the ids a list takes, and each value checked by the list's own rule
for it, before anything is written: a bad value is one line naming its option (exit 2),
not a refusal once the export has started."""

from __future__ import annotations

from typing import Any

from chatcrm.contacts.listing import FILTERS as CONTACT_FILTERS
from chatcrm.core.errors import FieldError
from chatcrm.opportunities.listing import FILTERS as OPPORTUNITY_FILTERS
from chatcrm.records.listing import Filter
from chatcrm.transfer.cells import CellError, sendable
from chatcrm.transfer.names import Lookup, WorkspaceNames
from chatcrm.transfer.problems import BadInput
from chatcrm.transfer.remote import Remote

# Each filter option of `chatcrm export` → the list's query parameter it sets.
PARAMETERS = {
    "--q": "q",
    "--stage": "stageId",
    "--agent": "assignedAgentId",
    "--tag": "tag",
    "--solved/--unsolved": "isSolved",
    "--contact": "contactId",
    "--win-loss-status": "winLossStatus",
    "--updated-since": "updatedSince",
}
_RULES: dict[str, dict[str, Filter]] = {
    "contacts": {f.name: f for f in CONTACT_FILTERS},
    "opportunities": {f.name: f for f in OPPORTUNITY_FILTERS},
}


def list_filters(
    kind: str,
    options: dict[str, str | None],
    *,
    names: WorkspaceNames,
    stages: Lookup,
    remote: Remote,
) -> dict[str, Any]:
    """The list query of the options given (by option: `{"--stage": "Contacted"}`; None
    or empty for one not given, as the list takes an empty value). Raises BadInput naming
    the first bad one."""
    query: dict[str, Any] = {}
    for option, given in options.items():
        if not given:
            continue
        wire = PARAMETERS[option]
        try:
            # Before any lookup: a value that cannot be sent is never sent.
            value = _resolved(wire, sendable(given), names, stages, remote)
            _RULES[kind][wire].parse(value)
        except CellError as exc:
            raise BadInput(f"{option}: {exc}") from exc
        except FieldError as exc:
            raise BadInput(f"{option}: {exc.message}") from exc
        query[wire] = value
    return query


def _resolved(wire: str, text: str, names: WorkspaceNames, stages: Lookup, remote: Remote) -> str:
    """The id a name stands for, for the filters that take one; other values as given."""
    if wire == "stageId":
        return stages.resolve(text)
    if wire == "assignedAgentId":
        return names.agents.resolve(text)
    if wire == "tag":
        return names.tags.resolve(text)
    if wire == "contactId":
        found = remote.find_contact(text, names.default_country)
        if found is None:
            raise CellError(f'no contact with id, phone or email "{text}"')
        return found
    return text
