"""The running server of the end-to-end transfer tests: one per backend for each module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers import Server, serve


@pytest.fixture(scope="module")
def server(database_url: str) -> Iterator[Server]:
    with serve(database_url) as running:
        yield running
