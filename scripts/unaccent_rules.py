"""Write src/chatcrm/db/unaccent_rules.py from PostgreSQL's unaccent rules.

A search ignores case and accents through one function, chatcrm_fold: on PostgreSQL
`lower(unaccent(…))`, on SQLite db/engine.py `fold`. For both to find the same rows,
SQLite's takes off exactly what unaccent takes off: every rule of its file, each one
character (a letter with an accent, a ligature, a full-width form, a combining mark that
goes away), none more — Unicode decomposition would also take apart letters unaccent
keeps (`й`, `ガ`, Hangul syllables) and find what PostgreSQL does not.

    python3 scripts/unaccent_rules.py /usr/share/postgresql/15/tsearch_data/unaccent.rules
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "src" / "chatcrm" / "db" / "unaccent_rules.py"


def main(rules: Path) -> None:
    table: dict[str, str] = {}
    for line in rules.read_text(encoding="utf-8").splitlines():
        source, _, plain = line.partition("\t")
        if len(source) != 1:
            raise SystemExit(f"a rule of more than one character: {line!r}")
        table[source] = plain.strip()  # as unaccent reads a rule: `¼\t 1/4` is `1/4`
    body = "\n".join(
        f"    {k!r}: {v!r},  # {unicodedata.name(k, f'U+{ord(k):04X}')}" for k, v in table.items()
    )
    TARGET.write_text(
        '"""What PostgreSQL\'s `unaccent` replaces, and by what (an empty string: taken off),\n'
        "for SQLite's search fold (db/engine.py `fold`). Written by `scripts/unaccent_rules.py`\n"
        'from PostgreSQL 15\'s unaccent.rules; do not edit."""\n\n'
        "UNACCENT_RULES = {\n" + body + "\n}\n",
        encoding="utf-8",
    )
    print(f"{len(table)} rules written to {TARGET.name}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
