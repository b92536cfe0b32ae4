"""Pieces the resources describe their calls with: paths, update bodies, readers of
answers and the two ways lists are paged."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar
from urllib.parse import quote

from chatcrm_client._engine import Answer, Call, Pages, data_of
from chatcrm_client._names import to_wire
from chatcrm_client._records import Event, Record

R = TypeVar("R", bound=Record)

# The largest page the service gives: fewer round trips for a whole list.
PAGE_SIZE = 100


def segment(value: str) -> str:
    """An id as one path segment (nothing in it can reach another route)."""
    if not value:
        raise ValueError("an id is required")
    return quote(str(value), safe="")


def update_body(resource: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """`{"paramToUpdate": "a,b", "a": …, "b": …}`: the form every version of the service
    reads (the original names the fields it changes)."""
    body = to_wire(resource, fields)
    if not body:
        raise ValueError("name at least one field to update")
    return {"paramToUpdate": ",".join(body), **body}


def given(**values: Any) -> dict[str, Any]:
    """A body of the keyword arguments given, under their wire names: None is "not
    given" (calls whose fields are parameters rather than `**fields`)."""
    return {name: value for name, value in values.items() if value is not None}


def conditional(if_match: str | None) -> dict[str, str]:
    return {} if if_match is None else {"if-match": if_match}


def one(cls: type[R], key: str) -> Callable[[Answer], R]:
    """The record under `data[key]`, with the answer's ETag."""

    def parse(answer: Answer) -> R:
        return cls(answer.data[key], etag=answer.etag)

    return parse


def first(cls: type[R]) -> Callable[[Answer], R]:
    """The record of a get (`data.data[0]`), with the answer's ETag."""

    def parse(answer: Answer) -> R:
        return cls(answer.data["data"][0], etag=answer.etag)

    return parse


def first_or_none(cls: type[R]) -> Callable[[Answer], R | None]:
    """The first record of a search, or None."""

    def parse(answer: Answer) -> R | None:
        found = answer.data["data"]
        return cls(found[0]) if found else None

    return parse


def nothing(answer: Answer) -> None:
    return None


def record_or_none(cls: type[R], *, table: str | None = None) -> Callable[[Answer], R | None]:
    """The answer's `data` as a record when the service sends one (a recorded activity),
    else None (a service that answers `data: null`)."""

    def parse(answer: Answer) -> R | None:
        data = answer.data
        return cls(data, table=table, etag=answer.etag) if isinstance(data, dict) else None

    return parse


def token_pages(
    cls: type[R], path: str, params: Mapping[str, Any], *, table: str | None = None
) -> Pages[R]:
    """A list paged with `continuationToken` (contacts, opportunities, activities,
    deliveries): `data.data` are the records; a null token is the end."""
    query = {"pageSize": PAGE_SIZE, **params}

    def follow(data: Any) -> Mapping[str, Any] | None:
        token = data.get("continuationToken")
        return None if token is None else {"continuationToken": token}

    return Pages(
        Call("GET", path, data_of, params=query),
        items=lambda data: [cls(item, table=table) for item in data["data"]],
        follow=follow,
    )


def event_pages(
    path: str, params: Mapping[str, Any], *, endless: bool = False, wait: float = 0.0
) -> Pages[Event]:
    """Events paged with `after`/`next` (the feed, a record's history). It ends at the
    first page shorter than asked for, or, `endless`, never: each next request waits up to
    `wait` seconds for an event (a long poll)."""
    query = {"pageSize": PAGE_SIZE, **params}
    size = int(query["pageSize"])
    if endless:
        query["wait"] = wait

    def follow(data: Any) -> Mapping[str, Any] | None:
        if not endless and len(data["events"]) < size:
            return None
        return {"after": data["next"]} if data.get("next") else {}

    return Pages(
        Call("GET", path, data_of, params=query, wait=wait if endless else 0.0),
        items=lambda data: [Event(item) for item in data["events"]],
        follow=follow,
        endless=endless,
    )
