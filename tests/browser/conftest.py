"""Browser tests: Playwright for Python driving Debian's chromium against a real
`chatcrm serve`, with every request that leaves the server's origin refused.

Never a browser that Playwright downloads: /usr/bin/chromium from Debian's package
`chromium`, installed here with apt-get when it is missing and the tests run as root.
When it cannot be had, the tests fail under CI=true; elsewhere they are skipped, with a
banner at the end of the run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Page, Request, Response, Route, sync_playwright

from chatcrm.provisioning import NewAccount
from tests.conftest import IN_CI, databases_per_backend
from tests.machine import installing
from tests.test_e2e import serve

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",  # the tests may run as root, where chromium's sandbox refuses to start
    "--disable-gpu",
    # Without these chromium opens connections of its own (updates, sync, Google's hosts),
    # which a closed network refuses, slowly.
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
APT_TIMEOUT = 1200.0
# The console always has a long poll of the events feed in flight (live updates), so
# "network idle" never comes: a page has settled when no other request has been in flight
# for this long (the idle time Playwright's "networkidle" waits for, shortened).
QUIET_SECONDS = 0.3
SETTLE_TIMEOUT = 30.0
LONG_POLL = "/api/events"
_skip_reason: list[str] = []


def _usable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _apt_get(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["apt-get", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"},
        stdin=subprocess.DEVNULL,
        timeout=APT_TIMEOUT,
        check=False,
    )


def _install_chromium() -> str | None:
    """Install Debian's chromium with apt-get; None when that worked, else why it did not."""
    if os.geteuid() != 0:
        return "not running as root, so it cannot be installed here"
    if shutil.which("apt-get") is None:
        return "apt-get is not available"
    install = ("install", "-y", "--no-install-recommends", "chromium")
    try:
        done = _apt_get(*install)
        if done.returncode != 0:
            # Usually a stale package index: it names a version the mirror no longer has.
            _apt_get("update")
            done = _apt_get(*install)
    except subprocess.TimeoutExpired as exc:
        return f"`apt-get {' '.join(exc.cmd[1:])}` took over {APT_TIMEOUT:.0f} s"
    if done.returncode != 0:
        last = (done.stderr.strip() or done.stdout.strip()).splitlines()[-3:]
        return f"`apt-get install chromium` failed: {' / '.join(last)}"
    return None


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _skip_reason:
        terminalreporter.write_sep("!", "BROWSER TESTS WERE SKIPPED", red=True, bold=True)
        terminalreporter.write_line(_skip_reason[0], red=True)
        terminalreporter.write_line(
            "Install Debian's chromium (apt-get install chromium) to run them.", red=True
        )


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium, installed if need be (the skip or failure is remembered)."""
    if not _usable(CHROMIUM):
        with installing():  # another test process may be installing it right now
            problem = None if _usable(CHROMIUM) else _install_chromium()
        if not _usable(CHROMIUM):
            reason = f"Debian's chromium ({CHROMIUM}) is missing: {problem or 'not installed'}"
            if IN_CI:
                pytest.fail(f"{reason}; CI must run the browser tests", pytrace=False)
            _skip_reason.append(reason)
            pytest.skip(f"SKIPPING BROWSER TESTS: {reason}")
    return CHROMIUM


@pytest.fixture(scope="module")
def browser(chromium: Path) -> Iterator[Browser]:
    """One headless chromium for the module's tests; each test opens its own context."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real `chatcrm serve` on a free port and a new SQLite file; its base URL."""
    database = tmp_path_factory.mktemp("browser") / "chatcrm.db"
    with serve(f"sqlite:///{database}") as running:
        yield running.base_url


# One real `chatcrm serve` on the run's backend for all the console's modules, started once
# per test process instead of once per module (a start is about two seconds of imports).
# Each test works in an account of its own, as it did on a server of its module's. One
# server, not one per kind: every server on a database sends its channels' messages, so
# a second one, refusing 127.0.0.1, would claim some of the fake Graph API's sends.


# The console's server runs a webhook dispatcher and a channel sender, which claim whatever
# is due in their whole database. So the browser tests keep a database of their own, each
# backend's, and make their accounts there: the shared in-process app's tests read delivery
# rows and compare workspaces that no dispatcher may change meanwhile.
database_url = databases_per_backend("database_url")


@pytest.fixture(scope="session")
def console_server(database_url: str) -> Iterator[str]:
    """A real `chatcrm serve` on the backend of this run, whose channels may call a Graph
    API on 127.0.0.1 (tests/browser/graph_fake.py)."""
    with serve(database_url, env={"CHATCRM_WEBHOOK_ALLOW_PRIVATE": "1"}) as running:
        yield running.base_url


# Collects what the page's Content-Security-Policy refused, requests and inline code alike.
_RECORD_POLICY_VIOLATIONS = """
window.__refused = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__refused.push(e.effectiveDirective + " " + e.blockedURI);
});
"""


def _long_poll(request: Request) -> bool:
    return urlsplit(request.url).path.endswith(LONG_POLL)


@dataclass
class Visit:
    """A page whose requests may only go to the server; what was refused or went wrong."""

    page: Page
    base_url: str
    blocked: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    in_flight: set[Request] = field(default_factory=set)

    def goto(self, path: str) -> None:
        response = self.page.goto(self.base_url + path)
        assert response is not None and response.status == 200, path

    def settle(self, *, expected: tuple[str, ...] = ()) -> list[str]:
        """Wait until no request but the events feed's long poll is in flight; check that
        none went elsewhere than the server, failed or was answered with an error (but the
        failures the test caused, which start with one of `expected`, such as "401 "), and
        that no script threw. Returns what the page's own policy refused ("<directive>
        <URL>"), for the test to judge."""
        self.page.wait_for_load_state("load")
        deadline = time.monotonic() + SETTLE_TIMEOUT
        quiet_since: float | None = None
        while True:
            busy = sorted(r.url for r in self.in_flight if not _long_poll(r))
            now = time.monotonic()
            if busy:
                quiet_since = None
                assert now < deadline, f"requests still in flight: {busy}"
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= QUIET_SECONDS:
                break
            self.page.wait_for_timeout(50)  # lets Playwright deliver the page's events
        assert self.blocked == [], f"the page asked for outside resources: {self.blocked}"
        self.failed = [f for f in self.failed if not f.startswith(expected or ("\0",))]
        assert self.failed == [], f"requests that failed: {self.failed}"
        assert self.errors == [], f"script errors: {self.errors}"
        refused: list[str] = self.page.evaluate("window.__refused")
        return sorted(set(refused))


@pytest.fixture
def visit(browser: Browser, server: str) -> Iterator[Visit]:
    context = browser.new_context()
    # Playwright's 30 s for a click or a page load: Swagger UI alone took 13 s to render
    # every operation on a loaded 2-core machine, so a slower one would fail by the clock.
    context.set_default_timeout(60_000)
    context.add_init_script(_RECORD_POLICY_VIOLATIONS)
    blocked: list[str] = []

    def only_the_server(route: Route) -> None:
        url = route.request.url
        if url.startswith(server + "/"):
            route.continue_()
        else:
            blocked.append(url)
            route.abort()

    context.route("**/*", only_the_server)
    visit = Visit(page=context.new_page(), base_url=server, blocked=blocked)

    def on_response(response: Response) -> None:
        if response.status >= 400:
            visit.failed.append(f"{response.status} {response.url}")

    def on_request_failed(request: Request) -> None:
        visit.in_flight.discard(request)
        # Refused by this test (listed in `blocked`) or by the page's policy (`settle`);
        # the events feed's long poll is cut short on purpose (sign-out, leaving the page).
        aborted_poll = _long_poll(request) and request.failure == "net::ERR_ABORTED"
        if request.url not in blocked and request.failure != "csp" and not aborted_poll:
            visit.failed.append(f"{request.failure} {request.url}")

    def on_request(request: Request) -> None:
        visit.in_flight.add(request)

    def on_request_finished(request: Request) -> None:
        visit.in_flight.discard(request)

    visit.page.on("request", on_request)
    visit.page.on("requestfinished", on_request_finished)
    visit.page.on("response", on_response)
    visit.page.on("requestfailed", on_request_failed)
    visit.page.on("pageerror", lambda exc: visit.errors.append(str(exc)))
    try:
        yield visit
    finally:
        context.close()


def answer_unavailable(route: Route) -> None:
    """Answer an intercepted request as the service does when its database is out of
    reach a moment (503, the envelope): what the console must ride out."""
    body = '{"success":false,"code":503,"errorCode":"SERVICE_UNAVAILABLE",'
    body += '"message":"The database is unreachable; retry shortly.","data":null}'
    route.fulfill(status=503, body=body, content_type="application/json")


def refusing_first(
    *answers: Callable[[Route], None],
) -> tuple[Callable[[Route], None], list[str]]:
    """A route handler that answers the first requests it meets with `answers`, one each
    in turn, then lets every later one through; and the URLs it answered so."""
    refused: list[str] = []

    def handle(route: Route) -> None:
        if len(refused) >= len(answers):
            route.continue_()
            return
        refused.append(route.request.url)
        answers[len(refused) - 1](route)

    return handle, refused


def api(server: str, account: NewAccount, method: str, path: str, **kw: Any) -> Any:
    """A call of the JSON API as the account's key, in its workspace; its `data` (200 only)."""
    headers = {"Authorization": f"Bearer {account.api_key}", "x-workspace-id": account.workspace_id}
    headers.update(kw.pop("headers", {}))
    response = httpx.request(method, server + path, headers=headers, timeout=30, **kw)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def sign_in(visit: Visit, account: NewAccount) -> None:
    """Sign in on the console's page with the account's key and open its workspace."""
    page = visit.page
    page.get_by_role("link", name="Sign in with an API key").click()
    page.get_by_label("API key").fill(account.api_key)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="Test workspace").click()


def create(server: str, account: NewAccount, kind: str, **body: Any) -> str:
    """A new contact or opportunity (`kind`) made through the API; its id."""
    record_id: str = api(server, account, "POST", f"/api/{kind}", json=body)["id"]
    return record_id


def update(server: str, account: NewAccount, kind: str, record_id: str, **body: Any) -> None:
    """Update Contact or Opportunity in the newer form: every body key names a field."""
    query = {"id": record_id, "workspaceId": account.workspace_id}
    api(server, account, "PUT", f"/api/{kind}", params=query, json=body)
