"""Which references to tenant tables in a SQL statement are not pinned to one workspace.

A reference is pinned when its `workspace_id` is equal, through a chain of `=` conditions
that must all hold (conjuncts of a WHERE or a JOIN's ON of its own query), to a bound
parameter or a literal. That is what Citus needs to route the statement to one shard: a
join on `a.workspace_id = b.workspace_id` is pinned when one side is, but a subquery
pinned only through the outer query's row (`inner.workspace_id = outer.workspace_id`) is
not: Citus plans that statement for every shard (docs/scaling.md 3.4), so a subquery
names the workspace's parameter itself. An OR pins what each of its branches sets to the
same value (`(ws = $1 AND a = $2) OR (ws = $1 AND b = $2)`, which PostgreSQL factors into
`ws = $1 AND (...)`). `IN`, `= ANY(...)`, NOT, anything else: not pinned.
The target of an INSERT is not checked (its row names its workspace); a SELECT inside one
(INSERT … SELECT, a scalar subquery in VALUES) is.

The statement is parsed with sqlglot (PostgreSQL or SQLite), never matched with regexes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType

READ = {"postgresql": "postgres", "sqlite": "sqlite"}
PIN = ("value", "*")  # every value is one: equal to any value is pinned
Key = tuple[object, ...]
_QUERIES = (exp.Select, exp.Update, exp.Delete, exp.Insert)


@dataclass(frozen=True)
class Source:
    alias: str
    table: str | None  # None: a derived table (a subquery in FROM)
    node: exp.Expression


class _Sets:
    """Union-find over columns and the one "pinned" value."""

    def __init__(self) -> None:
        self.parent: dict[Key, Key] = {}

    def find(self, key: Key) -> Key:
        parent = self.parent.setdefault(key, key)
        if parent != key:
            parent = self.parent[key] = self.find(parent)
        return parent

    def union(self, a: Key, b: Key) -> None:
        self.parent[self.find(a)] = self.find(b)


def unpinned(
    sql: str, dialect: str, tenant_tables: Iterable[str], names: Sequence[str] = ()
) -> list[str]:
    """The references (`table AS alias`) to tenant tables whose workspace is not pinned;
    `names`: the bound parameters' names in positional order (SQLite's `?` in `sql`)."""
    tree = _parse(sql, READ[dialect], names)
    tenants = {name.lower() for name in tenant_tables}
    queries = [node for node in tree.walk() if isinstance(node, _QUERIES)]
    sources = {id(q): list(_sources(q)) for q in queries}
    sets = _Sets()
    for query in queries:
        own = {id(s.node) for s in sources[id(query)]}
        for condition in _conditions(query):
            if isinstance(condition, exp.Or):
                for column in _pinned_in_every_branch(condition, query, sources):
                    sets.union(column, PIN)
            for a, b in _pairs(condition, query, sources):
                if not (_of(a, own) and _of(b, own)):
                    continue  # a correlation with an enclosing query's row pins nothing
                sets.union(a, b)
                for key in (a, b):
                    if key[0] == "value":
                        sets.union(key, PIN)
    out = []
    for query in queries:
        for source in sources[id(query)]:
            if source.table is None or source.table not in tenants:
                continue
            if isinstance(query, exp.Insert) and source.node is _insert_target(query):
                continue
            if sets.find(("column", id(source.node), "workspace_id")) != sets.find(PIN):
                named = source.table if source.alias == source.table else f"{source.table} AS "
                out.append(named + ("" if source.alias == source.table else source.alias))
    return out


def _parse(sql: str, read: str, names: Sequence[str]) -> exp.Expression:
    if read == "sqlite" and names:
        sql = _named(sql, read, names)
    return sqlglot.parse_one(sql, read=read)


def _named(sql: str, read: str, names: Sequence[str]) -> str:
    """SQLite's `?` placeholders as string literals naming their parameter: the same
    parameter is then recognisable in two places, as PostgreSQL's `$1` is (and sqlglot
    takes a literal where it refuses a placeholder: SQLite's `json_object(?, col)`)."""
    out, last = [], 0
    placeholders = iter(names)
    for token in Dialect.get_or_raise(read).tokenize(sql):
        if token.token_type is TokenType.PLACEHOLDER:
            out += [sql[last : token.start], "'" + next(placeholders) + "'"]
            last = token.end + 1
    return "".join([*out, sql[last:]])


def _insert_target(query: exp.Insert) -> exp.Expression | None:
    target = query.this
    return target.this if isinstance(target, exp.Schema) else target


def _sources(query: exp.Expression) -> Iterator[Source]:
    """The tables and derived tables a query reads or writes by name, with their aliases."""
    nodes: list[exp.Expression] = []
    if isinstance(query, exp.Insert):
        target = _insert_target(query)
        if target is not None:
            nodes.append(target)
    elif isinstance(query, exp.Update | exp.Delete):
        nodes.append(query.this)
        nodes += list(query.args.get("using") or [])
    for key in ("from", "from_"):
        from_ = query.args.get(key)
        if isinstance(from_, exp.From):
            nodes.append(from_.this)
            nodes += list(from_.expressions or [])
    nodes += [join.this for join in query.args.get("joins") or []]
    for node in nodes:
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            yield Source(node.alias_or_name.lower(), node.name.lower(), node)
        elif isinstance(node, exp.Subquery | exp.Table):  # derived table, table function
            yield Source(node.alias_or_name.lower(), None, node)


def _conditions(query: exp.Expression) -> Iterator[exp.Expression]:
    """The conditions that must all hold: conjuncts of the WHERE and of each join's ON."""
    parts: list[exp.Expression] = []
    where = query.args.get("where")
    if isinstance(where, exp.Where):
        parts.append(where.this)
    for join in query.args.get("joins") or []:
        on = join.args.get("on")
        if on is not None:
            parts.append(on)
    for part in parts:
        yield from _conjuncts(part)


def _conjuncts(node: exp.Expression) -> Iterator[exp.Expression]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        yield from _conjuncts(node.this)
        yield from _conjuncts(node.expression)
    else:
        yield node


def _pairs(
    condition: exp.Expression, query: exp.Expression, sources: dict[int, list[Source]]
) -> Iterator[tuple[Key, Key]]:
    """The terms an equality makes equal: columns, or a value (a parameter, a literal)."""
    for left, right in _equalities(condition):
        a, b = _term(left, query, sources), _term(right, query, sources)
        if a is not None and b is not None:
            yield a, b


def _of(key: Key, own: set[int]) -> bool:
    """A value, or a column of one of the query's own sources."""
    return key[0] == "value" or key[1] in own


def _pinned_in_every_branch(
    condition: exp.Or, query: exp.Expression, sources: dict[int, list[Source]]
) -> set[Key]:
    """`(ws = $1 AND a = $2) OR (ws = $1 AND b = $2)`: the columns every branch sets
    to the same value, as PostgreSQL factors the common condition out of the OR."""
    common: set[tuple[Key, Key]] | None = None
    for branch in _disjuncts(condition):
        pins = set()
        for part in _conjuncts(branch):
            for a, b in _pairs(part, query, sources):
                if a[0] == "column" and b[0] == "value":
                    pins.add((a, b))
                elif b[0] == "column" and a[0] == "value":
                    pins.add((b, a))
        common = pins if common is None else common & pins
    return {column for column, _ in common or ()}


def _disjuncts(node: exp.Expression) -> Iterator[exp.Expression]:
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.Or):
        yield from _disjuncts(node.this)
        yield from _disjuncts(node.expression)
    else:
        yield node


def _equalities(node: exp.Expression) -> Iterator[tuple[exp.Expression, exp.Expression]]:
    if not isinstance(node, exp.EQ):
        return
    left, right = _bare(node.this), _bare(node.expression)
    if isinstance(left, exp.Tuple) and isinstance(right, exp.Tuple):
        yield from zip(left.expressions, right.expressions, strict=False)
    else:
        yield left, right


def _bare(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren | exp.Cast):
        node = node.this
    return node


def _term(
    node: exp.Expression, query: exp.Expression, sources: dict[int, list[Source]]
) -> Key | None:
    node = _bare(node)
    if isinstance(node, exp.Parameter | exp.Placeholder | exp.Literal):
        return ("value", node.sql())
    if not isinstance(node, exp.Column) or not isinstance(node.this, exp.Identifier):
        return None
    qualifier = node.table.lower()
    scope: exp.Expression | None = query
    while scope is not None:
        own = sources.get(id(scope), [])
        if qualifier:
            match = [s for s in own if s.alias == qualifier]
        else:  # unqualified: the query's only source, if it has one
            match = own if len(own) == 1 and scope is query else []
        if match:
            return ("column", id(match[0].node), node.name.lower())
        if not qualifier:
            return None
        scope = scope.parent
        while scope is not None and not isinstance(scope, _QUERIES):
            scope = scope.parent
    return None
