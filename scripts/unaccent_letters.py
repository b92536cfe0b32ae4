"""Write src/chatcrm/db/unaccent_letters.py from PostgreSQL's unaccent rules.

SQLite's search fold (db/engine.py `fold`) takes accents off with Unicode's compatibility
decomposition, which leaves whole the Latin letters drawn with a stroke, a hook or a bar
(`Ħ`, `Ŧ`, `Ƶ`) and the ligatures (`Æ`, `Œ`, `Þ`); PostgreSQL's `unaccent` maps them to
plain letters. This keeps the letters that unaccent maps and decomposition does not, so
that a search finds the same rows on both.

    python3 scripts/unaccent_letters.py /usr/share/postgresql/15/tsearch_data/unaccent.rules
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "src" / "chatcrm" / "db" / "unaccent_letters.py"


def decomposed(ch: str) -> str:
    parts = unicodedata.normalize("NFKD", ch)
    return "".join(c for c in parts if not unicodedata.combining(c)).casefold()


def main(rules: Path) -> None:
    letters: dict[str, str] = {}
    for line in rules.read_text(encoding="utf-8").splitlines():
        source, _, plain = line.partition("\t")
        if len(source) != 1 or not plain:
            continue
        if not unicodedata.category(source).startswith("L"):
            continue
        if not unicodedata.name(source, "").startswith("LATIN"):
            continue
        if decomposed(source) != plain.casefold():
            letters[source] = plain.casefold()
    body = "\n".join(f"    {k!r}: {v!r},  # {unicodedata.name(k)}" for k, v in letters.items())
    TARGET.write_text(
        '"""The Latin letters PostgreSQL\'s `unaccent` maps that Unicode decomposition leaves\n'
        "whole, and what they fold to (db/engine.py `fold`). Written by\n"
        '`scripts/unaccent_letters.py` from PostgreSQL 15\'s unaccent.rules; do not edit."""\n\n'
        "UNACCENT_LETTERS = {\n" + body + "\n}\n",
        encoding="utf-8",
    )
    print(f"{len(letters)} letters written to {TARGET.name}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
