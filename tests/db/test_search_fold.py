"""SQLite's search fold (db/engine.py `fold`) against PostgreSQL's (migration 0011's
chatcrm_fold over `unaccent`), character by character: a search finds the same rows on
both."""

from __future__ import annotations

import asyncio
import unicodedata

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from chatcrm.db.engine import fold

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
