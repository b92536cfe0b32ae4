"""Console benchmark (contract H, issue item 6): with 10,000 contacts in a workspace, how long
the contacts board takes to become interactive, and how long a drag takes to be saved —
measured in Debian's chromium driven by Playwright against `chatcrm serve`, on SQLite and
PostgreSQL. Prints figures; never asserts.

    python bench/console.py [--contacts 10000] [--runs 7] [--drags 10] [--backends sqlite]

Targets: the board interactive in under 1 s; a drag saved in under 100 ms.

- Interactive: from the start of the navigation to the first animation frame after the
  board (every column with its cards) is in the page — the page is painted and free for
  the next input.
- Drag saved: from the `drop` event to the moment the page holds the answer of the update
  (`PUT` with `If-Match`) that saves the move.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
from pathlib import Path
from typing import Any

from playwright.sync_api import Page, sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench import seed
from bench.run import ADMIN_URL, BIN, RESULTS, free_port, start, stop, wait_ready

CHROMIUM = "/usr/bin/chromium"

# Installed before the page's own scripts: the moments measured, on the page's clock.
_PROBES = """
window.__bench = { ready: null, drops: [], saves: [] };
new MutationObserver((_, observer) => {
  const board = document.querySelector(".board");
  if (board && board.querySelector("section article")) {
    observer.disconnect();
    requestAnimationFrame(() => { window.__bench.ready = performance.now(); });
  }
}).observe(document, { childList: true, subtree: true });
document.addEventListener("drop", () => window.__bench.drops.push(performance.now()), true);
const fetched = window.fetch;
window.fetch = async (...args) => {
  const response = await fetched(...args);
  const method = (args[1] && args[1].method) || "GET";
  if (method === "PUT") window.__bench.saves.push(performance.now());
  return response;
};
"""


def _signed_in(page: Page, base: str, data: seed.Seeded) -> None:
    page.goto(f"{base}/console")
    page.evaluate(
        "([key, ws]) => { sessionStorage.setItem('chatcrm.key', key);"
        " sessionStorage.setItem('chatcrm.workspace', ws); }",
        [data.api_key, data.workspace_id],
    )


def board_loads(page: Page, base: str, runs: int) -> list[float]:
    """Milliseconds from navigation start to the interactive board, once per run."""
    out = []
    for _ in range(runs):
        page.reload()
        page.wait_for_function("window.__bench && window.__bench.ready !== null", timeout=60_000)
        out.append(page.evaluate("window.__bench.ready"))
    return out


def drags(page: Page, drags_count: int) -> list[float]:
    """Milliseconds from each drop to the saved answer: the first card of the first column
    dragged to the second column, and back."""
    columns = page.locator("section.column")
    out = []
    for i in range(drags_count):
        source, target = (
            (columns.nth(0), columns.nth(1)) if i % 2 == 0 else (columns.nth(1), columns.nth(0))
        )
        saves = page.evaluate("window.__bench.saves.length")
        source.locator("article").first.drag_to(target.locator(".cards"))
        page.wait_for_function(f"window.__bench.saves.length > {saves}", timeout=30_000)
        page.wait_for_load_state("load")
        drop = page.evaluate("window.__bench.drops[window.__bench.drops.length - 1]")
        saved = page.evaluate("window.__bench.saves[window.__bench.saves.length - 1]")
        out.append(saved - drop)
        page.wait_for_timeout(300)  # let the board settle before the next drag
    return out


def _summary(values: list[float]) -> str:
    if not values:
        return "(not measured)"
    ordered = sorted(values)
    return (
        f"median {statistics.median(ordered):7.1f} ms   best {ordered[0]:7.1f}   "
        f"worst {ordered[-1]:7.1f}   (n={len(ordered)})"
    )


def bench_backend(backend: str, args: argparse.Namespace) -> dict[str, Any]:
    url = asyncio.run(seed.fresh_database(backend, ADMIN_URL))
    data = asyncio.run(seed.seed(url, contacts_count=args.contacts, opportunities_count=0))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {**os.environ, "CHATCRM_RATE_LIMIT": "0"}
    command = [str(BIN / "chatcrm"), "serve", "--database-url", url, "--port", str(port)]
    proc = start(command, env, RESULTS / f"console-{backend}.log")
    try:
        wait_ready(f"{base}/ready")
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
            )
            # Playwright evaluates the probes, which the page's policy (no eval) would refuse.
            context = browser.new_context(viewport={"width": 1280, "height": 800}, bypass_csp=True)
            context.add_init_script(_PROBES)
            page = context.new_page()
            _signed_in(page, base, data)
            page.goto(f"{base}/console#contacts")
            page.reload()  # a first load warms the server's caches
            page.locator("section.column article").first.wait_for(timeout=60_000)
            loads = board_loads(page, base, args.runs)
            saved = drags(page, args.drags)
            browser.close()
    finally:
        stop(proc)
    return {"loads": loads, "drags": saved}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--contacts", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--drags", type=int, default=10)
    parser.add_argument("--backends", default="sqlite,postgresql")
    args = parser.parse_args()
    RESULTS.mkdir(exist_ok=True)
    print(f"console: {args.contacts:,} contacts in the workspace, chromium at 1280x800")
    for backend in args.backends.split(","):
        figures = bench_backend(backend, args)
        print(f"{backend:>10}  board interactive  {_summary(figures['loads'])}   target < 1000 ms")
        print(f"{backend:>10}  drag saved         {_summary(figures['drags'])}   target < 100 ms")


if __name__ == "__main__":
    main()
