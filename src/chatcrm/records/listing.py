"""Lists of records: newest first, keyset pages with signed continuation tokens, and the
filters of contract C — every bad filter value named in one 422.

Each combination of filters gets one statement, built on first use and then reused with
new bound values, so its compiled SQL comes from the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import ColumnElement, Select, bindparam, or_

from chatcrm.core.errors import BadRequest, FieldError, require_valid
from chatcrm.core.pagination import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, TokenCodec, filters_digest
from chatcrm.core.values import TEXT_MAX
from chatcrm.db.database import Connection
from chatcrm.db.keyset import list_with_token
from chatcrm.db.textsearch import contains, contains_ci, like_pattern, pattern_for
from chatcrm.records import statements, visibility
from chatcrm.records.kind import RecordKind
from chatcrm.records.scalar_types import Timestamp
from chatcrm.records.statements import View
from chatcrm.records.types import Schema


class Filter:
    """One query parameter of a list: how it is parsed, documented, and matched in SQL.
    `bind` gives the variant of the condition (its SQL shape) and its bound values."""

    name = ""
    description = ""
    aliases: tuple[str, ...] = ()  # other names of the parameter (List contacts' `search`)

    def schema(self) -> Schema:
        return {"type": "string"}

    def parse(self, text: str) -> Any:
        return text

    def bind(self, value: Any, dialect: str) -> tuple[str, dict[str, Any]]:
        return self.name, {f"_{self.name}": value}

    def condition(self, kind: RecordKind, variant: str, dialect: str) -> ColumnElement[bool]:
        raise NotImplementedError


class FieldEquals(Filter):
    """`?<field>=<value>`: records whose field has the value (parsed by the field's type)."""

    def __init__(self, kind_fields: Any, wire: str, description: str) -> None:
        self.field = kind_fields[wire]
        self.name = wire
        self.description = description

    def schema(self) -> Schema:
        return self.field.type.query_schema()

    def parse(self, text: str) -> Any:
        return self.field.type.parse_query(self.name, text)

    def condition(self, kind: RecordKind, variant: str, dialect: str) -> ColumnElement[bool]:
        return kind.table.c[self.field.column] == bindparam(f"_{self.name}")


class ChangedSince(Filter):
    """`?updatedSince=`: records changed (in any way) at or after a time."""

    name = "updatedSince"
    description = "ISO 8601: changed at or after."

    def schema(self) -> Schema:
        return {"type": "string", "minLength": 10, "maxLength": 64}

    def parse(self, text: str) -> Any:
        return Timestamp().parse_query(self.name, text)

    def condition(self, kind: RecordKind, variant: str, dialect: str) -> ColumnElement[bool]:
        return kind.table.c.modified_at >= bindparam("_updatedSince")


class TextSearch(Filter):
    """`?q=`: a case-insensitive substring of some text columns; with `digit_columns`,
    a q holding 3 digits or more also matches them by its digits (phone numbers)."""

    name = "q"

    def __init__(
        self,
        description: str,
        columns: tuple[str, ...],
        digit_columns: tuple[str, ...] = (),
        *,
        aliases: tuple[str, ...] = (),
    ) -> None:
        self.description = description
        self.aliases = aliases
        self.columns = columns
        self.digit_columns = digit_columns

    # No text column holds more (core/values.py), so a longer q can match nothing; and
    # SQLite refuses a LIKE pattern past 50,000 bytes (a 500 there, a 200 on PostgreSQL).
    def schema(self) -> Schema:
        return {"type": "string", "maxLength": TEXT_MAX}

    def parse(self, text: str) -> Any:
        if len(text) > TEXT_MAX:
            raise FieldError(self.name, f"must be at most {TEXT_MAX} characters")
        return text

    def bind(self, value: Any, dialect: str) -> tuple[str, dict[str, Any]]:
        params = {"_q": pattern_for(value, dialect)}
        digits = "".join(ch for ch in value if ch in "0123456789")
        if self.digit_columns and len(digits) >= 3:  # fewer would match almost every phone
            params["_q_digits"] = like_pattern(digits)
            return "q_with_digits", params
        return "q", params

    def condition(self, kind: RecordKind, variant: str, dialect: str) -> ColumnElement[bool]:
        c = kind.table.c
        matches = [contains_ci(c[name], "_q", dialect) for name in self.columns]
        if variant == "q_with_digits":
            matches += [contains(c[name], "_q_digits") for name in self.digit_columns]
        return or_(*matches)


# `shape` of a list: as gets show the records, or as updates do.
LIST_SHAPES = ("read", "full")


@dataclass(frozen=True)
class Filtering:
    """The filters a request gave: their bound values, and the digest a token binds."""

    variants: tuple[str, ...]
    params: dict[str, Any]
    digest: str
    full: bool = False  # `shape=full`: records as updates show them (not bound by tokens)


def page_size(text: str | None, errors: list[FieldError]) -> int:
    """`pageSize` (default 20), its error collected into `errors`."""
    if not text:
        return DEFAULT_PAGE_SIZE
    # ASCII digits only: str.isdigit() is also true for "²", which int() refuses.
    if not (text.isascii() and text.isdigit() and len(text) <= 9) or not (
        1 <= int(text) <= MAX_PAGE_SIZE
    ):
        errors.append(FieldError("pageSize", f"must be an integer from 1 to {MAX_PAGE_SIZE}"))
        return DEFAULT_PAGE_SIZE
    return int(text)


def read_page_size(text: str | None) -> int:
    """`pageSize` alone (lists without filters)."""
    errors: list[FieldError] = []
    size = page_size(text, errors)
    require_valid(errors)
    return size


def _filter_text(f: Filter, query: Mapping[str, str]) -> str | None:
    """A filter's value, sent under its name or an alias; two different values are a 400
    naming the alias (an empty one counts as absent)."""
    text = query.get(f.name)
    for alias in f.aliases:
        other = query.get(alias)
        if not other:
            continue
        if text and other != text:
            raise BadRequest.field(
                alias, f"'{alias}' is another name of '{f.name}': send one, or the same value."
            )
        text = other
    return text


def read_filters(
    filters: tuple[Filter, ...], query: Mapping[str, str], dialect: str
) -> tuple[Filtering, int]:
    """The filters and the page size of a list request; one 422 naming every bad value.
    An empty value counts as absent."""
    errors: list[FieldError] = []
    values: list[Any] = []
    variants: list[str] = []
    params: dict[str, Any] = {}
    for f in filters:
        text = _filter_text(f, query)
        value = None
        if text:
            try:
                value = f.parse(text)
            except FieldError as exc:
                errors.append(exc)
        values.append(value)
        if value is not None:
            variant, bound = f.bind(value, dialect)
            variants.append(variant)
            params.update(bound)
    size = page_size(query.get("pageSize"), errors)
    full = _full_shape(query.get("shape"), errors)
    require_valid(errors)
    restricted = visibility.current()
    if restricted is not None:  # an assigned-only agent (J.2): one more condition
        variants.append(visibility.ASSIGNED_ONLY)
        params.update(visibility.params(dialect))
        values.append(restricted.agent_ids)
    digest = filters_digest(tuple(values))
    return Filtering(tuple(variants), params, digest, full=full), size


def _full_shape(text: str | None, errors: list[FieldError]) -> bool:
    shape = text or "read"
    if shape not in LIST_SHAPES:
        errors.append(FieldError("shape", f"must be one of {', '.join(LIST_SHAPES)}"))
    return shape == "full"


def read_shape(text: str | None) -> bool:
    """`shape` of a get or a list: whether the full shape (as updates show records) is
    asked for; another value is a 422."""
    errors: list[FieldError] = []
    full = _full_shape(text, errors)
    require_valid(errors)
    return full


@cache
def conditions(
    kind: RecordKind, filters: tuple[Filter, ...], variants: tuple[str, ...], dialect: str
) -> tuple[ColumnElement[bool], ...]:
    """The WHERE of a list: the workspace's (`_ws`) live records that pass the filters."""
    by_variant: dict[str, Filter] = {}
    for f in filters:
        by_variant[f.name] = f
        if isinstance(f, TextSearch):
            by_variant["q_with_digits"] = f
    c = kind.table.c
    return (
        c.workspace_id == bindparam("_ws"),
        c.deleted_at.is_(None),
        *(
            visibility.condition(kind, dialect)
            if v == visibility.ASSIGNED_ONLY
            else by_variant[v].condition(kind, v, dialect)
            for v in variants
        ),
    )


async def plan_searches(conn: Connection, filtering: Filtering) -> None:
    """A search is planned for its `q` (PostgreSQL): a `q` that few records hold is read
    through the trigram index of migration 0013, one that most hold along the list's order
    until the page is full. A cached generic plan would take one of the two for every `q`:
    the first costs ~80 ms on 10,000 contacts for a `q` they all hold, the second as much
    for one that none holds."""
    if "q" in filtering.variants or "q_with_digits" in filtering.variants:
        await conn.plan_for_values()


@cache
def _list_statement(
    kind: RecordKind,
    filters: tuple[Filter, ...],
    variants: tuple[str, ...],
    shape: str,
    dialect: str,
) -> Select[Any]:
    return statements.shape_statement(kind, shape, dialect).where(
        *conditions(kind, filters, variants, dialect)
    )


async def list_page(
    conn: Connection,
    kind: RecordKind,
    codec: TokenCodec,
    *,
    filters: tuple[Filter, ...],
    workspace_id: str,
    filtering: Filtering,
    token: str | None,
    size: int,
) -> tuple[list[View], str | None]:
    """A page of the workspace's live records (newest first) and the next page's token;
    `shape=full` shows them as updates do (for exports)."""
    c = kind.table.c
    await plan_searches(conn, filtering)
    rows, next_token = await list_with_token(
        conn,
        codec,
        _list_statement(
            kind,
            filters,
            filtering.variants,
            kind.written_shape if filtering.full else kind.read_shape,
            conn.dialect,
        ),
        {"_ws": workspace_id, **filtering.params},
        scope=f"{kind.table.name}:{workspace_id}",
        digest=filtering.digest,
        token=token,
        size=size,
        created=c.created_at,
        ident=c.id,
        created_key="creationDate",
    )
    return [View(version=row.pop("_version"), record=row) for row in rows], next_token
