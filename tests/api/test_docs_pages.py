"""The documentation pages (/docs, /redoc) load every file from the service itself.
tests/browser/ renders them in a real browser."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from fastapi.testclient import TestClient

import chatcrm
from chatcrm.api import docs
from chatcrm.app import create_app
from chatcrm.config import Settings
from tests.client import error

REPOSITORY = Path(__file__).resolve().parents[2]
ASSETS = Path(chatcrm.__file__).parent / "api" / "docs_assets"
# Asset URLs carry their package's version, so browsers may keep the files for good.
CACHE_CONTROL = "public, max-age=31536000, immutable"
PAGES = ("/docs", "/redoc")
# Anything the pages used to load from: CDNs, web fonts, FastAPI's site (the favicon).
THIRD_PARTIES = ("cdn.jsdelivr", "unpkg.com", "cdnjs", "fonts.googleapis", "fastapi.tiangolo.com")
CONTENT_TYPES = {".js": "text/javascript", ".css": "text/css", ".png": "image/png"}
_LINKED = re.compile(r"""\b(?:src|href)\s*=\s*["']([^"']*)["']""")


def linked_urls(html: str) -> list[str]:
    """The URLs a page's tags load (scripts, styles, icons)."""
    return _LINKED.findall(html)


def test_pages_load_only_files_of_the_service(http: TestClient) -> None:
    for page in PAGES:
        response = http.get(page)
        assert response.status_code == 200, page
        assert response.headers["content-type"].startswith("text/html")
        html = response.text
        assert "/openapi.json" in html
        for name in THIRD_PARTIES:
            assert name not in html, (page, name)
        urls = linked_urls(html)
        assert len(urls) >= 2, (page, urls)  # a script and the icon at least
        for url in urls:
            assert url.startswith("/docs-assets/"), (page, url)
            asset = http.get(url)
            assert asset.status_code == 200, url
            assert asset.headers["cache-control"] == CACHE_CONTROL
            assert asset.headers["content-type"].startswith(CONTENT_TYPES[Path(url).suffix])
            # The very bytes of the package: /docs-assets/<package>@<version>/<file>
            package, file = url.removeprefix("/docs-assets/").split("/", 1)
            if file == docs.REDOC_BUNDLE:  # served with its logo's address made local
                assert asset.content == docs.redoc_bundle()
                assert docs.REDOCLY_LOGO_URL.encode() not in asset.content
                continue
            assert asset.content == (ASSETS / package.split("@")[0] / file).read_bytes()


_ABSOLUTE = re.compile(r"""https?://[^\s"'<>)]+""")


def test_redoc_names_no_other_origin(http: TestClient) -> None:
    """Nothing the ReDoc page or its script would load lives elsewhere (the logo
    included); XML namespaces and plain links are not loads."""
    html = http.get("/redoc").text
    assert [u for u in _ABSOLUTE.findall(html) if not u.startswith(str(http.base_url))] == []
    script = next(u for u in linked_urls(html) if u.endswith(".js"))
    body = http.get(script).text
    assert "cdn.redoc.ly" not in body
    assert docs.LOCAL_LOGO_URL in body
    again = http.get(script, headers={"If-None-Match": http.get(script).headers["etag"]})
    assert again.status_code == 304


def test_the_console_answers_head_like_get_and_has_an_icon(http: TestClient) -> None:
    for path in ("/console", "/console/"):
        got, head = http.get(path), http.head(path)
        assert head.status_code == got.status_code == 200, path
        assert head.headers["content-type"] == got.headers["content-type"]
        assert head.headers["content-security-policy"] == got.headers["content-security-policy"]
        assert head.content == b""
    assert '<link rel="icon" type="image/svg+xml" href="/console/static/favicon.svg">' in (
        http.get("/console").text
    )
    icon = http.get("/console/static/favicon.svg")
    assert icon.status_code == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    root_icon = http.get("/favicon.ico")
    assert root_icon.status_code == 200
    assert root_icon.headers["content-type"].startswith("image/svg+xml")
    assert http.head("/favicon.ico").status_code == 200


def test_swagger_ui_and_redoc_files_are_linked(http: TestClient) -> None:
    swagger = linked_urls(http.get("/docs").text)
    assert {Path(u).name for u in swagger} >= {"swagger-ui-bundle.js", "swagger-ui.css"}
    redoc = linked_urls(http.get("/redoc").text)
    assert "redoc.standalone.js" in {Path(u).name for u in redoc}


def test_pages_answer_head_without_a_body(http: TestClient) -> None:
    for page in PAGES:
        response = http.head(page)
        assert response.status_code == 200, page
        assert response.headers["content-type"].startswith("text/html")
        assert response.content == b""


def test_assets_revalidate_with_their_etag(http: TestClient) -> None:
    url = next(u for u in linked_urls(http.get("/docs").text) if u.endswith(".css"))
    first = http.get(url)
    again = http.get(url, headers={"If-None-Match": first.headers["etag"]})
    assert again.status_code == 304
    assert again.headers["cache-control"] == CACHE_CONTROL


@pytest.mark.parametrize("asset", ["/console/static/app.js", "docs"])
def test_a_range_asked_of_a_file_gets_it_whole_in_every_case(http: TestClient, asset: str) -> None:
    """Starlette answered a malformed or unsatisfiable Range with a plain-text 400 or an
    empty 416: the only answers outside the envelope (operations.md 4.6). Files are
    small; they are answered whole."""
    if asset == "docs":
        asset = next(u for u in linked_urls(http.get("/docs").text) if u.endswith(".css"))
    whole = http.get(asset)
    assert whole.status_code == 200
    for asked in ("bytes=5-1", "bytes=999999999-", "bytes=0-9", "pages=1", "bytes=x"):
        answer = http.get(asset, headers={"Range": asked})
        assert answer.status_code == 200, (asked, answer.status_code, answer.text[:80])
        assert answer.content == whole.content and "content-range" not in answer.headers


def test_the_console_page_is_served_only_as_the_console(http: TestClient) -> None:
    """Its file under /console/static would be a copy without its policy or its links."""
    error(http.get("/console/static/index.html"), 404, "NOT_FOUND")
    assert "content-security-policy" in http.get("/console").headers


def test_pages_and_files_say_their_type_is_not_to_be_guessed(http: TestClient) -> None:
    script = next(u for u in linked_urls(http.get("/docs").text) if u.endswith(".js"))
    # ReDoc's script is answered by a route of its own (its bundle), not the files' mount.
    redoc = next(u for u in linked_urls(http.get("/redoc").text) if u.endswith(".js"))
    for path in ("/console", "/console/static/app.js", "/docs", "/redoc", script, redoc):
        answer = http.get(path)
        assert answer.headers.get("x-content-type-options") == "nosniff", path


def test_unknown_assets_are_404_in_the_envelope(http: TestClient) -> None:
    script = next(u for u in linked_urls(http.get("/redoc").text) if u.endswith(".js"))
    folder = script.rsplit("/", 1)[0]
    package = folder.removeprefix("/docs-assets/").split("@")[0]
    for url in (
        f"{folder}/nothing.js",
        f"/docs-assets/{package}@0.0.0/redoc.standalone.js",  # another version's URL
        f"{folder}/..%2F..%2Fdocs.py",  # no way out of the assets folder
        "/docs-assets/",
    ):
        error(http.get(url), 404, "NOT_FOUND")


def test_pages_allow_nothing_from_other_origins(http: TestClient) -> None:
    """The browser itself refuses to fetch anything for the pages from another origin."""
    for page in PAGES:
        policy = http.get(page).headers["content-security-policy"]
        directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
        assert directives["default-src"] == "'self'"
        for directive, sources in directives.items():
            for source in sources.split():
                assert source in {"'self'", "'unsafe-inline'", "data:", "blob:"}, directive


@pytest.fixture
def behind_a_prefix(settings: Settings) -> Iterator[TestClient]:
    """The app as a proxy that serves it under /crm presents it (ASGI root_path)."""
    with TestClient(create_app(settings), root_path="/crm") as client:
        yield client


def test_pages_follow_the_proxy_prefix(behind_a_prefix: TestClient) -> None:
    for page in PAGES:
        html = behind_a_prefix.get(page).text
        assert "/crm/openapi.json" in html
        urls = linked_urls(html)
        assert urls
        for url in urls:
            assert url.startswith("/crm/docs-assets/"), url


# --- the package ---------------------------------------------------------------------------


def test_no_third_party_address_in_the_package() -> None:
    package = Path(chatcrm.__file__).parent
    files = [p for p in package.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert any(p.suffix == ".js" for p in files)
    for path in files:
        content = path.read_bytes()
        for name in THIRD_PARTIES:
            assert name.encode() not in content, (path, name)


def test_every_asset_is_package_data() -> None:
    """A non-editable install gets the files only if pyproject.toml's package-data names them."""
    pyproject = tomllib.loads((REPOSITORY / "pyproject.toml").read_text(encoding="utf-8"))
    package = REPOSITORY / "src" / "chatcrm"
    patterns = pyproject["tool"]["setuptools"]["package-data"]["chatcrm"]
    shipped = {p for pattern in patterns for p in package.glob(pattern)}
    assets = {p for p in ASSETS.rglob("*") if p.is_file()}
    assert assets
    assert assets <= shipped, sorted(str(p) for p in assets - shipped)


def fetch_script() -> ModuleType:
    path = REPOSITORY / "scripts" / "fetch_docs_assets.py"
    spec = importlib.util.spec_from_file_location("fetch_docs_assets", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def test_assets_are_the_pinned_versions_with_their_licenses() -> None:
    """The committed folders hold what scripts/fetch_docs_assets.py would write (names and
    versions; `--check` compares the bytes, with the network), and each its license."""
    script = fetch_script()
    assert script.TARGET == ASSETS
    pinned = {package.name: package for package in script.PINNED}
    assert {p.name for p in ASSETS.iterdir() if p.is_dir()} == set(pinned)
    for name, package in pinned.items():
        folder = ASSETS / name
        assert {p.name for p in folder.iterdir()} == set(package.files.values()), name
        assert "LICENSE" in package.files.values()
        version = json.loads((folder / "package.json").read_text(encoding="utf-8"))["version"]
        assert version == package.version, name
