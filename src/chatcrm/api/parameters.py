"""The header and query parameters operations share, as the OpenAPI document shows them."""

from __future__ import annotations

from chatcrm.api.routing import Param
from chatcrm.core.pagination import MAX_PAGE_SIZE
from chatcrm.records.listing import LIST_SHAPES, Filter
from chatcrm.records.types import Schema

WORKSPACE_HEADER = Param("x-workspace-id", "header", "The workspace the request acts in.")
WORKSPACE_QUERY = Param(
    "workspaceId", "query", "The workspace (or send x-workspace-id); equal to the header."
)
IF_MATCH = Param(
    "If-Match", "header", "Apply the change only to this version (its ETag), else 412."
)
IDEMPOTENCY_KEY = Param(
    "Idempotency-Key",
    "header",
    "Retry-safe POST: the first answer is stored 24 h and replayed (1 to 255 visible "
    "ASCII characters).",
    schema={"type": "string", "pattern": "^[!-~]{1,255}$"},
)
CONTINUATION_TOKEN = Param(
    "continuationToken", "query", "From the previous page; omit for the first page."
)


def or_empty(schema: Schema) -> Schema:
    """A list's query value, or an empty one: an empty value counts as absent."""
    if schema.get("type") == "string" and "minLength" not in schema:
        return schema
    return {"anyOf": [schema, {"type": "string", "maxLength": 0}]}


PAGE_SIZE = Param(
    "pageSize",
    "query",
    f"1 to {MAX_PAGE_SIZE} (default 20).",
    schema=or_empty({"type": "integer", "minimum": 1, "maximum": MAX_PAGE_SIZE}),
)
PAGE = (CONTINUATION_TOKEN, PAGE_SIZE)
SHAPE = Param(
    "shape",
    "query",
    "read (default): the records as gets show them; full: as updates and creates show "
    "them (a contact's variables, internalWhatsappNumber, solvedByAgentId, solvedDate), "
    "for exports.",
    # An empty value counts as absent (or_empty leaves plain strings alone: spelled out).
    schema={
        "anyOf": [{"type": "string", "enum": list(LIST_SHAPES)}, {"type": "string", "maxLength": 0}]
    },
)


def filter_params(filters: tuple[Filter, ...]) -> tuple[Param, ...]:
    return tuple(
        Param(
            name,
            "query",
            f.description if name == f.name else f"Another name of {f.name}.",
            schema=or_empty(f.schema()),
        )
        for f in filters
        for name in (f.name, *f.aliases)
    )


def query_names(params: tuple[Param, ...]) -> tuple[str, ...]:
    """The query parameters an operation accepts (any other is a 400)."""
    return tuple(p.name for p in params if p.where == "query")
