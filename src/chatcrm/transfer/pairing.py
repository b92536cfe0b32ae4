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
    bodies: Sequence[R],
    records: Sequence[S],
    equal: Callable[[R, S], bool],
    rather: Callable[[R, S], bool] | None = None,
) -> dict[int, int]:
    """Rows paired with records they equal (row index → record index), each record to one
    row, as many rows as can be: a row that took the record another row alone equals
    gives it up for one it equals too (augmenting paths). `rather`: pairs (among the equal
    ones) made first, as many as can be, then given up only for more rows paired. Rows in
    turn, records in their order, so that among equal choices the first is taken."""
    passes = [equal] if rather is None else [rather, equal]
    owner: dict[int, int] = {}  # record → row
    if len(bodies) * len(records) > PAIRS_MAX:
        for fits in passes:
            for i, body in enumerate(bodies):
                if i in owner.values():
                    continue
                free = (j for j, r in enumerate(records) if j not in owner and fits(body, r))
                j = next(free, None)
                if j is not None:
                    owner[j] = i
        return {i: j for j, i in owner.items()}
    for fits in passes:
        edges = [[j for j, r in enumerate(records) if fits(body, r)] for body in bodies]

        def place(i: int, seen: set[int], edges: list[list[int]] = edges) -> bool:
            for j in edges[i]:
                if j in seen:
                    continue
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
            return False

        placed = set(owner.values())
        for i in range(len(bodies)):
            if i not in placed:
                place(i, set())
    return {i: j for j, i in owner.items()}
