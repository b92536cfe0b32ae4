"""In-process wake-ups: a broadcast that wakes every waiter once (the feed's long polls)."""

from __future__ import annotations

import asyncio
from contextlib import suppress


class Broadcast:
    """`fire()` wakes every task waiting at that moment; later waiters wait for the next."""

    def __init__(self) -> None:
        self._event = asyncio.Event()

    def fire(self) -> None:
        event, self._event = self._event, asyncio.Event()
        event.set()

    async def wait(self, seconds: float) -> bool:
        """True when fired within `seconds`."""
        event = self._event
        with suppress(TimeoutError):
            await asyncio.wait_for(event.wait(), seconds)
            return True
        return False
