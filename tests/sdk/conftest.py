"""Fixtures of the client's tests: one real `chatcrm serve` per backend for the whole
package, an account per test, and the client under test — sync, or async driven through
blocking calls so that one scenario checks both."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest

from chatcrm.provisioning import NewAccount
from chatcrm_client import AsyncClient, Client
from chatcrm_client._operations import Resource
from tests.servers import Server, serve


@pytest.fixture(scope="package")
def sdk_server(database_url: str) -> Iterator[Server]:
    # Deliveries to the test's receiver on 127.0.0.1; no rate limit on a shared server.
    env = {"CHATCRM_WEBHOOK_ALLOW_PRIVATE": "1", "CHATCRM_RATE_LIMIT": "0"}
    with serve(database_url, env=env) as server:
        yield server


def _lazily(agen: AsyncIterator[Any], loop: asyncio.AbstractEventLoop) -> Iterator[Any]:
    while True:
        try:
            yield loop.run_until_complete(agen.__anext__())
        except StopAsyncIteration:
            return


class Blocking:
    """An AsyncClient (or one of its resources) used through blocking calls on an event
    loop of its own: coroutines are run to their result, async iterators become iterators
    that fetch lazily (a stream never ends)."""

    def __init__(self, target: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._target = target
        self._loop = loop

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if isinstance(value, Resource) and not callable(value):
            return Blocking(value, self._loop)
        if not callable(value):
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            result = value(*args, **kwargs)
            if inspect.iscoroutine(result):
                return self._loop.run_until_complete(result)
            if hasattr(result, "__aiter__"):
                return _lazily(result, self._loop)
            return result

        return call


MakeClient = Callable[..., Any]


@pytest.fixture(params=["sync", "async"])
def make_client(request: pytest.FixtureRequest) -> Iterator[MakeClient]:
    """`make_client(base_url, api_key, workspace_id=None, **options)`: a client of the
    parametrised kind, closed after the test."""
    made: list[Any] = []
    loop = asyncio.new_event_loop()

    def make(*args: Any, **kwargs: Any) -> Any:
        if request.param == "sync":
            client = Client(*args, **kwargs)
            made.append(client.close)
            return client
        aclient = AsyncClient(*args, **kwargs)
        made.append(lambda: loop.run_until_complete(aclient.aclose()))
        return Blocking(aclient, loop)

    yield make
    for close in made:
        close()
    loop.close()


@pytest.fixture
def client(make_client: MakeClient, sdk_server: Server, account: NewAccount) -> Any:
    """A client of a fresh account's workspace on the real server."""
    return make_client(sdk_server.base_url, account.api_key, account.workspace_id)
