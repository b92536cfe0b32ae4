"""Database URLs, and the SQLAlchemy engine used for migrations and schema work.

Requests run through `chatcrm.db.database` instead (driver-level, see compiled.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from sqlalchemy import event
from sqlalchemy.engine import URL, make_url
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from chatcrm.config import Settings
from chatcrm.core.urls import without_password

# A search ignores case and accents: "JOSÉ" and "jose" find "José", "nunez" finds
# "Núñez". Both sides of the comparison go through one function, chatcrm_fold: SQLite's
# is `fold` (its own lower() and LIKE know ASCII only), PostgreSQL's migration 0011's.
UNICODE_FOLD = "chatcrm_fold"
# PostgreSQL without the unaccent extension: the accented Latin letters its translate()
# replaces, and by what.
ACCENTED = "áàâäãåāăąéèêëēĕėęěíìîïīĭįóòôöõøōŏőúùûüūŭůűųñńňçćčýÿśšźżžğłđ"
PLAIN = "aaaaaaaaaeeeeeeeeeiiiiiiiooooooooouuuuuuuuunnncccyysszzzgld"


def _unaccent_rules() -> dict[str, str]:
    """What PostgreSQL's unaccent replaces (`é` → e, `Ħ` → h, `Æ` → AE, `％` → %) and takes
    off (combining accents, a rule with no replacement), read as unaccent reads its rules.
    `unaccent.rules` beside this module is PostgreSQL 15's file as it ships (PostgreSQL
    License): Unicode decomposition would also take apart letters unaccent keeps (`й`,
    `ガ`, Hangul syllables) and find on SQLite what PostgreSQL does not."""
    rules: dict[str, str] = {}
    text = (Path(__file__).parent / "unaccent.rules").read_text(encoding="utf-8")
    for line in text.splitlines():
        source, _, plain = line.partition("\t")
        rules[source] = plain.strip()
    return rules


UNACCENT_RULES = _unaccent_rules()
_UNACCENT = str.maketrans(UNACCENT_RULES)


def fold(value: object) -> object:
    """Lower case, without accents, as PostgreSQL's chatcrm_fold: `Núñez` →
    `nunez`, `Straße` → `strasse`; letters unaccent keeps are kept (`й`, `ガ`)."""
    if not isinstance(value, str):
        return value
    if value.isascii():  # most names and every email: nothing to take apart
        return value.lower()
    # Python lowers a Σ that ends a word to ς, PostgreSQL to σ: both fold to σ (migration
    # 0017), so that `ΟΔΥΣ` finds `Οδυσσέας` and `ΟΔΥΣΣΕΑΣ` finds it too.
    return value.translate(_UNACCENT).lower().replace("ς", "σ")


class DatabaseUrlError(ValueError):
    pass


def backend_name(url: str) -> str | None:
    """ "postgresql" or "sqlite" (None for what is not a database URL: `async_url` says why)."""
    try:
        return make_url(url).get_backend_name()
    except Exception:
        return None


def async_url(url: str) -> URL:
    """Map the public URL forms (`sqlite:///file.db`, `postgresql://…`) to async drivers."""
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy raises ArgumentError with its own wording
        # An empty one is most often a variable set to nothing, meant as unset.
        hint = ": give one, or unset it for the SQLite default" if not url else ""
        raise DatabaseUrlError(f"not a database URL: {without_password(url)!r}{hint}") from exc
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        if not parsed.database or parsed.database == ":memory:":
            raise DatabaseUrlError("SQLite needs a file path, e.g. sqlite:///./chatcrm.db")
        _check_sqlite_file(Path(parsed.database).expanduser())
        return parsed.set(drivername="sqlite+aiosqlite")
    if backend in ("postgresql", "postgres"):
        if parsed.host and "@" in parsed.host:
            # An "@" of the password, not encoded, ends the credentials early: the rest of
            # the password would be shown as the host.
            raise DatabaseUrlError(
                "the URL has an '@' after its user and password: write an '@' of the "
                "password as %40"
            )
        if not parsed.database:
            # The driver would take the database named after the user (often the server's
            # `postgres`), and chatcrm would install its tables there.
            raise DatabaseUrlError(
                "the URL names no database: add it after the host, e.g. "
                "postgresql://chatcrm@127.0.0.1:5432/chatcrm"
            )
        # The pool serving requests takes the URL's parts and its `host` query parameter
        # only (docs/operations.md 3.2); the migrations' engine takes the same, where the
        # driver would refuse any other parameter (`sslmode`: set PGSSLMODE instead).
        # When the URL has a host, the URL's host wins (3.2): asyncpg's dialect would let the
        # query's `host` override it.
        query = {k: v for k, v in parsed.query.items() if k == "host" and not parsed.host}
        return parsed.set(drivername="postgresql+asyncpg", query=query)
    raise DatabaseUrlError(f"unsupported database {backend!r}: use sqlite:/// or postgresql://")


def _check_sqlite_file(path: Path) -> None:
    """Refuse a file SQLite cannot open, with a clear message. Checked here rather than
    left to the driver, whose connect failure also races interpreter shutdown."""
    if path.exists():
        if not path.is_file():
            raise DatabaseUrlError(f"the SQLite database path is not a file: {path}")
        if not os.access(path, os.R_OK | os.W_OK):
            raise DatabaseUrlError(f"the SQLite database file is not readable and writable: {path}")
        # Beside the file SQLite makes its journal (-wal, -shm), also for an existing one:
        # beside the file a link points to.
        folder = path.resolve().parent
        if not os.access(folder, os.W_OK | os.X_OK):
            raise DatabaseUrlError(
                f"the folder of the SQLite file is not writable: {folder}; SQLite writes "
                "its journal (-wal, -shm) beside the file"
            )
    elif not path.parent.is_dir():
        raise DatabaseUrlError(
            f"the folder of the SQLite file does not exist: {path.parent}; create it, or fix "
            "the path"
        )
    elif not os.access(path.parent, os.W_OK | os.X_OK):
        raise DatabaseUrlError(f"the folder of the SQLite file is not writable: {path.parent}")


def standalone_engine(url: str, settings: Settings) -> AsyncEngine:
    """A short-lived engine without pooling, for migrations and administrative work."""
    parsed = async_url(url)
    if parsed.get_backend_name() == "postgresql":
        return create_async_engine(
            parsed, poolclass=NullPool, connect_args={"timeout": settings.db_connect_timeout}
        )
    engine = create_async_engine(parsed, poolclass=NullPool)
    busy = int(settings.sqlite_busy_timeout_ms)

    @event.listens_for(engine.sync_engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # we emit BEGIN ourselves
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA busy_timeout={busy}")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine.sync_engine, "begin")
    def _on_begin(conn: Any) -> None:
        # IMMEDIATE: the write lock is taken before anything is read (see migrate.py).
        conn.exec_driver_sql("BEGIN IMMEDIATE")

    return engine
