"""The feed has no gaps (contract D.2): a transaction that commits after later ones must not
make its event appear behind a position a reader has already passed.

The first test commits out of order on purpose: one transaction writes an event and is held
open while another writes and commits, a follower reads past the second, then the first
commits. A feed ordered by a number drawn at insert would skip the first event forever.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from typing import Any, TypeVar

import pytest

from chatcrm.config import Settings
from chatcrm.contacts.kind import CONTACT
from chatcrm.db.database import Connection, Database
from chatcrm.events import feed, reading
from chatcrm.events.feed import Page
from chatcrm.records import writing
from tests.client import Api, ok_data
from tests.conftest import app_fixtures, databases_per_backend

T = TypeVar("T")


class LoopThread:
    """An event loop in a thread of its own, for a transaction held across HTTP calls."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 30) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self, coro: Coroutine[Any, Any, T]) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=5)


# These tests hold a writing transaction open on purpose, in a database of their own: the
# feed's gate keeps that database's readers behind it (tests/events/test_feed_gate.py).
database_url = databases_per_backend("database_url", "module")


settings, http = app_fixtures("module")


@pytest.fixture
def side(database_url: str) -> Iterator[tuple[LoopThread, Database]]:
    loop = LoopThread()
    db = Database(Settings(database_url=database_url))
    yield loop, db
    loop.run(db.dispose())
    loop.close()


def follow(api: Api, after: str | None) -> tuple[list[str], str | None]:
    params = {"pageSize": "100", **({"after": after} if after else {})}
    data = ok_data(api.get("/api/events", params=params))
    return [e["id"] for e in data["events"]], data["next"]


@pytest.mark.parametrize("run", range(20))
def test_a_late_commit_is_not_skipped(
    api: Api,
    side: tuple[LoopThread, Database],
    database_url: str,
    run: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop, db = side
    # The follower reads while the held transaction is open: the gate keeps it behind
    # that transaction, whose end it waits for (a second at most) before answering
    # without it. A tenth of a second is as good a test, ten times over.
    monkeypatch.setattr(reading, "SETTLE_SECONDS", 0.1)
    early, late = api.create_contact(), api.create_contact()
    seen, after = follow(api, None)

    async def write_and_hold() -> Connection:
        conn = db.connection()
        await conn.begin()  # a single-statement update would otherwise commit at once
        await writing.update(
            conn,
            CONTACT,
            workspace_id=api.ws,
            record_id=early["id"],
            body={"paramToUpdate": "name", "name": f"held {run}"},
            if_match=None,
        )
        return conn

    held = loop.run(write_and_hold())  # its event is written first, not committed
    if database_url.startswith("postgresql"):
        # A later transaction commits first; the follower reads past it.
        api.set_contact(late["id"], name=f"committed {run}")
        ids, after = follow(api, after)
        seen += ids
        loop.run(held.finish(commit=True))
    else:
        # SQLite has one writer: the later transaction waits for the held one, which
        # commits while the follower has already read everything there was.
        waiting = threading.Thread(target=api.set_contact, args=(late["id"],), kwargs={"name": "x"})
        waiting.start()
        ids, after = follow(api, after)
        seen += ids
        loop.run(held.finish(commit=True))
        waiting.join(timeout=30)
    ids, after = follow(api, after)
    seen += ids
    ids, after = follow(api, after)
    seen += ids
    every = [e["id"] for e in _all(api)]
    assert len(seen) == len(set(seen)), "an event was received twice"
    assert sorted(seen) == sorted(every), "the follower missed an event"
    assert len(every) == 4


def _all(api: Api) -> list[dict[str, Any]]:
    from tests.events.test_outbox import all_events

    return all_events(api)


@pytest.mark.parametrize("path", ["/api/events", "history"])
def test_a_read_shows_a_write_answered_before_it_once_older_ones_end(
    api: Api,
    side: tuple[LoopThread, Database],
    database_url: str,
    path: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client's write, answered, is in its next feed or history read even when an older
    transaction held it back at the read's first look and ended before the read settled
    (events/reading.py reads again once they have ended)."""
    if database_url.startswith("sqlite"):
        pytest.skip("SQLite has one writer: no transaction is older than an answered write")
    loop, db = side
    held_record, mine = api.create_contact(), api.create_contact()
    _, end = follow(api, None)

    async def write_and_hold() -> Connection:
        conn = db.connection()
        await conn.begin()
        body = {"paramToUpdate": "name", "name": "held"}
        await writing.update(
            conn,
            CONTACT,
            workspace_id=api.ws,
            record_id=held_record["id"],
            body=body,
            if_match=None,
        )
        return conn

    held = loop.run(write_and_hold())
    api.set_contact(mine["id"], name="answered")  # after the held one began: behind it
    reads = 0
    read_page = feed.read_page

    async def read_then_end_the_held_one(*args: Any, **kwargs: Any) -> Page:
        nonlocal reads
        page = await read_page(*args, **kwargs)
        reads += 1
        if reads == 1:  # it ends between the first read and the look at what still runs
            loop.run(held.finish(commit=True))
        return page

    monkeypatch.setattr(feed, "read_page", read_then_end_the_held_one)
    if path == "history":
        got = ok_data(api.get(f"/api/contact/{mine['id']}/history"))["events"]
        assert [e["type"] for e in got] == ["contact.created", "contact.updated"]
    else:
        got = ok_data(api.get(path, params={"after": end, "pageSize": "100"}))["events"]
        assert [e["recordId"] for e in got] == [held_record["id"], mine["id"]]
