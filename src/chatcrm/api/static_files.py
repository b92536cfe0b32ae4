"""Static files as the service answers them."""

from __future__ import annotations

from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send


class WholeFiles(StaticFiles):
    """Static files always answered whole: the console's and the documentation's files are
    small, and Starlette's answers to a malformed or unsatisfiable `Range` (a plain-text
    400, an empty 416) would be the only answers outside the envelope (operations.md 4.6)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(name, value) for name, value in scope["headers"] if name != b"range"]
            scope = {**scope, "headers": headers}
        await super().__call__(scope, receive, send)
