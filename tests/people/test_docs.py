"""docs/api.md 10.2 is the table the gate uses: every operation with its scope."""

from __future__ import annotations

import re
from pathlib import Path

from chatcrm.auth import scopes

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def test_the_documented_scopes_are_the_gate_s() -> None:
    rows = re.findall(r"^\| `(\w+)` \| `(\w+) (\S+)` \| (.+) \|$", DOC.read_text(), re.MULTILINE)
    documented = {}
    for operation_id, _method, _path, scope in rows:
        if scope.startswith("none"):
            documented[operation_id] = None
        elif scope == "any caller":
            documented[operation_id] = (scopes.SIGNED_IN,)
        else:
            documented[operation_id] = tuple(re.findall(r"`([a-z]+:[a-z]+)`", scope))
    assert documented == scopes.ROUTE_SCOPES
