"""The README is read by people who have only this repository: everything it points to
is in it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
# [text](target) and ![alt](target); the target ends at a space (a title) or `)`.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def test_the_readme_names_no_path_outside_the_repository() -> None:
    assert "shared/" not in README.read_text()


def test_every_relative_link_of_the_readme_points_to_a_file_of_the_repository() -> None:
    targets = LINK.findall(README.read_text())
    assert targets, "the README links to its documents"
    for target in targets:
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL, or a heading of the README itself
        path = (README.parent / target.split("#", 1)[0]).resolve()
        assert path.is_relative_to(ROOT), target
        assert path.is_file(), f"README.md links to {target}, which is not in the repository"
