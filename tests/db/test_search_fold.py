"""SQLite's search fold (db/engine.py `fold`) against PostgreSQL's (migration 0011's
chatcrm_fold over `unaccent`), character by character: a search finds the same rows on
both."""

from __future__ import annotations

import asyncio
import unicodedata
import uuid

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.engine import fold
from tests.client import Api, ok_data
from tests.conftest import create_pg_database, drop_pg_database, migrate, new_account
from tests.in_process import InProcessClient
from tests.people.conftest import person

# Every assigned code point below U+30000 (Python's Unicode tables), surrogates aside.
_CHARACTERS = [
    chr(cp)
    for cp in range(0x80, 0x30000)
    if not 0xD800 <= cp < 0xE000 and unicodedata.category(chr(cp)) != "Cn"
]


def test_every_character_folds_as_postgresql_folds_it(database_url: str, backend: str) -> None:
    if backend == "sqlite":
        pytest.skip("compares SQLite's fold with PostgreSQL's: run on a PostgreSQL database")
    letters = _CHARACTERS
    url = make_url(database_url).set(drivername="postgresql").render_as_string(False)

    async def folded() -> tuple[bool, list[str]]:
        conn = await asyncpg.connect(url, timeout=10)
        try:
            with_unaccent = await conn.fetchval(
                "SELECT count(*) > 0 FROM pg_extension WHERE extname = 'unaccent'"
            )
            rows = await conn.fetch(
                "SELECT chatcrm_fold(x) AS f FROM unnest($1::text[]) WITH ORDINALITY AS t(x, i)"
                " ORDER BY i",
                letters,
            )
            return bool(with_unaccent), [r["f"] for r in rows]
        finally:
            await conn.close()

    with_unaccent, theirs = asyncio.run(folded())
    if not with_unaccent:
        pytest.skip("this PostgreSQL has no unaccent: its fold is the documented translation")
    differ = {ch: (fold(ch), pg) for ch, pg in zip(letters, theirs, strict=True) if fold(ch) != pg}
    assert differ == {}


def test_a_database_whose_ctype_is_c_searches_every_script_without_case() -> None:
    """PostgreSQL's lower() under `LC_CTYPE 'C'` lowers ASCII alone: a search for
    `андрей` missed "Андрей" there, though any collation is allowed (docs/operations.md).
    Migration 0019 lowers with a Unicode-aware collation in such a database."""
    url = create_pg_database(locale="ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
    try:
        migrate(url)
        account = new_account(url)
        settings = Settings(database_url=url, rate_limit=0, access_log=False, dispatch=False)
        with InProcessClient(create_app(settings), raise_server_exceptions=False) as http:
            api = Api(http, account)
            for n, name in enumerate(("Андрей", "Οδυσσέας", "Núñez")):
                ok_data(api.post("/api/contact", json={"name": name, "email": f"c{n}@example.com"}))
            for query, found in (
                ("андрей", "Андрей"), ("АНДРЕЙ", "Андрей"), ("ΟΔΥΣ", "Οδυσσέας"),
                ("οδυσσεας", "Οδυσσέας"), ("NUNEZ", "Núñez"),
            ):  # fmt: skip
                listed = ok_data(api.get("/api/contact", params={"q": query}))["data"]
                assert [c["name"] for c in listed] == [found], query
    finally:
        drop_pg_database(url)


def test_a_database_whose_ctype_is_c_links_agents_by_e_mail_in_any_script() -> None:
    """A user is its workspace's agents whose e-mail is its own, in any case (docs/api.md
    10.5); the agents' side was lowered by the database, whose lower() under `LC_CTYPE
    'C'` leaves "Ö" as it is: an assigned-only agent özge@… lost the contacts of the agent
    ÖZGE@…, and its user record their link."""
    url = create_pg_database(locale="ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
    try:
        migrate(url)
        account = new_account(url)
        settings = Settings(database_url=url, rate_limit=0, access_log=False, dispatch=False)
        with InProcessClient(create_app(settings), raise_server_exceptions=False) as http:
            api = Api(http, account)
            email = f"özge.{uuid.uuid4().hex[:8]}@firma.de"
            agent = api.add_agent(name="Özge", email=email.upper())
            mine = api.create_contact(name="Assigned", assignedAgentId=agent["id"])
            api.create_contact(name="Elsewhere", assignedAgentId=api.add_agent(name="B")["id"])
            body = {"paramToUpdate": "agentsSeeOnlyAssigned", "agentsSeeOnlyAssigned": True}
            ok_data(api.put(f"/api/workspace/{api.ws}", json=body))
            user = person(api, "agent", email=email)
            listed = user.request("GET", "/api/contact", headers={"x-workspace-id": api.ws})
            assert [c["id"] for c in ok_data(listed)["data"]] == [mine["id"]]
            record = ok_data(api.get(f"/api/user/{user.user['id']}", workspace=None))
            assert record["user"]["agentIds"] == [agent["id"]]
    finally:
        drop_pg_database(url)
