"""Passwords (contract J.1): the length rule, and Argon2id hashes with OWASP's parameters
(19 MiB, 2 iterations, 1 lane), rehashed at sign-in when the parameters change."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from chatcrm.core.errors import FieldError

MIN_LENGTH, MAX_LENGTH = 10, 128

_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
# Verified when there is no user (or no password yet), so that an unknown e-mail costs
# the same time as a wrong password.
_DUMMY = _HASHER.hash("not a password of anyone")


def problems(password: object, *, email: str, field: str = "password") -> list[FieldError]:
    if not isinstance(password, str):
        return [FieldError(field, "must be a string")]
    if not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        return [FieldError(field, f"must be {MIN_LENGTH} to {MAX_LENGTH} characters long")]
    if password.casefold() == email.casefold():
        return [FieldError(field, "must not be the e-mail address")]
    return []


def hash_password(password: str) -> str:
    return _HASHER.hash(password)


def verify(stored: str | None, password: str) -> tuple[bool, str | None]:
    """(whether `password` matches, a new hash to store when the parameters changed).
    `stored` None (no password set) costs a verification all the same."""
    try:
        _HASHER.verify(stored or _DUMMY, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False, None
    if stored is None:
        return False, None
    return True, hash_password(password) if _HASHER.check_needs_rehash(stored) else None
