"""SQLite's search fold (db/engine.py `fold`) against PostgreSQL's (migration 0011's
chatcrm_fold over `unaccent`), letter by letter: a search finds the same rows on both."""

from __future__ import annotations

import asyncio
import unicodedata

import asyncpg
import pytest
from sqlalchemy.engine import make_url

from chatcrm.db.engine import fold
from chatcrm.db.unaccent_letters import UNACCENT_LETTERS

# The Latin blocks of names: Latin-1, Extended-A and -B, and Extended Additional.
_LATIN = [
    chr(cp)
    for block in ((0xC0, 0x250), (0x1E00, 0x1F00))
    for cp in range(*block)
    if unicodedata.category(chr(cp)).startswith("L")
]


# Letters unaccent leaves whole that decomposition takes apart (`ǽ` → `æ`): SQLite
# finds `æ` in them, PostgreSQL does not (docs/api.md, how a search is found).
KEPT_WHOLE_BY_UNACCENT = set("ǢǣǮǯǼǽǾǿẛ")


def test_every_latin_letter_folds_as_postgresql_folds_it(database_url: str, backend: str) -> None:
    if backend == "sqlite":
        pytest.skip("compares SQLite's fold with PostgreSQL's: run on a PostgreSQL database")
    letters = sorted(set(_LATIN) | set(UNACCENT_LETTERS))
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
    assert set(differ) == KEPT_WHOLE_BY_UNACCENT
