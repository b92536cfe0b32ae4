"""Pairing the rows of an import with the records they equal, each record to one row, as
many rows as can be (a maximum bipartite matching by augmenting paths): the
opportunities' import pairs its rows with namesakes this way (opportunity_import.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

R = TypeVar("R")
S = TypeVar("S")

# Beyond this many row-and-opportunity pairs in one group (namesakes of one contact), the
# rows take the first opportunity they equal, in turn.
PAIRS_MAX = 20_000


def pairs(
    bodies: Sequence[R], records: Sequence[S], equal: Callable[[R, S], bool]
) -> dict[int, int]:
    """Rows paired with records they equal (row index → record index), each record to one
    row, as many rows as can be: a row that took the record another row alone equals
    gives it up for one it equals too (augmenting paths). Rows in turn, records newest
    first, so that among equal choices the first is taken."""
    if len(bodies) * len(records) > PAIRS_MAX:
        taken: dict[int, int] = {}  # record → row
        for i, body in enumerate(bodies):
            j = next((j for j, r in enumerate(records) if j not in taken and equal(body, r)), None)
            if j is not None:
                taken[j] = i
        return {i: j for j, i in taken.items()}
    fits = [[j for j, r in enumerate(records) if equal(body, r)] for body in bodies]
    owner: dict[int, int] = {}  # record → row

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    for i in range(len(bodies)):
        place(i, set())
    return {i: j for j, i in owner.items()}
