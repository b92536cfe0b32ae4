"""URLs as they may be shown to people: in an error line, never with a password."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit


def without_password(value: Any) -> Any:
    """`value` with the password of a URL replaced by `***` (anything else as it is)."""
    if not isinstance(value, str) or "@" not in value:
        return value
    try:
        parts = urlsplit(value)
        if parts.password is not None:
            user = f"{parts.username}:***" if parts.username else "***"
            return parts._replace(netloc=f"{user}@{parts.netloc.rpartition('@')[2]}").geturl()
        if parts.netloc:
            return value  # a URL without a password
    except ValueError:
        pass
    # Not read as a URL (a port that is no number, a missing ':'): whatever stands between
    # "//" and the last "@" may be credentials.
    head, sep, rest = value.partition("//")
    if not sep or "@" not in rest:
        return value
    return f"{head}//***@{rest.rpartition('@')[2]}"
