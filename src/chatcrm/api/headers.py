"""A request's headers as RFC 9110 reads them (section 5): a value without the spaces and
tabs around it, and a header sent on several lines read as all of them, never as
whichever line came first.

A header that holds one value (a key, a workspace, an idempotency key) sent twice with
two different values is refused: taking the first would let a proxy that appends its own
line, or a client that sends a stale one, silently act on another workspace or key.
A list header (`If-Match`) on several lines is one list, its lines joined (5.3).
"""

from __future__ import annotations

from starlette.types import Scope

from chatcrm.core.errors import BadRequest, Forbidden, ServiceError, Unauthorized

_OWS = " \t"

# What two different values of a one-value header are: a caller naming two workspaces is
# refused as any two places naming different ones are (403); two credentials, as a
# malformed one (401); anything else, a malformed request.
_REPEATED: dict[bytes, type[ServiceError]] = {
    b"authorization": Unauthorized,
    b"x-workspace-id": Forbidden,
}


def one(scope: Scope, name: bytes) -> str | None:
    """The value of the header `name` (lower case), None when absent. Raises when it is
    sent on several lines with different values."""
    found: str | None = None
    for key, value in scope["headers"]:
        if key == name:
            text = value.decode("latin-1").strip(_OWS)
            if found is None:
                found = text
            elif text != found:
                raise _REPEATED.get(name, BadRequest)(
                    f"The header '{name.decode()}' was sent more than once, with different "
                    "values: send it once."
                )
    return found


def joined(scope: Scope, name: bytes) -> str | None:
    """A list header's elements from all its lines, as one comma-separated value."""
    lines = [v.decode("latin-1").strip(_OWS) for k, v in scope["headers"] if k == name]
    return ", ".join(lines) if lines else None
