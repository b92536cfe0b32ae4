"""Two-factor sign-in (contract J.1): TOTP (RFC 6238, 30 s, 6 digits) with pyotp, and ten
single-use recovery codes stored as hashes. A code is accepted once: the time step of the
last accepted code is kept, and only later steps are taken."""

from __future__ import annotations

import secrets
import time
from typing import Any

import orjson
import pyotp
from sqlalchemy import bindparam, select

from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection, Row
from chatcrm.people import tokens
from chatcrm.people import users as people
from chatcrm.people.errors import TwoFactorOn
from chatcrm.people.tables import users

ISSUER = "chatcrm"
RECOVERY_CODES = 10
STEP = 30
# One step either side: a phone's clock a little off still signs in.
DRIFT_STEPS = 1


def _step_of(code: str, secret: str, after: int | None) -> int | None:
    """The time step whose code this is (within the drift), if later than `after`."""
    if not (len(code) == 6 and code.isascii() and code.isdigit()):  # "²" is a digit too
        return None
    totp = pyotp.TOTP(secret, interval=STEP)
    now_step = int(time.time()) // STEP
    for step in range(now_step - DRIFT_STEPS, now_step + DRIFT_STEPS + 1):
        if after is not None and step <= after:
            continue
        if secrets.compare_digest(totp.at(step * STEP), code):
            return step
    return None


# Read again, locked: two sign-ins with one code at once (on two nodes) must not both find
# it unused, nor two recovery codes each write back a list the other's is still in.
_STATE = (
    select(
        users.c.totp_secret,
        users.c.totp_last_step,
        users.c.recovery_codes,
        users.c.two_factor_enabled,
    )
    .where(users.c.id == bindparam("_id"))
    .with_for_update()
)


# What a code given at sign-in was: accepted, a current TOTP code already used (a replay,
# or the person signing in twice within one step), or not a code of this user's.
ACCEPTED, USED, WRONG = "accepted", "used", "wrong"


async def accept_code(conn: Connection, user: Row, code: str) -> str:
    """A TOTP code not used before, or an unused recovery code (used up now): ACCEPTED;
    USED for a TOTP code of a step already used; else WRONG."""
    code = code.strip().replace(" ", "")
    await conn.begin()
    state = await conn.fetchrow(_STATE, {"_id": user["id"]})
    if state is None:
        return WRONG
    secret = state["totp_secret"]
    if secret:
        step = _step_of(code, secret, state["totp_last_step"])
        if step is not None:
            await people.set_columns(conn, user["id"], totp_last_step=step)
            return ACCEPTED
    hashes: list[str] = orjson.loads(state["recovery_codes"] or "[]")
    digest = tokens.token_hash(code.lower())
    if digest in hashes:
        hashes.remove(digest)
        await people.set_columns(conn, user["id"], recovery_codes=orjson.dumps(hashes).decode())
        return ACCEPTED
    return USED if secret and _step_of(code, secret, None) is not None else WRONG


async def start(conn: Connection, user: Row) -> dict[str, Any]:
    """A new secret (two-factor stays off until enabled with a code of it). Not while two-
    factor is on (409): a session alone would then replace the authenticator that guards
    the account, without its password or a code."""
    if user["two_factor_enabled"]:
        raise TwoFactorOn
    secret = pyotp.random_base32()
    await people.set_columns(
        conn, user["id"], totp_secret=secret, totp_last_step=None, updated_at=utcnow()
    )
    url = pyotp.TOTP(secret, interval=STEP).provisioning_uri(name=user["email"], issuer_name=ISSUER)
    return {"secret": secret, "otpauthUrl": url}


async def enable(conn: Connection, user: Row, code: str) -> list[str]:
    """On, after a code of the secret set up; the recovery codes, shown this once. Not
    while it is on (409): a session and a code alone would replace the recovery codes
    that guard the account, as `start` would the secret."""
    await conn.begin()
    state = await conn.fetchrow(_STATE, {"_id": user["id"]})  # as in accept_code
    if state is not None and state["two_factor_enabled"]:
        raise TwoFactorOn
    step = None
    if state is not None and state["totp_secret"]:
        step = _step_of(code.strip(), state["totp_secret"], state["totp_last_step"])
    if step is None:
        raise ValidationFailed([FieldError("code", "is not a current code of the set-up secret")])
    codes = [f"{secrets.token_hex(4)}-{secrets.token_hex(4)}" for _ in range(RECOVERY_CODES)]
    await people.set_columns(
        conn,
        user["id"],
        two_factor_enabled=True,
        totp_last_step=step,
        recovery_codes=orjson.dumps([tokens.token_hash(c) for c in codes]).decode(),
        updated_at=utcnow(),
    )
    return codes


async def disable(conn: Connection, user: Row) -> None:
    await people.set_columns(
        conn,
        user["id"],
        two_factor_enabled=False,
        totp_secret=None,
        totp_last_step=None,
        recovery_codes=None,
        updated_at=utcnow(),
    )
