"""Who is calling (API key → account) and which workspaces that caller may use."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from datetime import datetime

import orjson

from chatcrm.auth import keys
from chatcrm.auth import repository as repo
from chatcrm.auth import scopes as scopes_
from chatcrm.core.errors import Forbidden, Unauthorized
from chatcrm.core.ids import is_id, new_id
from chatcrm.core.timestamps import utcnow
from chatcrm.db.database import Connection

KEY, USER = "key", "user"


@dataclass(frozen=True, slots=True)
class Principal:
    """Who calls: an API key, or a user through a console session (contract J)."""

    key_id: str  # the acting id: the key's, or the user's (userCreation, createdBy, actor)
    account_id: str
    # Requests per second for this key; None: the service default; 0: unlimited.
    rate_limit: float | None = None
    scopes: frozenset[str] = frozenset(scopes_.ALL)
    # The only workspaces it may use; None: every workspace of the account.
    workspace_ids: frozenset[str] | None = None
    kind: str = KEY
    name: str = ""
    role: str = scopes_.OWNER
    session_id: str | None = None
    email: str = ""  # a user's, lower-cased: its agents are linked by it (J.1)
    # When the key ends (its own expiry, or an earlier one up its chain); None: never.
    expires_at: datetime | None = None

    def actor(self) -> dict[str, str]:
        """J.4's `actor` of what this caller does."""
        return {"type": self.kind, "id": self.key_id, "name": self.name}


@dataclass(frozen=True, slots=True)
class _CachedKey:
    account_id: str
    secret_hash: str
    rate_limit: float | None
    fetched: float
    name: str
    scopes: frozenset[str]
    workspace_ids: frozenset[str] | None
    expires_at: datetime | None
    role: str
    refusal: str | None  # why the key is refused whatever its secret (its chain), or None


class AuthCache:
    """Per-process caches on the authentication path.

    Keys are cached for at most `ttl` seconds. A revoked or changed key is dropped sooner,
    within 1 s everywhere: on PostgreSQL when its notification arrives (`key_notified`,
    wired to the process's LISTEN connection), on SQLite when the key-change counter has
    moved (read at most every `POLL_SECONDS` by `authenticate`). While the LISTEN
    connection is not open (before it first is, and from its loss until it is open again),
    PostgreSQL processes read the counter as SQLite's do. A workspace never changes
    account, so that mapping is cached without expiry (bounded in size).
    """

    MAX_WORKSPACES = 100_000
    POLL_SECONDS = 0.5

    def __init__(self, ttl: float, *, poll_changes: bool = False) -> None:
        self.ttl = ttl
        self.poll_changes = poll_changes
        # True while a LISTEN connection brings every key change (`key_notified`).
        self.listening = False
        self._keys: dict[str, _CachedKey] = {}
        self._workspaces: dict[str, str] = {}
        # Counted up by every drop: a key read before a drop is not cached after it.
        self.generation = 0
        self._version: int | None = None
        self.next_poll = 0.0
        # Keys used since `lastUsedAt` was last written (J.5: at most a minute stale), with
        # the time (epoch seconds) of each one's last use: written as it was, not as the
        # time of the write.
        self.recently_used: dict[str, float] = {}

    def used(self, key_id: str) -> None:
        if len(self.recently_used) < self.MAX_WORKSPACES or key_id in self.recently_used:
            self.recently_used[key_id] = time.time()

    def key(self, key_id: str) -> _CachedKey | None:
        hit = self._keys.get(key_id)
        if hit is None:
            return None
        if time.monotonic() - hit.fetched > self.ttl:
            del self._keys[key_id]
            return None
        return hit

    def put_key(self, key_id: str, entry: _CachedKey, *, generation: int) -> None:
        if self.ttl > 0 and generation == self.generation:
            if len(self._keys) > self.MAX_WORKSPACES:
                self._keys.clear()
            self._keys[key_id] = entry

    def drop_keys(self, key_id: str | None = None) -> None:
        """Forget one key (None: all of them)."""
        self.generation += 1
        if key_id is None:
            self._keys.clear()
        else:
            self._keys.pop(key_id, None)

    def key_notified(self, payload: str | None) -> None:
        """A key-change notification (its key id), or None after the listening connection
        was (re)opened, when notifications may have been missed."""
        if payload is None:
            self.listening = True
        self.drop_keys(payload or None)

    def notifications_lost(self) -> None:
        """The LISTEN connection is gone: read the key-change counter until it is back.
        Every key is read again, so a change made before the counter's first reading
        (which only records it) is not missed either."""
        self.listening = False
        self._version = None
        self.next_poll = 0.0
        self.drop_keys()

    @property
    def polls(self) -> bool:
        return self.poll_changes or not self.listening

    def saw_changes(self, version: int) -> None:
        """The key-change counter as just read: drop every key when it moved."""
        if self._version is not None and version != self._version:
            self.drop_keys()
        self._version = version

    def workspace(self, workspace_id: str) -> str | None:
        return self._workspaces.get(workspace_id)

    def put_workspace(self, workspace_id: str, account_id: str) -> None:
        if len(self._workspaces) > self.MAX_WORKSPACES:
            self._workspaces.clear()
        self._workspaces[workspace_id] = account_id


def _granted(stored: str | None) -> frozenset[str]:
    """A key's scopes column: NULL (an account key) and ["*"] hold every scope."""
    listed = None if stored is None else orjson.loads(stored)
    if listed is None or scopes_.EVERY in listed:
        return frozenset(scopes_.ALL)
    return frozenset(listed)


def bearer_token(authorization: str | None) -> str:
    if not authorization:
        raise Unauthorized("Missing API key: send the header 'Authorization: Bearer <api key>'.")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("Malformed Authorization header: expected 'Bearer <api key>'.")
    return token.strip()


async def authenticate(conn: Connection, cache: AuthCache, authorization: str | None) -> Principal:
    parsed = keys.parse_key(bearer_token(authorization))
    if parsed is None:
        raise Unauthorized("The API key is not valid.")
    key_id, secret = parsed
    if cache.polls:
        now = time.monotonic()
        if now >= cache.next_poll:
            cache.next_poll = now + cache.POLL_SECONDS
            cache.saw_changes(await repo.key_changes_version(conn))
    cached = cache.key(key_id)
    if cached is None:
        generation = cache.generation
        row = await repo.get_key(conn, key_id)
        if row is None or row["revoked_at"] is not None:
            raise Unauthorized("The API key is not valid or has been revoked.")
        limited = row["workspace_ids"]
        limits = await key_limits(
            conn,
            row["created_by"],
            _granted(row["scopes"]),
            None if limited is None else frozenset(orjson.loads(limited)),
        )
        cached = _CachedKey(
            account_id=row["account_id"],
            secret_hash=row["secret_hash"],
            rate_limit=row["rate_limit"],
            fetched=time.monotonic(),
            name=row["name"] or "",
            scopes=limits.scopes,
            workspace_ids=limits.workspace_ids,
            expires_at=_earliest(row["expires_at"], limits.expires_at),
            role=limits.role,
            refusal=limits.refusal,
        )
        cache.put_key(key_id, cached, generation=generation)
    if not keys.secret_matches(secret, cached.secret_hash):
        raise Unauthorized("The API key is not valid or has been revoked.")
    if cached.expires_at is not None and cached.expires_at <= utcnow():
        raise Unauthorized("The API key has expired.")
    if cached.refusal is not None:
        raise Unauthorized(cached.refusal)
    cache.used(key_id)
    return Principal(
        key_id=key_id,
        account_id=cached.account_id,
        rate_limit=cached.rate_limit,
        scopes=cached.scopes,
        workspace_ids=cached.workspace_ids,
        name=cached.name,
        role=cached.role,
        expires_at=cached.expires_at,
    )


# Keys made by keys made by keys…: far more than any account makes; past it, not an owner.
_MAX_KEY_CHAIN = 16
_USER_GONE = "The API key's user has been removed or disabled."
_CREATOR_REVOKED = "The API key was made with a key that has been revoked."


@dataclass(frozen=True, slots=True)
class KeyLimits:
    """What a key may do as its creators stand now (J.5: never more than its creator
    holds, also after the creator was demoted, limited or removed)."""

    role: str
    scopes: frozenset[str]
    workspace_ids: frozenset[str] | None
    # The earliest expiry of the keys up its chain: a key made by a key ends with it.
    expires_at: datetime | None = None
    # Set when something behind it is gone (a user disabled or removed, a key revoked):
    # the key is refused, with this message.
    refusal: str | None = None


def _earliest(a: datetime | None, b: datetime | None) -> datetime | None:
    return b if a is None else a if b is None else min(a, b)


def _narrowed(
    limits: KeyLimits, scopes: frozenset[str], workspaces: frozenset[str] | None
) -> KeyLimits:
    within = workspaces if limits.workspace_ids is None else limits.workspace_ids
    if workspaces is not None and limits.workspace_ids is not None:
        within = limits.workspace_ids & workspaces
    return replace(limits, scopes=limits.scopes & scopes, workspace_ids=within)


async def key_limits(
    conn: Connection,
    created_by: str | None,
    scopes: frozenset[str],
    workspaces: frozenset[str] | None,
) -> KeyLimits:
    """A key's own scopes and workspaces, narrowed by every creator up its chain: a key
    made by a key keeps within that key's, ends when it expires and is refused once it is
    revoked (a leaked key's revocation reaches every key made with it); a key made by a
    user keeps within the user's role and workspaces of now, and is refused once the user
    is disabled. An account key (no creator) is an owner's; a user's key is an owner's
    only while the user is one, else an admin's (the one limit between them: an admin
    cannot make, change or remove an owner)."""
    limits = KeyLimits(scopes_.OWNER, scopes, workspaces)
    for _ in range(_MAX_KEY_CHAIN):
        if created_by is None:
            return limits
        user = await repo.user(conn, created_by)
        if user is not None:
            role = str(user["role"])
            own = None if role in (scopes_.OWNER, scopes_.ADMIN) else user["workspace_ids"]
            limits = _narrowed(
                limits,
                scopes_.ROLES[role],
                None if own is None else frozenset(orjson.loads(own)),
            )
            return replace(
                limits,
                role=scopes_.OWNER if role == scopes_.OWNER else scopes_.ADMIN,
                refusal=None if user["status"] == "active" else _USER_GONE,
            )
        key = await repo.key_creator(conn, created_by)
        if key is None:
            break  # neither a user nor a key: no owner stands behind it
        if key["revoked_at"] is not None:
            return replace(limits, role=scopes_.ADMIN, refusal=_CREATOR_REVOKED)
        limits = replace(limits, expires_at=_earliest(limits.expires_at, key["expires_at"]))
        limited = key["workspace_ids"]
        limits = _narrowed(
            limits,
            _granted(key["scopes"]),
            None if limited is None else frozenset(orjson.loads(limited)),
        )
        created_by = key["created_by"]
    return replace(limits, role=scopes_.ADMIN)


async def key_changed(conn: Connection, key_id: str) -> None:
    """Make every process and node forget the key (after its revocation or a new limit):
    PostgreSQL notifies them when the transaction commits; SQLite processes see the
    key-change counter move."""
    await repo.count_key_change(conn)
    if conn.dialect == "postgresql":
        await repo.notify_key_change(conn, key_id)


async def revoke_key(conn: Connection, key_id: str) -> bool:
    """True when the key existed and was live; refused everywhere within 1 s of the commit."""
    if not await repo.revoke_key(conn, key_id, utcnow()):
        return False
    # Every key is forgotten, not only this one: the keys made with it are refused too.
    await key_changed(conn, "")
    return True


async def set_rate_limit(conn: Connection, key_id: str, rate_limit: float | None) -> bool:
    """False when there is no such key; applied everywhere within 1 s of the commit."""
    if not await repo.set_rate_limit(conn, key_id, rate_limit):
        return False
    await key_changed(conn, key_id)
    return True


def _forbidden(workspace_id: str, principal: Principal | None = None) -> Forbidden:
    """The one answer for a workspace the caller cannot use, whatever the reason (unknown,
    another account's, or one of its account's it is not given): the answer tells no
    workspace that exists from one that does not (J.1, section 0)."""
    who = "user" if principal is not None and principal.kind == USER else "API key"
    return Forbidden(
        f"This {who} cannot use workspace '{workspace_id}': "
        "it does not exist or belongs to another account."
    )


async def check_workspace(
    conn: Connection, cache: AuthCache, principal: Principal, workspace_id: str
) -> str:
    """The workspace id if the caller's account owns it; 403 otherwise (also when unknown)."""
    if not is_id(workspace_id):
        raise _forbidden(workspace_id, principal)
    owner = cache.workspace(workspace_id)
    if owner is None:
        owner = await repo.workspace_account(conn, workspace_id)
        if owner is None:
            raise _forbidden(workspace_id, principal)
        cache.put_workspace(workspace_id, owner)
    if owner != principal.account_id or (
        principal.workspace_ids is not None and workspace_id not in principal.workspace_ids
    ):
        raise _forbidden(workspace_id, principal)
    return workspace_id


async def create_account(conn: Connection, *, name: str = "chatcrm account") -> str:
    account_id = new_id()
    await repo.insert_account(conn, account_id=account_id, name=name, now=utcnow())
    return account_id


async def create_key(
    conn: Connection, *, account_id: str, rate_limit: float | None = None
) -> tuple[str, str]:
    """(key id, the API key itself: shown once, stored only as a hash)."""
    key_id = new_id()
    raw, secret_hash = keys.new_key(key_id)
    await repo.insert_key(
        conn,
        key_id=key_id,
        account_id=account_id,
        secret_hash=secret_hash,
        now=utcnow(),
        rate_limit=rate_limit,
    )
    return key_id, raw
