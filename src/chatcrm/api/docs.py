"""The API documentation pages, `/docs` (Swagger UI) and `/redoc` (ReDoc), with their assets.

The scripts, styles and icon they load are files of this package (docs_assets/, copied
from the npm packages by scripts/fetch_docs_assets.py), served under `/docs-assets/`:
the pages work on a network with no way out, and tell no third party who reads them.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from fastapi import FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from chatcrm.api.static_files import NOSNIFF, WholeFiles

ASSETS = Path(__file__).with_name("docs_assets")
ASSETS_URL = "/docs-assets"
SWAGGER_UI = "swagger-ui-dist"
REDOC = "redoc"
# Each package's version is part of its files' URLs, so a browser may keep them for good:
# new files come with a new version, hence a new URL.
CACHE_CONTROL = "public, max-age=31536000, immutable"
# What the pages may load: only this server. Inline script and styles are how FastAPI's
# Swagger UI page starts and how both renderers style themselves; ReDoc runs its search in
# a worker made from a blob. The policy would also keep the browser from fetching any
# outside file (ReDoc's bundle asked for one, the Redocly logo: see `redoc_bundle`).
CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "worker-src 'self' blob:",
        "connect-src 'self'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'self'",
    )
)


# The one outside file ReDoc's bundle asks for: the Redocly logo beside its "API docs by
# Redocly" link. The bundle is served with that address replaced by this small logo of its
# own (a data: URL), so the browser does not even try to reach Redocly's CDN.
REDOC_BUNDLE = "redoc.standalone.js"
REDOCLY_LOGO_URL = "https://cdn.redoc.ly/redoc/logo-mini.svg"
_LOGO_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16">'
    '<rect width="16" height="16" rx="3" fill="#32329f"/>'
    '<path d="M5 4h4a2.5 2.5 0 0 1 .6 4.9L12 12H9.8L7.7 9H7v3H5z" fill="#fff"/></svg>'
)
LOCAL_LOGO_URL = "data:image/svg+xml;base64," + base64.b64encode(_LOGO_SVG.encode()).decode()


def redoc_bundle() -> bytes:
    """ReDoc's script as the pages get it: the package's file with the logo's address
    replaced by `LOCAL_LOGO_URL` (the file on disk stays the npm package's)."""
    original = (ASSETS / REDOC / REDOC_BUNDLE).read_bytes()
    return original.replace(REDOCLY_LOGO_URL.encode(), LOCAL_LOGO_URL.encode())


class ImmutableFiles(WholeFiles):
    """Static files answered with `CACHE_CONTROL` (the 304s too)."""

    headers: ClassVar[Mapping[str, str]] = {**NOSNIFF, "Cache-Control": CACHE_CONTROL}


def asset_prefix(package: str) -> str:
    """`/docs-assets/<npm package>@<version>`: where that package's files are served."""
    manifest = json.loads((ASSETS / package / "package.json").read_text(encoding="utf-8"))
    return f"{ASSETS_URL}/{package}@{manifest['version']}"


def install(app: FastAPI) -> None:
    """Serve the assets and the two pages. The app is created with `docs_url=None,
    redoc_url=None`, which turns off FastAPI's own pages (they load from CDNs)."""
    assert app.openapi_url is not None
    openapi_url = app.openapi_url
    oauth2_redirect_url = app.swagger_ui_oauth2_redirect_url
    swagger = asset_prefix(SWAGGER_UI)
    redoc = asset_prefix(REDOC)
    bundle = redoc_bundle()
    bundle_etag = '"' + hashlib.sha256(bundle).hexdigest()[:32] + '"'

    # Before the mount below, which would answer the file as it is on disk.
    @app.api_route(f"{redoc}/{REDOC_BUNDLE}", methods=["GET", "HEAD"], include_in_schema=False)
    async def redoc_script(request: Request) -> Response:
        headers = {"Cache-Control": CACHE_CONTROL, "ETag": bundle_etag, **NOSNIFF}
        if request.headers.get("if-none-match") == bundle_etag:
            return Response(status_code=304, headers=headers)
        return Response(bundle, media_type="text/javascript; charset=utf-8", headers=headers)

    for package, prefix in ((SWAGGER_UI, swagger), (REDOC, redoc)):
        app.mount(prefix, ImmutableFiles(directory=ASSETS / package), name=f"docs-{package}")

    def root(request: Request) -> str:
        # Behind a proxy that mounts the service under a prefix, as FastAPI's pages do.
        return str(request.scope.get("root_path", "")).rstrip("/")

    @app.api_route("/docs", methods=["GET", "HEAD"], include_in_schema=False)
    async def swagger_ui_page(request: Request) -> HTMLResponse:
        base = root(request)
        page = get_swagger_ui_html(
            openapi_url=base + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{base}{swagger}/swagger-ui-bundle.js",
            swagger_css_url=f"{base}{swagger}/swagger-ui.css",
            swagger_favicon_url=f"{base}{swagger}/favicon-32x32.png",
            oauth2_redirect_url=base + oauth2_redirect_url if oauth2_redirect_url else None,
            init_oauth=app.swagger_ui_init_oauth,
            swagger_ui_parameters=app.swagger_ui_parameters,
        )
        page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        page.headers.update(NOSNIFF)
        return page

    if oauth2_redirect_url:
        # Kept as FastAPI served it: Swagger UI's helper page for OAuth2 logins (inline).
        @app.api_route(oauth2_redirect_url, methods=["GET", "HEAD"], include_in_schema=False)
        async def swagger_ui_oauth2_redirect() -> HTMLResponse:
            return get_swagger_ui_oauth2_redirect_html()

    @app.api_route("/redoc", methods=["GET", "HEAD"], include_in_schema=False)
    async def redoc_page(request: Request) -> HTMLResponse:
        base = root(request)
        page = get_redoc_html(
            openapi_url=base + openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{base}{redoc}/redoc.standalone.js",
            redoc_favicon_url=f"{base}{swagger}/favicon-32x32.png",
            with_google_fonts=False,
        )
        page.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        page.headers.update(NOSNIFF)
        return page
