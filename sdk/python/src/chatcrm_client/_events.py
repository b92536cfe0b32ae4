"""`client.events`: the events feed (contract D.2)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chatcrm_client._describe import event_pages
from chatcrm_client._engine import Pages
from chatcrm_client._operations import M, Resource, listing
from chatcrm_client._records import Event

PATH = "/api/events"
# The longest the service holds a long poll.
MAX_WAIT = 30.0


def _params(after: str | None, types: str | Iterable[str] | None, record_id: str | None) -> Any:
    names = types if types is None or isinstance(types, str) else ",".join(types)
    return {"after": after, "types": names, "recordId": record_id}


class Events(Resource[M]):
    @listing
    def list(
        self,
        after: str | None = None,
        types: str | Iterable[str] | None = None,
        *,
        record_id: str | None = None,
    ) -> Pages[Event]:
        """The workspace's events after `after` (an event id; None: from the oldest
        retained), oldest first; it ends when the feed has no more. `types`: types or
        families (`contact.*`)."""
        return event_pages(PATH, _params(after, types, record_id))

    @listing
    def stream(
        self,
        after: str | None = None,
        types: str | Iterable[str] | None = None,
        *,
        record_id: str | None = None,
        wait: float = MAX_WAIT,
    ) -> Pages[Event]:
        """Like `list`, but it never ends: at the end of the feed each request waits up to
        `wait` seconds for the next event (a long poll), so events arrive as they happen.
        Keep the last event's id to resume after a restart."""
        return event_pages(PATH, _params(after, types, record_id), endless=True, wait=wait)
