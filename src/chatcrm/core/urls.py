"""URLs as they may be shown to people: in an error line, never with a password."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit


def without_password(value: Any) -> Any:
    """`value` with the password of a URL replaced by `***` (anything else as it is)."""
    if not isinstance(value, str) or "@" not in value:
        return value
    try:
        parts = urlsplit(value)
        # An "@" after the address: a password holding "/", "#" or "?" ended it early (the
        # user name may hold an "@" of its own): masked below, up to the last "@".
        cut = bool(parts.netloc) and "@" in value.partition("//")[2][len(parts.netloc) :]
        if parts.password is not None and not cut:
            user = f"{parts.username}:***" if parts.username else "***"
            return parts._replace(netloc=f"{user}@{parts.netloc.rpartition('@')[2]}").geturl()
        if "@" in parts.netloc and not cut:
            return value  # a user without a password
        if not parts.netloc and parts.scheme.startswith("sqlite"):
            return value  # an "@" of a file's path (sqlite:///a@b.db)
    except ValueError:
        pass
    # Not read as a URL (a port that is no number, a missing ':'), or cut: whatever stands
    # between "//" and the last "@" may be credentials.
    head, sep, rest = value.partition("//")
    if not sep:  # `postgresql:user:pass@host`: a user and password after the scheme's ':'
        head, sep, rest = value.partition(":")
        # A scheme, then credentials up to the last "@" holding a ":" (user:password);
        # else not credentials (`Team: a@example.com;`, `mailto:a@b`).
        credentials = rest.rpartition("@")[0]
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", head) or ":" not in credentials:
            return value
    if not sep or "@" not in rest:
        return value
    return f"{head}{sep}***@{rest.rpartition('@')[2]}"
