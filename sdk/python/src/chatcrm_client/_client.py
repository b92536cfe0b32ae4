"""`Client` and `AsyncClient`: the same resources over a blocking or an asyncio httpx
client. Everything but the I/O is shared (_engine.py, _operations.py)."""

from __future__ import annotations

from types import TracebackType
from typing import Any, Self

import httpx

from chatcrm_client._channels import Channels
from chatcrm_client._contacts import Contacts
from chatcrm_client._drivers import AsyncDriver, SyncDriver
from chatcrm_client._engine import Call, Engine, data_of
from chatcrm_client._events import Events
from chatcrm_client._messages import Messages
from chatcrm_client._operations import Async, M, Resource, Sync, operation
from chatcrm_client._opportunities import Opportunities
from chatcrm_client._people import Audit, Keys, Users
from chatcrm_client._webhooks import Webhooks
from chatcrm_client._workspaces import Workspaces

DEFAULT_TIMEOUT = 10.0
DEFAULT_RETRIES = 2


class _Surface(Resource[M]):
    """What both clients offer: the resources, and `request` for any other call."""

    def __init__(self, driver: SyncDriver | AsyncDriver) -> None:
        super().__init__(driver)
        self.contacts: Contacts[M] = Contacts(driver)
        self.opportunities: Opportunities[M] = Opportunities(driver)
        self.workspaces: Workspaces[M] = Workspaces(driver)
        self.webhooks: Webhooks[M] = Webhooks(driver)
        self.events: Events[M] = Events(driver)
        self.messages: Messages[M] = Messages(driver)
        self.channels: Channels[M] = Channels(driver)
        self.users: Users[M] = Users(driver)
        self.keys: Keys[M] = Keys(driver)
        self.audit: Audit[M] = Audit(driver)

    @property
    def workspace_id(self) -> str | None:
        """The workspace the client acts in (None until looked up, when not given)."""
        return self._engine.workspace_id

    @operation
    def request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        json: Any = None,
    ) -> Call[Any]:
        """Any call of the API (e.g. `POST /api/workspace/{id}/tags`), with the client's
        key, workspace, retries and errors; the envelope's `data`. `{workspace}` in the
        path is the client's workspace. Without a workspace_id, an account of several
        workspaces is called without one (account calls: `POST /api/workspace`)."""
        return Call(
            method.upper(), path, data_of, params=params or {}, json=json, workspace="if_known"
        )


def _engine(
    base_url: str, api_key: str, workspace_id: str | None, timeout: float, max_retries: int
) -> Engine:
    return Engine(base_url, api_key, workspace_id, timeout=timeout, max_retries=max_retries)


class Client(_Surface[Sync]):
    """The blocking client: `with Client(base_url, api_key) as client: ...`."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace_id: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRIES,
    ) -> None:
        engine = _engine(base_url, api_key, workspace_id, timeout, max_retries)
        # Redirects are not followed: the API answers every call itself.
        self._http = httpx.Client(follow_redirects=False)
        super().__init__(SyncDriver(engine, self._http))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncClient(_Surface[Async]):
    """The asyncio client: `async with AsyncClient(base_url, api_key) as client: ...`;
    every call is awaited, every list is an async iterator."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        workspace_id: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_RETRIES,
    ) -> None:
        engine = _engine(base_url, api_key, workspace_id, timeout, max_retries)
        self._http = httpx.AsyncClient(follow_redirects=False)
        super().__init__(AsyncDriver(engine, self._http))

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
