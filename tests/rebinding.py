"""DNS rebinding, staged for the tests of the HTTP clients that send to addresses users
give (webhooks, the Graph API): the clients' own resolver answers 127.0.0.1 for every name,
as a rebinding DNS server would once the check before the call has passed."""

from __future__ import annotations

import socket

import aiohttp
import pytest


def resolve_to_loopback(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """From now on aiohttp's resolver gives 127.0.0.1 for any name; the names it was asked
    are appended to the list returned."""
    lookups: list[str] = []

    async def rebound(
        self: aiohttp.ThreadedResolver, host: str, port: int = 0, family: int = socket.AF_INET
    ) -> list[dict[str, object]]:
        lookups.append(host)
        return [
            {"hostname": host, "host": "127.0.0.1", "port": port, "family": socket.AF_INET,
             "proto": 0, "flags": socket.AI_NUMERICHOST}
        ]  # fmt: skip

    monkeypatch.setattr(aiohttp.ThreadedResolver, "resolve", rebound)
    return lookups
