"""Why a database could not be opened or used, in one sentence for the person running a
command: what is wrong and what to do. The driver's own words ("database "x" does not
exist", "Connect call failed", "file is not a database") name neither the database nor
the remedy."""

from __future__ import annotations

import shlex
import socket
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
from sqlalchemy.engine import URL, make_url

from chatcrm.db.migrate import ForeignSchema

DEFAULT_PORT = 5432


@dataclass(frozen=True)
class _Server:
    host: str | None
    socket_dir: str | None
    port: int
    database: str
    user: str | None

    @classmethod
    def of(cls, url: URL) -> _Server:
        # `?host=/var/run/postgresql` selects a Unix socket, as in libpq URLs.
        socket_dir = url.query.get("host")
        return cls(
            host=url.host,
            socket_dir=socket_dir if isinstance(socket_dir, str) and not url.host else None,
            port=url.port or DEFAULT_PORT,
            database=url.database or "",
            user=url.username,
        )

    @property
    def where(self) -> str:
        if self.host:
            return f"{self.host}:{self.port}"
        if self.socket_dir:
            return f"the Unix socket {self.socket_dir.rstrip('/')}/.s.PGSQL.{self.port}"
        return f"the default local server (port {self.port})"

    def createdb(self) -> str:
        command = ["createdb"]
        if self.host or self.socket_dir:
            command += ["-h", self.host or self.socket_dir or ""]
        command += ["-p", str(self.port)]
        if self.user:
            command += ["-U", self.user]
        return shlex.join([*command, self.database])


def database_failure(exc: BaseException, database_url: str, *, setting: str) -> str | None:
    """The sentence for a failure to open or migrate the database of `database_url`, or
    None when `exc` is none of those. `setting` names where the URL came from."""
    try:
        url = make_url(database_url)
    except Exception:  # not a URL: reported as such elsewhere
        return None
    if url.get_backend_name() == "sqlite":
        path = Path(url.database or "").expanduser().absolute()
        where = f"the SQLite database {path}"
    else:
        server = _Server.of(url)
        where = f'PostgreSQL database "{server.database}" on {server.where}'
    for cause in _causes(exc):
        if isinstance(cause, ForeignSchema):
            return (
                f"{where} holds tables that are not chatcrm's ({cause.detail}); chatcrm "
                f"needs an empty database of its own: create one, or fix {setting}"
            )
    if url.get_backend_name() == "sqlite":
        for cause in _causes(exc):
            sentence = _sqlite_sentence(cause, path, setting)
            if sentence is not None:
                return sentence
        return None
    return connect_failure(exc, database_url, setting=setting)


def _sqlite_sentence(exc: BaseException, path: Path, setting: str) -> str | None:
    if not isinstance(exc, sqlite3.DatabaseError):
        return None
    reason = _first_line(exc)
    if "not a database" in reason:  # also "file is encrypted or is not a database"
        return f"{path} is not a SQLite database ({reason}); check the path in {setting}"
    if isinstance(exc, sqlite3.OperationalError) and reason in (
        "database is locked",
        "database is busy",
    ):
        return (
            f"the SQLite database {path} is locked by another process (another chatcrm, a "
            f"sqlite3 shell, a backup) longer than CHATCRM_SQLITE_BUSY_TIMEOUT_MS: try again "
            f"when it has finished"
        )
    if isinstance(exc, sqlite3.OperationalError) and (
        "unable to open" in reason or "readonly database" in reason
    ):
        # A read-only file is refused before connecting; "readonly database" is then a
        # folder where SQLite cannot make the file's journal (-wal, -shm).
        return (
            f"cannot open the SQLite database {path} ({reason}); its folder must let "
            f"chatcrm create and write files: check the path in {setting}"
        )
    return None


def connect_failure(exc: BaseException, database_url: str, *, setting: str) -> str | None:
    """The sentence for a failure to open the PostgreSQL database of `database_url`, or None
    when `exc` is not one. `setting` names where the URL came from (`--database-url`)."""
    try:
        url = make_url(database_url)
    except Exception:  # not a URL: reported as such elsewhere
        return None
    if url.get_backend_name() not in ("postgresql", "postgres"):
        return None
    server = _Server.of(url)
    for cause in _causes(exc):
        sentence = _sentence(cause, server, setting)
        if sentence is not None:
            return sentence
    return None


def _causes(exc: BaseException) -> Iterator[BaseException]:
    """`exc` and what it wraps: SQLAlchemy keeps the driver's error in `orig`, and both it
    and db/errors.py raise theirs `from` the driver's."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        orig = getattr(current, "orig", None)
        current = orig if isinstance(orig, BaseException) else current.__cause__


def _sentence(exc: BaseException, server: _Server, setting: str) -> str | None:
    where = server.where
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        return (
            f'PostgreSQL database "{server.database}" does not exist on {where}; '
            f"create it ({server.createdb()}) or fix {setting}"
        )
    if isinstance(exc, asyncpg.InvalidAuthorizationSpecificationError):
        # Wrong password (InvalidPasswordError), unknown role, or no pg_hba.conf entry:
        # the server's words tell which.
        user = f'user "{server.user}"' if server.user else "the default user"
        return (
            f"PostgreSQL at {where} did not accept {user} ({_first_line(exc)}); "
            f"check the user and password in {setting}"
        )
    if isinstance(exc, asyncpg.CannotConnectNowError):
        return f"PostgreSQL at {where} is starting up or shutting down; try again in a moment"
    if isinstance(exc, asyncpg.TooManyConnectionsError):
        return (
            f"PostgreSQL at {where} has no free connection ({_first_line(exc)}); try again "
            "later, or raise the server's max_connections"
        )
    # The OSError subclasses below before OSError itself: all of them are OSErrors.
    if isinstance(exc, TimeoutError):
        return (
            f"no answer from PostgreSQL at {where} in time; is the address right and the port "
            f"open? check {setting} (or raise CHATCRM_DB_CONNECT_TIMEOUT)"
        )
    if isinstance(exc, socket.gaierror):
        return (
            f'cannot find the PostgreSQL host "{server.host}" (unknown host name); '
            f"check the host in {setting}"
        )
    if isinstance(exc, ConnectionRefusedError):
        return (
            f"cannot connect to PostgreSQL at {where} (connection refused); "
            f"is the server running? check {setting}"
        )
    if isinstance(exc, FileNotFoundError):  # no server socket in that folder
        return (
            f"cannot connect to PostgreSQL at {where} (no server socket there); "
            f"is the server running? check {setting}"
        )
    if isinstance(exc, OSError):
        reason = exc.strerror or _first_line(exc)
        return f"cannot connect to PostgreSQL at {where} ({reason}); check {setting}"
    return None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:200] if lines else type(exc).__name__
