"""Static files as the service answers them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import ClassVar

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

# What a page, a script or a style sheet is, its Content-Type says: a browser must not
# guess otherwise. (The API's answers are JSON, which browsers do not run.)
NOSNIFF = {"X-Content-Type-Options": "nosniff"}


class WholeFiles(StaticFiles):
    """Static files always answered whole: the console's and the documentation's files are
    small, and Starlette's answers to a malformed or unsatisfiable `Range` (a plain-text
    400, an empty 416) would be the only answers outside the envelope (operations.md 4.6).
    Each answer (the 304s too) carries `headers`."""

    headers: ClassVar[Mapping[str, str]] = NOSNIFF

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(name, value) for name, value in scope["headers"] if name != b"range"]
            scope = {**scope, "headers": headers}
        await super().__call__(scope, receive, send)

    def file_response(
        self,
        full_path: str | os.PathLike[str],
        stat_result: os.stat_result,
        scope: Scope,
        status_code: int = 200,
    ) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        response.headers.update(self.headers)
        return response
