"""A fresh `chatcrm serve` on SQLite for the documentation's samples."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.docs.samples import Service
from tests.servers import serve


@pytest.fixture(scope="session")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("make-run")
    with serve(f"sqlite:///{folder / 'chatcrm.db'}") as server:
        workspace_id, api_key = server.demo()
        yield Service(server, workspace_id, api_key, folder)
