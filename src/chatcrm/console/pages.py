"""`/console`: the console's page and its files, all shipped in this package (static/), so it
works offline with no build step, CDN or server of its own. The page talks to the same JSON
API with the key kept in the tab's sessionStorage, sent as a Bearer header: no cookie."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).with_name("static")
PATH = "/console"
# Only this origin: the page loads nothing from elsewhere and sends its key nowhere else.
_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


def install(app: FastAPI) -> None:
    page = (STATIC / "index.html").read_text(encoding="utf-8")

    @app.get(PATH, include_in_schema=False)
    async def console(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        return HTMLResponse(
            page.replace("{root}", root),
            headers={"Content-Security-Policy": _POLICY, "Cache-Control": "no-store"},
        )

    app.mount(f"{PATH}/static", StaticFiles(directory=STATIC), name="console-static")
