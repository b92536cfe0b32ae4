"""`client.opportunities`: contract A.1, B.3, D.3, E.1 and E.2."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from chatcrm_client._describe import (
    PAGE_SIZE,
    conditional,
    event_pages,
    first,
    nothing,
    one,
    record_or_none,
    segment,
    token_pages,
    update_body,
)
from chatcrm_client._engine import Answer, Call, Pages
from chatcrm_client._names import to_wire
from chatcrm_client._operations import M, Resource, listing, operation
from chatcrm_client._records import Activity, Event, Opportunity

PATH = "/api/opportunity"
Activities = list[Activity]  # (inside the class, `list` is the method)


def _activities(answer: Answer) -> Activities:
    return [Activity(item) for item in answer.data["data"]]


class Opportunities(Resource[M]):
    @operation
    def get(self, id: str) -> Call[Opportunity]:
        """The opportunity, with its `etag`; NotFound when there is none."""
        return Call("GET", f"{PATH}/{segment(id)}", first(Opportunity))

    @operation
    def create(self, /, **fields: Any) -> Call[Opportunity]:
        """A new opportunity (`name` and `amount` required; wire or snake_case names)."""
        json = to_wire("opportunity", fields)
        return Call("POST", PATH, one(Opportunity, "opportunity"), json=json)

    @operation
    def update(
        self, /, id: str, *, if_match: str | None = None, **fields: Any
    ) -> Call[Opportunity]:
        """Change the fields given; with `if_match`, only at that version."""
        return Call(
            "PUT",
            PATH,
            # The original service spells the answer's key with one p.
            one(Opportunity, "oportunity"),
            params={"id": id},
            json=update_body("opportunity", fields),
            headers=conditional(if_match),
            workspace="query",
        )

    @listing
    def list(self, /, **filters: Any) -> Pages[Opportunity]:
        """Every opportunity the filters take, newest first, the pages followed."""
        return token_pages(Opportunity, PATH, to_wire("opportunity", filters))

    @operation
    def delete(self, id: str) -> Call[None]:
        """Soft-delete the opportunity (restore brings it back)."""
        return Call("DELETE", f"{PATH}/{segment(id)}", nothing)

    @operation
    def restore(self, id: str) -> Call[Opportunity]:
        path = f"{PATH}/{segment(id)}/restore"
        return Call("POST", path, one(Opportunity, "opportunity"), json={})

    @operation
    def add_activity(
        self, id: str, content: str, category_type: str, date: datetime | str | None = None
    ) -> Call[Activity | None]:
        """Record a call, meeting, message or email (`category_type`: Calls, Meeting,
        Whatsapp or Email); `date` defaults to now. The activity the service answers with
        (None from a service that answers `data: null`)."""
        body: dict[str, Any] = {"categoryType": category_type, "content": content}
        if date is not None:
            body["date"] = date
        return Call(
            "POST", f"{PATH}/{segment(id)}/agent/activities", record_or_none(Activity), json=body
        )

    @operation
    def activities(self, id: str) -> Call[Activities]:
        """The opportunity's activities, oldest first."""
        return Call("GET", f"{PATH}/{segment(id)}/agent/activities", _activities)

    @listing
    def history(self, id: str, *, page_size: int = PAGE_SIZE) -> Pages[Event]:
        """The opportunity's events, oldest first (deleted ones keep theirs)."""
        return event_pages(f"{PATH}/{segment(id)}/history", {"pageSize": page_size})
