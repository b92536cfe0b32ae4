"""How many attempts one process sends at once to one endpoint: a window that grows by
one with each success and halves with each failure — additive increase, multiplicative
decrease, as TCP paces a connection — between 1 and CHATCRM_WEBHOOK_MAX_IN_FLIGHT.

A receiver that keeps up is thus sent to as fast as the events come (under a full request
load the dispatcher's sends wait their turn on the event loop behind the requests, so few
sends at once cannot keep up, docs/performance.md section 6), while one that times out or
answers errors is soon sent to one attempt at a time. How long a success took does not
count: under load it measures this process's own event loop as much as the receiver.
"""

from __future__ import annotations

# The window of an endpoint not heard from yet (or the cap, if lower).
START = 16
# Windows kept at most; past it they are forgotten (every endpoint starts again at START).
_REMEMBERED = 10_000


class Windows:
    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.start = min(START, cap)
        self._sizes: dict[str, float] = {}  # only windows that moved from `start`

    def of(self, endpoint: str) -> int:
        return int(self._sizes.get(endpoint, self.start))

    def moved(self) -> dict[str, int]:
        """The endpoints whose window is not `start`, with their window."""
        return {endpoint: int(size) for endpoint, size in self._sizes.items()}

    def answered(self, endpoint: str, *, succeeded: bool, overloaded: bool) -> None:
        """An attempt's outcome: a success widens the window by one; a sign of a receiver
        past what it can take (a timeout, 429, a 5xx) halves it; other failures (a 4xx, a
        refused or reset connection) leave it."""
        size = self._sizes.get(endpoint, float(self.start))
        if succeeded:
            size = min(float(self.cap), size + 1)
        elif overloaded:
            size = max(1.0, size / 2)
        if int(size) == self.start:
            self._sizes.pop(endpoint, None)
            return
        if len(self._sizes) >= _REMEMBERED and endpoint not in self._sizes:
            self._sizes.clear()
        self._sizes[endpoint] = size
