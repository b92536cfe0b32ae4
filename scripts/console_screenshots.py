"""The screenshots of docs/console.md: a `chatcrm serve` on a fresh SQLite file, seeded with
a small sales team's demo data through the API, photographed in Debian's chromium at
1280×800 — the contacts board, the opportunities board, the pipeline view, a contact's
conversation and the Channels page.

    python scripts/console_screenshots.py [--out docs/console]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import sync_playwright
from sqlalchemy import bindparam, select, update

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.run import BIN, free_port, start, stop, wait_ready

from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Database
from chatcrm.db.engine import standalone_engine
from chatcrm.db.migrate import upgrade
from chatcrm.opportunities.kind import OPPORTUNITY
from chatcrm.provisioning import NewAccount, init_account

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
TAGS = [
    ("VIP", "#d9480f"),
    ("Wholesale", "#1c7ed6"),
    ("Follow-up", "#f59f00"),
    ("New lead", "#2f9e44"),
]
AGENTS = [("Lucía Torres", "lucia@example.com"), ("Mateo Ruiz", "mateo@example.com")]
FIRST = [
    "Ana",
    "Bruno",
    "Carla",
    "Diego",
    "Elena",
    "Fabio",
    "Gina",
    "Hugo",
    "Irene",
    "Javier",
    "Karen",
    "Luis",
    "Marta",
    "Nico",
    "Olga",
    "Pablo",
    "Rosa",
    "Sergio",
    "Tania",
    "Víctor",
]
LAST = ["Díaz", "Quispe", "Rojas", "Flores", "Castro", "Vargas", "Mendoza", "Silva"]
MESSAGES = [
    "Do you ship to Cusco?",
    "Can I get the price list?",
    "Thanks, I'll confirm today",
    "Is the blue one in stock?",
    "Please send the invoice",
    "Hello! I saw your ad",
]
DEALS = [
    "Office chairs",
    "Uniforms",
    "Catering",
    "Annual plan",
    "Printer fleet",
    "Web shop",
    "Coffee supply",
    "Event stand",
    "Solar panels",
    "Fleet GPS",
]


async def _account(url: str) -> NewAccount:
    """A demo account in a new, migrated database."""
    engine = standalone_engine(url, Settings(database_url=url))
    await upgrade(engine)
    await engine.dispose()
    db = Database(Settings(database_url=url))
    try:
        async with db.transaction() as conn:
            return await init_account(conn, workspace_name="Andes Store — sales")
    finally:
        await db.dispose()


CONVERSATION = [
    ("in", "Hello! I saw your ad for the office chairs"),
    ("out", "Hi Ana! Thanks for writing. Which model caught your eye?"),
    ("in", "The ergonomic one, black. Do you ship to Cusco?"),
    ("out", "Yes, 3 to 5 days to Cusco. For 12 chairs the price is S/ 450 each."),
    ("in", "Great, can you send the quote to my email?"),
]


def seed(base: str, account: NewAccount) -> str:
    """Stages, tags, agents, 36 contacts and 24 opportunities (some won, some lost), a
    conversation with the first contact and a WhatsApp channel; returns that contact."""
    rng = random.Random(7)
    ws = account.workspace_id
    headers = {"Authorization": f"Bearer {account.api_key}", "x-workspace-id": ws}
    with httpx.Client(base_url=base, headers=headers, timeout=30) as http:

        def call(method: str, path: str, **kw: Any) -> Any:
            response = http.request(method, path, **kw)
            response.raise_for_status()
            return response.json()["data"]

        tags = [
            call("POST", f"/api/workspace/{ws}/tags", json={"name": n, "color": c})["id"]
            for n, c in TAGS
        ]
        agents = [
            call("POST", f"/api/workspace/{ws}/agents", json={"name": n, "email": e})["id"]
            for n, e in AGENTS
        ]
        workspace = call("GET", f"/api/workspace/{ws}")
        contact_stages = [s["id"] for s in workspace["contactStages"]]
        opportunity_stages = [s["id"] for s in workspace["opportunityStages"]]
        contacts = []
        for i in range(36):
            body = {
                "name": FIRST[i % len(FIRST)],
                "lastname": LAST[i % len(LAST)],
                "platformId": 2,
                "phone": f"519{rng.randrange(10**7, 10**8)}",
                "stageId": contact_stages[min(i % 5, len(contact_stages) - 1)],
                "tags": rng.sample(tags, rng.choice([0, 1, 1, 2])),
                "assignedAgentId": agents[i % 2] if i % 3 else None,
            }
            contact = call("POST", "/api/contact", json=body)["contact"]
            contacts.append(contact["id"])
            change = {"lastMessage": rng.choice(MESSAGES)}
            if i % 7 == 3:
                change["isSolved"] = True
            call("PUT", f"/api/contact?id={contact['id']}&workspaceId={ws}", json=change)
        for i in range(24):
            body = {
                "name": f"{DEALS[i % len(DEALS)]} — {FIRST[i % len(FIRST)]}",
                "amount": rng.choice([450, 1200, 2500, 3800, 7200, 15000]) + rng.choice([0, 0.5]),
                "contactId": contacts[i],
                "stageId": opportunity_stages[i % len(opportunity_stages)],
                "assignedAgentId": agents[i % 2],
            }
            deal = call("POST", "/api/opportunity", json=body)["opportunity"]
            if i % 2 == 1:
                call(
                    "PUT",
                    f"/api/opportunity?id={deal['id']}&workspaceId={ws}",
                    json={"winLossStatus": 1 if i % 3 else 2},
                )
        start_at = utcnow() - timedelta(minutes=40)
        for i, (direction, text) in enumerate(CONVERSATION):
            body = {
                "direction": direction,
                "text": text,
                "createdAt": (start_at + timedelta(minutes=7 * i)).isoformat(),
            }
            call("POST", f"/api/contact/{contacts[0]}/messages/record", json=body)
        call(
            "POST",
            "/api/channel",
            json={
                "type": "whatsapp",
                "name": "Sales line",
                "phoneNumberId": "106540352242922",
                "displayPhoneNumber": "+51 1 555 0199",
                "accessToken": "demo-access-token",
                "appSecret": "demo-app-secret",
                "verifyToken": "moonlit-harbor-42",
            },
        )
        return str(contacts[0])


async def spread_outcomes(url: str) -> None:
    """Deals won and lost over the last six months (the API dates them now), so the
    pipeline's months read like a team's half year."""
    table = OPPORTUNITY.table
    db = Database(Settings(database_url=url))
    try:
        async with db.transaction() as conn:
            closed = await conn.fetch(
                select(table.c.id).where(table.c.win_loss_date.is_not(None)).order_by(table.c.code)
            )
            moved = (
                update(table)
                .where(table.c.id == bindparam("_id"))
                .values(win_loss_date=bindparam("_when"))
            )
            now = utcnow()
            for i, row in enumerate(closed):
                when = now - timedelta(days=30 * (i % 6))
                await conn.execute(moved, {"_id": row["id"], "_when": when})
    finally:
        await db.dispose()


def photograph(base: str, account: NewAccount, out: Path, contact_id: str) -> list[Path]:
    shots = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{base}/console")
        page.evaluate(
            "([key, ws]) => { sessionStorage.setItem('chatcrm.key', key);"
            " sessionStorage.setItem('chatcrm.workspace', ws); }",
            [account.api_key, account.workspace_id],
        )
        for view, name in (
            ("contacts", "contacts-board"),
            ("opportunities", "opportunities-board"),
            ("pipeline", "pipeline"),
        ):
            page.goto(f"{base}/console#{view}")
            page.reload()
            page.locator("section.column article, figure svg").first.wait_for()
            path = out / f"{name}.png"
            page.screenshot(path=str(path))
            shots.append(path)
        for view, name, ready in (
            (f"contacts/{contact_id}", "conversation", "text=Great, can you send the quote"),
            ("channels", "channels", "text=Sales line"),
        ):
            page.goto(f"{base}/console#{view}")
            page.reload()
            page.locator(ready).first.wait_for()
            path = out / f"{name}.png"
            page.screenshot(path=str(path))
            shots.append(path)
        browser.close()
    return shots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "console")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/demo.db"
        account = asyncio.run(_account(url))
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        env = {**os.environ, "CHATCRM_RATE_LIMIT": "0"}
        command = [str(BIN / "chatcrm"), "serve", "--database-url", url, "--port", str(port)]
        proc = start(command, env, Path(tmp) / "serve.log")
        try:
            wait_ready(f"{base}/ready")
            contact_id = seed(base, account)
            asyncio.run(spread_outcomes(url))
            for path in photograph(base, account, args.out, contact_id):
                print(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
        finally:
            stop(proc)


if __name__ == "__main__":
    main()
