"""Versions, ETags and `If-Match` (contract C): a stale version is 412 and nothing changes."""

from __future__ import annotations

from typing import NoReturn

from chatcrm.core.errors import PreconditionFailed, ServiceError
from chatcrm.records.statements import View

# A record's version is a 32-bit column (records/kind.py).
MAX_VERSION = 2**31 - 1


def etag(version: int) -> str:
    """Strong tag naming the record's version; the same whichever shape shows the record."""
    return f'"{version}"'


def check_if_match(if_match: str | None, version: int) -> None:
    if if_match is None:
        return
    current = etag(version)
    wanted = [tag.strip() for tag in if_match.split(",") if tag.strip()]
    if "*" in wanted or current in wanted:  # strong comparison: W/ tags never match
        return
    raise PreconditionFailed(
        f"The record has changed: its current ETag is {current}, not {if_match.strip()}. "
        "Read it again and retry the update against the new version."
    )


def simple_if_match(if_match: str | None) -> tuple[bool, int | None]:
    """(whether the condition is one a single UPDATE can check, the version it requires).

    No header or `*` require nothing beyond existence; one strong tag `"n"` requires
    version n; anything else (several tags, weak tags) is left to `check_if_match`."""
    if if_match is None or if_match.strip() == "*":
        return True, None
    tag = if_match.strip()
    digits = tag[1:-1]
    # Only the tag as the service writes it: `"027"` is another tag than `"27"` (strong
    # comparison is of the characters), which `check_if_match` refuses.
    if len(tag) > 2 and tag[0] == tag[-1] == '"' and digits.isascii() and digits.isdigit():
        version = int(digits)
        if str(version) != digits:
            return False, None
        # A version no record can have (the column's range) is not sent to the database,
        # which would refuse the number itself: `check_if_match` answers it, 412.
        return (True, version) if version <= MAX_VERSION else (False, None)
    return False, None


def explain_unmatched(
    current: View | None, if_match: str | None, not_found: ServiceError
) -> NoReturn:
    """A single-statement update matched no row: the record is unknown or deleted (404), or
    `If-Match` named a version it no longer has (412)."""
    if current is None:
        raise not_found
    check_if_match(if_match, current.version)
    raise AssertionError("a live record with a matching version was not updated")


def check_no_version(if_match: str | None) -> None:
    """`If-Match` on a change of something without versions (a workspace's settings, a
    webhook, a user): no tag can name its current state, so only `*` matches (RFC 9110
    13.1.1). Refused rather than ignored: a client that sent a tag counts on it."""
    if if_match is None:
        return
    wanted = [tag.strip() for tag in if_match.split(",") if tag.strip()]
    if "*" not in wanted:
        raise PreconditionFailed(
            f"If-Match {if_match.strip()} names a version, and this has none (no ETag): "
            "send the change without If-Match."
        )
