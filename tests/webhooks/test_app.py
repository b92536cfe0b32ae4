"""The app runs a dispatcher in each worker, as app.state.dispatcher, unless
CHATCRM_DISPATCH=0."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.db.database import Database
from chatcrm.webhooks.dispatcher import Dispatcher
from tests.webhooks import rows
from tests.webhooks.conftest import dispatch_settings
from tests.webhooks.processes import with_db
from tests.webhooks.receiver import Receiver


def _queue(database_url: str, workspace: str, url: str) -> tuple[rows.Endpoint, str]:
    async def work(db: Database) -> tuple[rows.Endpoint, str]:
        endpoint = await rows.add_webhook(db, workspace, url)
        return endpoint, await rows.new_delivery(db, endpoint)

    return with_db(database_url, work)


def test_the_app_dispatches_unless_dispatch_is_off(
    dispatch_url: str, sync_workspace: str, receiver: Receiver
) -> None:
    off = dispatch_settings(dispatch_url, dispatch=False, access_log=False)
    with TestClient(create_app(off)) as client:
        assert client.app.state.dispatcher is None  # type: ignore[attr-defined]
        _, event_id = _queue(dispatch_url, sync_workspace, receiver.url("/app"))
        time.sleep(1.2)
        assert receiver.requests() == []
    on = dispatch_settings(dispatch_url, access_log=False)
    with TestClient(create_app(on)) as client:
        dispatcher = client.app.state.dispatcher  # type: ignore[attr-defined]
        assert isinstance(dispatcher, Dispatcher)
        [got] = receiver.wait_for(1, "/app", timeout=5)
    assert got.headers["webhook-id"] == event_id
