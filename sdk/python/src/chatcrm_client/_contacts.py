"""`client.contacts`: contract A.2, A.3, B.3, D.3 and E.2."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from chatcrm_client._describe import (
    PAGE_SIZE,
    conditional,
    event_pages,
    first,
    first_or_none,
    one,
    record_or_none,
    segment,
    token_pages,
    update_body,
)
from chatcrm_client._engine import Answer, Call, Pages
from chatcrm_client._names import to_wire
from chatcrm_client._operations import M, Resource, listing, operation
from chatcrm_client._records import Activity, Contact, Event, Record

PATH = "/api/contact"
Ids = list[str]  # (inside the classes, `list` is the method)


def _deleted_ids(answer: Answer) -> list[str]:
    data = answer.data
    return list(data["deletedIds"]) if "deletedIds" in data else [data["id"]]


class Contacts(Resource[M]):
    @operation
    def get(self, id: str) -> Call[Contact]:
        """The contact (read shape), with its `etag`; NotFound when there is none."""
        return Call("GET", f"{PATH}/{segment(id)}", first(Contact))

    @operation
    def create(self, /, **fields: Any) -> Call[Contact]:
        """A new contact (`name` required; wire or snake_case names)."""
        return Call("POST", PATH, one(Contact, "contact"), json=to_wire("contact", fields))

    @operation
    def update(self, /, id: str, *, if_match: str | None = None, **fields: Any) -> Call[Contact]:
        """Change the fields given; with `if_match` (an `etag`), only if the contact is
        still at that version (else PreconditionFailed)."""
        return Call(
            "PUT",
            PATH,
            one(Contact, "contact"),
            params={"id": id},
            json=update_body("contact", fields),
            headers=conditional(if_match),
            workspace="query",
        )

    @listing
    def list(self, /, **filters: Any) -> Pages[Contact]:
        """Every contact the filters take (`q`, `stage_id`, `tag`, `updated_since`,
        `shape="full"`…), newest first, the pages followed."""
        return token_pages(Contact, PATH, to_wire("contact", filters))

    @operation
    def search_by_email(self, email: str) -> Call[Contact | None]:
        return Call("GET", f"{PATH}/searchByEmail", first_or_none(Contact), params={"email": email})

    @operation
    def search_by_phone(self, phone: str) -> Call[Contact | None]:
        return Call(
            "GET",
            f"{PATH}/searchByCellphone",
            first_or_none(Contact),
            params={"cellphone": phone},
        )

    @operation
    def delete(self, *ids: str) -> Call[Ids]:
        """Soft-delete contacts; the ids deleted. One id: NotFound when unknown; several
        (at most 500): the unknown ones are left out of the answer."""
        if not ids:
            raise ValueError("name at least one contact id")
        if len(ids) == 1:
            return Call("DELETE", f"{PATH}/{segment(ids[0])}", _deleted_ids)
        body = {"contactIds": [{"ids": i} for i in ids]}
        return Call("POST", f"{PATH}/delete-batch", _deleted_ids, json=body)

    @operation
    def restore(self, id: str) -> Call[Contact]:
        return Call("POST", f"{PATH}/{segment(id)}/restore", one(Contact, "contact"), json={})

    @operation
    def merge(self, primary_id: str, duplicate_ids: Iterable[str]) -> Call[Contact]:
        """Merge the duplicates into the primary (contract E.2); the primary after it."""
        body = {"primaryId": primary_id, "duplicateIds": [*duplicate_ids]}
        return Call("POST", f"{PATH}/merge", one(Contact, "contact"), json=body)

    @operation
    def upsert_batch(
        self,
        items: Iterable[Mapping[str, Any]],
        match_by: str = "auto",
        dry_run: bool = False,
    ) -> Call[Record]:
        """Create or update up to 500 contacts (contract E.2). The answer's `created`,
        `updated`, `unchanged`, `failed` and `results` (index, status, id, errors)."""
        body = {
            "matchBy": match_by,
            "dryRun": dry_run,
            "contacts": [to_wire("contact", item) for item in items],
        }
        return Call("POST", f"{PATH}/upsert-batch", lambda a: Record(a.data), json=body)

    @operation
    def add_activity(self, id: str, content: str) -> Call[Activity | None]:
        """Record a note on the contact; the activity the service answers with (None from
        a service that answers `data: null`)."""
        return Call(
            "POST",
            f"{PATH}/{segment(id)}/activities",
            record_or_none(Activity, table="contactActivity"),
            json={"content": content},
        )

    @listing
    def activities(self, id: str, *, page_size: int = PAGE_SIZE) -> Pages[Activity]:
        """The contact's activities, oldest first."""
        path = f"{PATH}/{segment(id)}/activities"
        return token_pages(Activity, path, {"pageSize": page_size}, table="contactActivity")

    @listing
    def history(self, id: str, *, page_size: int = PAGE_SIZE) -> Pages[Event]:
        """The contact's events, oldest first (deleted contacts keep theirs)."""
        return event_pages(f"{PATH}/{segment(id)}/history", {"pageSize": page_size})
