"""The trigram indexes a search (`?q=`) is found through on PostgreSQL and Citus: one per
record table, over the folded text columns and the phone digits that contacts/listing.py
and opportunities/listing.py's TextSearch filters compare. Made by migration 0013, made
again by 0017 when the fold changed; the expressions must stay the filters' own, or the
planner cannot use them (tests/records/test_search_index.py reads the plans)."""

from __future__ import annotations

# (index, table, folded text columns, digit columns)
SEARCH_INDEXES = (
    (
        "ix_contacts_search",
        "contacts",
        ("name", "lastname", "email"),
        ("internal_whatsapp_number", "platform_sender_phone"),
    ),
    ("ix_opportunities_search", "opportunities", ("name", "description", "code"), ()),
)


def create_index(index: str, table: str, folded: tuple[str, ...], digits: tuple[str, ...]) -> str:
    """The CREATE INDEX statement of one of SEARCH_INDEXES (pg_trgm's operator class)."""
    parts = [f"(chatcrm_fold({c})) public.gin_trgm_ops" for c in folded]
    parts += [f"{c} public.gin_trgm_ops" for c in digits]
    return f"CREATE INDEX IF NOT EXISTS {index} ON {table} USING gin ({', '.join(parts)})"
