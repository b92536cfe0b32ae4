"""Console sessions (contract J.3): sign-in with its throttling, the cookie's token looked
up on each request, the idle and absolute lifetimes, sign-out, the session list.

The cookie carries 32 random bytes; only their SHA-256 is stored. Each sign-in is a new
session with a new token (no fixation). A session is refused as soon as its user is
disabled, and ended when its password changes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import orjson
from sqlalchemy import bindparam, delete, insert, select, update

from chatcrm.auth import scopes
from chatcrm.auth.service import USER, Principal
from chatcrm.config import Settings
from chatcrm.core.errors import FieldError, ValidationFailed
from chatcrm.core.ids import new_id
from chatcrm.core.timestamps import iso, utcnow
from chatcrm.db import locks
from chatcrm.db.database import Connection, Row
from chatcrm.db.errors import UniqueViolation
from chatcrm.people import passwords, reach, tokens, two_factor
from chatcrm.people import users as people
from chatcrm.people.errors import (
    InvalidCredentials,
    SessionExpired,
    TooManyAttempts,
    TwoFactorRequired,
)
from chatcrm.people.tables import sessions, sign_in_failures, users

COOKIE = "chatcrm_session"
# What a refused attempt records besides its count (the audit log's `session.failed`).
OnFailure = Callable[[Connection, Row | None], Awaitable[None]]
CSRF_HEADER = "x-csrf-token"
# last_seen_at is written at most this often: a console polls, it need not write each time.
SEEN_EVERY = timedelta(seconds=60)
# Throttling (J.3): per e-mail and per client address, within the window.
WINDOW = timedelta(minutes=15)
EMAIL_FAILURES, ADDRESS_FAILURES = 5, 20
FIRST_WAIT, LONGEST_WAIT = 60, 3600

_s = sessions.c
_f = sign_in_failures.c
_INSERT = insert(sessions)
_BY_TOKEN = (
    select(
        _s.id,
        _s.user_id,
        _s.account_id,
        _s.created_at,
        _s.last_seen_at,
        _s.expires_at,
        _s.ended_at,
        users.c.name,
        users.c.role,
        users.c.status,
        users.c.workspace_ids,
        users.c.email_key,
    )
    .select_from(sessions.join(users, users.c.id == _s.user_id))
    .where(_s.token_hash == bindparam("_hash"))
)
_SEEN = update(sessions).where(_s.id == bindparam("_id")).values(last_seen_at=bindparam("_now"))
_END = (
    update(sessions)
    .where(_s.id == bindparam("_id"), _s.user_id == bindparam("_user"), _s.ended_at.is_(None))
    .values(ended_at=bindparam("_now"))
)
_END_ALL = (
    update(sessions)
    .where(_s.user_id == bindparam("_user"), _s.ended_at.is_(None))
    .values(ended_at=bindparam("_now"))
)
_END_OTHERS = _END_ALL.where(_s.id != bindparam("_keep"))
_LIVE_OF_USER = (
    select(_s.id, _s.created_at, _s.last_seen_at, _s.user_agent, _s.ip, _s.expires_at)
    .where(_s.user_id == bindparam("_user"), _s.ended_at.is_(None))
    .order_by(_s.created_at.desc(), _s.id.desc())
)
_ATTEMPTS_SEED = 0x73_69_67_6E  # sign-in subjects, among the advisory locks
_FAILURES = select(sign_in_failures).where(_f.subject == bindparam("_subject"))
# Counting reads the row locked (PostgreSQL; SQLite's writer lock already serialises):
# parallel wrong guesses must not count as fewer.
_FAILURES_LOCKED = _FAILURES.with_for_update()
_INSERT_FAILURE = insert(sign_in_failures)
_SET_FAILURE = update(sign_in_failures).where(_f.subject == bindparam("_subject"))
_CLEAR_FAILURES = delete(sign_in_failures).where(_f.subject == bindparam("_subject"))


@dataclass(frozen=True)
class Started:
    token: str
    session_id: str
    csrf_token: str
    expires_at: datetime


@dataclass(frozen=True)
class Current:
    principal: Principal
    csrf_token: str
    expires_at: datetime


def _seen_every(settings: Settings) -> timedelta:
    """How far last_seen_at may lag behind the last request: a minute, or a hundredth of
    the idle lifetime when that is shorter."""
    return min(SEEN_EVERY, timedelta(hours=settings.session_idle_hours) / 100)


def _expiry(row: Row, settings: Settings, last_seen: datetime | None = None) -> datetime:
    """When the session ends if nothing more happens: idle or absolute, the sooner. The
    idle end counts from the latest the last request can have been, so that a session
    never ends before its idle lifetime has passed without a request (J.3)."""
    seen = (last_seen or row["last_seen_at"]) + _seen_every(settings)
    idle = seen + timedelta(hours=settings.session_idle_hours)
    return min(idle, row["expires_at"])


async def authenticate(conn: Connection, token: str, settings: Settings) -> Current:
    """The user a session cookie stands for; 401 SESSION_EXPIRED when ended, past a
    lifetime, unknown, or when its user is no longer active."""
    row = await conn.fetchrow(_BY_TOKEN, {"_hash": tokens.token_hash(token)})
    now = utcnow()
    if row is None or row["ended_at"] is not None or row["status"] != people.ACTIVE:
        raise SessionExpired
    if _expiry(row, settings) <= now:
        raise SessionExpired
    last_seen = row["last_seen_at"]
    if now - last_seen >= _seen_every(settings):
        await conn.execute(_SEEN, {"_id": row["id"], "_now": now})
        await conn.commit()  # the request may fail later: its visit still counts
        last_seen = now  # the answer's `expiresAt` counts from this request, not the row
    role = row["role"]
    every = reach.sees_every_workspace(role)
    principal = Principal(
        key_id=row["user_id"],
        account_id=row["account_id"],
        scopes=scopes.ROLES[role],
        workspace_ids=None if every else frozenset(orjson.loads(row["workspace_ids"])),
        kind=USER,
        name=row["name"],
        role=role,
        session_id=row["id"],
        email=row["email_key"],
    )
    return Current(principal, csrf_token(token), _expiry(row, settings, last_seen))


def csrf_token(session_token: str) -> str:
    """The session's CSRF token, derived from its cookie's token rather than stored: only
    the page that was given it (or holds the HttpOnly cookie) can know it."""
    return tokens.token_hash("csrf\0" + session_token)


async def start(
    conn: Connection, user: Row, settings: Settings, *, ip: str, user_agent: str
) -> Started:
    await conn.begin()
    now = utcnow()
    token, token_hash = tokens.new_token()
    session_id = new_id()
    csrf = csrf_token(token)
    expires = now + timedelta(days=settings.session_max_days)
    await conn.execute(
        _INSERT,
        {
            "id": session_id,
            "token_hash": token_hash,
            "user_id": user["id"],
            "account_id": user["account_id"],
            "created_at": now,
            "last_seen_at": now,
            "expires_at": expires,
            "ended_at": None,
            "user_agent": user_agent[:500],
            "ip": ip[:64],
        },
    )
    await people.set_columns(conn, user["id"], last_sign_in_at=now)
    idle = now + timedelta(hours=settings.session_idle_hours)
    return Started(token, session_id, csrf, min(idle, expires))


async def end(conn: Connection, user_id: str, session_id: str) -> bool:
    await conn.begin()
    changed = await conn.execute(_END, {"_id": session_id, "_user": user_id, "_now": utcnow()})
    return changed == 1


async def end_all(conn: Connection, user_id: str, *, keep: str | None = None) -> None:
    await conn.begin()
    if keep is None:
        await conn.execute(_END_ALL, {"_user": user_id, "_now": utcnow()})
    else:
        await conn.execute(_END_OTHERS, {"_user": user_id, "_now": utcnow(), "_keep": keep})


async def listing(
    conn: Connection, user_id: str, current: str | None, settings: Settings
) -> list[dict[str, Any]]:
    now = utcnow()
    return [
        {
            "id": r["id"],
            "createdAt": iso(r["created_at"]),
            "lastSeenAt": iso(r["last_seen_at"]),
            "userAgent": r["user_agent"],
            "ip": r["ip"],
            "current": r["id"] == current,
        }
        for r in await conn.fetch(_LIVE_OF_USER, {"_user": user_id})
        if _expiry(r, settings) > now
    ]


# --- sign-in ---------------------------------------------------------------------------------


async def _blocked(conn: Connection, subject: str, now: datetime) -> int:
    """Seconds the subject must still wait (0: not throttled)."""
    row = await conn.fetchrow(_FAILURES, {"_subject": subject})
    if row is None or row["blocked_until"] is None or row["blocked_until"] <= now:
        return 0
    return max(1, int((row["blocked_until"] - now).total_seconds() + 0.999))


async def _count_failure(conn: Connection, subject: str, limit: int, now: datetime) -> None:
    row = await conn.fetchrow(_FAILURES_LOCKED, {"_subject": subject})
    if row is None:
        first = {
            "subject": subject,
            "failures": 1,
            "window_start": now,
            "lockouts": 0,
            "blocked_until": None,
        }
        try:
            async with conn.savepoint():
                await conn.execute(_INSERT_FAILURE, first)
            return
        except UniqueViolation:  # a failure of the same subject, at the same moment
            row = await conn.fetchrow(_FAILURES_LOCKED, {"_subject": subject})
            assert row is not None
    failures, start, lockouts = row["failures"], row["window_start"], row["lockouts"]
    if now - start > WINDOW:
        failures, start = 0, now
    failures += 1
    blocked_until = row["blocked_until"]
    if failures >= limit:
        # The wait doubles with each lockout, from a minute up to an hour.
        wait = min(FIRST_WAIT * 2**lockouts, LONGEST_WAIT)
        blocked_until, lockouts, failures, start = (
            now + timedelta(seconds=wait),
            lockouts + 1,
            0,
            now,
        )
    await conn.execute(
        _SET_FAILURE.values(
            failures=failures, window_start=start, lockouts=lockouts, blocked_until=blocked_until
        ),
        {"_subject": subject},
    )


async def _one_attempt_at_a_time(conn: Connection, by_email: str, by_ip: str) -> None:
    """Attempts of one e-mail, and of one address, wait for each other: each reads the
    count the one before it left. Otherwise attempts made at once (on several nodes)
    would all pass the check before any failure is counted, and the password be tried
    more than the limit allows. Always the e-mail first: no two attempts wait for each
    other in a circle."""
    await locks.hold(conn, _ATTEMPTS_SEED, by_email)
    await locks.hold(conn, _ATTEMPTS_SEED, by_ip)


def _subjects(email: str, ip: str) -> tuple[str, str]:
    return f"email:{people.email_key(email)}"[:300], f"ip:{ip}"[:300]


async def _attempt(conn: Connection, email: str, ip: str) -> tuple[str, str, datetime]:
    """A password or code about to be checked: its e-mail's and address's subjects, and
    now; TOO_MANY_ATTEMPTS while either waits out a lockout."""
    by_email, by_ip = _subjects(email, ip)
    await _one_attempt_at_a_time(conn, by_email, by_ip)
    now = utcnow()
    wait = max(await _blocked(conn, by_email, now), await _blocked(conn, by_ip, now))
    if wait:
        raise TooManyAttempts(wait)
    return by_email, by_ip, now


async def sign_in(
    conn: Connection,
    *,
    email: str,
    password: str,
    code: str | None,
    ip: str,
    on_failure: OnFailure,
) -> Row:
    """The user whose credentials these are; raises the one refusal for every wrong
    e-mail, password, or inactive user (after the same Argon2 work), TWO_FACTOR_REQUIRED,
    or TOO_MANY_ATTEMPTS (also for right credentials, while the wait lasts). A refusal is
    counted and committed (`on_failure(conn)` records it in the audit log) before it is
    raised."""
    by_email, by_ip, now = await _attempt(conn, email, ip)
    user = await people.by_email(conn, email)
    ok, rehashed = passwords.verify(None if user is None else user["password_hash"], password)
    if user is None or not ok or user["status"] != people.ACTIVE:
        await _fail(conn, by_email, by_ip, now, on_failure, user)
        raise InvalidCredentials
    if user["two_factor_enabled"]:
        await _second_factor(conn, user, code, by_email, by_ip, now, on_failure)
    if rehashed is not None:
        await people.set_columns(conn, user["id"], password_hash=rehashed)
    await conn.execute(_CLEAR_FAILURES, {"_subject": by_email})
    return user


async def confirm_password(
    conn: Connection, user: Row, password: str, *, ip: str, field: str
) -> None:
    """A signed-in user's password asked again (to change it, to turn two-factor off):
    a wrong one is 422 naming `field`, counted as a failed sign-in and throttled like one
    (TOO_MANY_ATTEMPTS), so that a session someone else holds cannot guess it."""
    by_email, by_ip, now = await _attempt(conn, user["email"], ip)
    matches, _ = passwords.verify(user["password_hash"], password)
    if not matches:

        async def not_recorded(conn: Connection, user: Row | None) -> None:
            return None  # not a sign-in: the audit log's session.failed is not for it

        await _fail(conn, by_email, by_ip, now, not_recorded, user)
        raise ValidationFailed([FieldError(field, "is not the current password")])


async def second_factor(
    conn: Connection, user: Row, code: str | None, *, ip: str, on_failure: OnFailure
) -> None:
    """A two-factor user's code, where something other than sign-in starts a session (a
    reset link: J.1's Accept answers like sign-in); refused and throttled as there."""
    by_email, by_ip, now = await _attempt(conn, user["email"], ip)
    await _second_factor(conn, user, code, by_email, by_ip, now, on_failure)


async def _second_factor(
    conn: Connection,
    user: Row,
    code: str | None,
    by_email: str,
    by_ip: str,
    now: datetime,
    on_failure: OnFailure,
) -> None:
    if not code:  # asked for, not guessed: nothing to count
        raise TwoFactorRequired
    outcome = await two_factor.accept_code(conn, user, code)
    if outcome != two_factor.ACCEPTED:
        await _fail(conn, by_email, by_ip, now, on_failure, user)
        raise TwoFactorRequired(used=outcome == two_factor.USED, wrong=True)


async def _fail(
    conn: Connection,
    by_email: str,
    by_ip: str,
    now: datetime,
    on_failure: OnFailure,
    user: Row | None,
) -> None:
    await _count_failure(conn, by_email, EMAIL_FAILURES, now)
    await _count_failure(conn, by_ip, ADDRESS_FAILURES, now)
    await on_failure(conn, user)
    await conn.commit()
