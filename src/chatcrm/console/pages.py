"""`/console`: the console's page and its files, all shipped in this package (static/), so it
works offline with no build step, CDN or server of its own. The page talks to the same JSON
API: with a person's session cookie (contract J.3), or with an API key kept in the tab's
sessionStorage and sent as a Bearer header."""

from __future__ import annotations

from io import BytesIO
from pathlib import Path

import segno
from fastapi import FastAPI
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.types import Scope

from chatcrm.api.static_files import NOSNIFF, WholeFiles

STATIC = Path(__file__).with_name("static")
PATH = "/console"
# Only this origin: the page loads nothing from elsewhere and sends its key nowhere else.
_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)


def install(app: FastAPI) -> None:
    page = (STATIC / "index.html").read_text(encoding="utf-8")

    # `/console/` too: invitation and reset links are `{public URL}/console/#invite/…`.
    # HEAD answers as GET does, without the body (a monitor's or a link checker's look).
    @app.api_route(PATH, methods=["GET", "HEAD"], include_in_schema=False)
    @app.api_route(PATH + "/", methods=["GET", "HEAD"], include_in_schema=False)
    async def console(request: Request) -> HTMLResponse:
        root = str(request.scope.get("root_path", "")).rstrip("/")
        return HTMLResponse(
            page.replace("{root}", root),
            headers={"Content-Security-Policy": _POLICY, "Cache-Control": "no-store", **NOSNIFF},
        )

    # The page links its icon (static/favicon.svg); a browser that asks the server's root
    # for one anyway gets the same icon, not a 404 in the logs.
    icon = (STATIC / "favicon.svg").read_bytes()

    @app.api_route("/favicon.ico", methods=["GET", "HEAD"], include_in_schema=False)
    async def favicon() -> Response:
        cache = {"Cache-Control": "public, max-age=86400"}
        return Response(icon, media_type="image/svg+xml", headers=cache)

    @app.post(f"{PATH}/qr", include_in_schema=False)
    async def qr(request: Request) -> Response:
        """The QR code of a two-factor set-up's otpauth URL, as SVG, drawn here (segno)
        so that the secret never leaves for a QR service. It renders what it is sent and
        stores nothing: no authentication needed."""
        text = (await request.body()).decode("utf-8", "replace")
        if not text.startswith("otpauth://") or len(text) > 1000:
            return Response("an otpauth:// URL is expected", status_code=400)
        # A whole SVG document, with its namespace: the page shows it as an <img> (a data:
        # URL), which draws nothing without xmlns (segno's svg_inline leaves it out).
        svg = BytesIO()
        segno.make(text, error="m").save(svg, kind="svg", xmldecl=False, svgns=True, scale=4)
        return Response(
            svg.getvalue(), media_type="image/svg+xml", headers={"Cache-Control": "no-store"}
        )

    app.mount(f"{PATH}/static", ConsoleFiles(directory=STATIC), name="console-static")


class ConsoleFiles(WholeFiles):
    """The console's files, but for the page itself: served by `/console` only, with its
    policy and its links filled in (a second copy here would have neither)."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        if path == "index.html":
            raise HTTPException(status_code=404)
        return await super().get_response(path, scope)
