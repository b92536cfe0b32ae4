"""Structured logs: one JSON object per line, with the request id where there is one."""

from __future__ import annotations

import atexit
import io
import logging
import re
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

import orjson

_STANDARD = set(logging.makeLogRecord({}).__dict__) | {
    "message",
    "asctime",
    "taskName",
    "color_message",  # uvicorn's ANSI-coloured copy of msg
}


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out = _head(record.created, record.levelname, record.name, record.getMessage())
        out.update(_extras(record))
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()

    def line(self, created: float, level: str, name: str, msg: str, fields: Fields) -> str:
        """What `format` makes of a record with these fields and no exception."""
        out = _head(created, level, name, msg)
        out.update(fields)
        return orjson.dumps(out, default=str).decode()


class TextFormatter(logging.Formatter):
    """`level logger: message key=value …` for people reading a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        line = self.line(
            record.created, record.levelname, record.name, record.getMessage(), _extras(record)
        )
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line

    def line(self, created: float, level: str, name: str, msg: str, fields: Fields) -> str:
        line = f"{level} {name}: {msg}"
        extras = " ".join(f"{key}={_shown(value)}" for key, value in fields.items())
        return f"{line} {extras}" if extras else line


# A value a client sent (its X-Request-Id, its User-Agent) may hold spaces, `=` or quotes:
# written bare, it would read as fields of its own (`id status=500`). Such a value, or an
# empty one, is written as a JSON string.
_NEEDS_QUOTES = re.compile(r'[\s="\\]|[\x00-\x1f\x7f]')


def _shown(value: Any) -> str:
    text = str(value)
    if text and _NEEDS_QUOTES.search(text) is None:
        return text
    return orjson.dumps(text).decode()


Fields = dict[str, Any]


def _head(created: float, level: str, name: str, msg: str) -> Fields:
    return {
        "ts": datetime.fromtimestamp(created, UTC).isoformat(timespec="milliseconds"),
        "level": level.lower(),
        "logger": name,
        "msg": msg,
    }


def _extras(record: logging.LogRecord) -> Fields:
    """The fields given with `extra=`, in their order."""
    return {
        key: value
        for key, value in record.__dict__.items()
        if key not in _STANDARD and not key.startswith("_")
    }


# The loggers of the lines written once per request (api/middleware.py) and once per
# webhook attempt (webhooks/dispatcher.py). Renaming one would only make its lines
# unbuffered again (one write each), never lose them.
REQUEST_LOGGER = "chatcrm.request"
WEBHOOK_LOGGER = "chatcrm.webhooks"
ROUTINE_LOGGERS = frozenset({REQUEST_LOGGER, WEBHOOK_LOGGER})


class BufferedStderrHandler(logging.StreamHandler):
    """Writes log lines to stderr through a 64 KiB buffer: one write per request line would
    be one system call per request on the hot path (and per webhook attempt).

    Only the routine lines (below warning level) of the request and webhook-attempt
    loggers (ROUTINE_LOGGERS) wait in the buffer, for at most half a second. Every other
    line (start-up, shutdown, warnings, errors) is written at once and takes the waiting
    lines out with it.

    Why not flush at exit only: after a graceful shutdown on SIGTERM, uvicorn restores the
    default signal handler and raises the signal again (Server.capture_signals), in the
    single server process and in each worker of `--workers N`, so the process dies without
    running atexit. A flush in the app's lifespan shutdown would come too early (uvicorn
    logs "Finished server process" after it), and the re-raise cannot be wrapped in a
    worker, whose original handlers uvicorn saves before our code runs there. What every
    exit path has in common is that uvicorn logs a line after the last request is
    answered ("Shutting down", "Finished server process", "Stopping parent process", or
    an error), so writing those lines through is enough to leave nothing behind, whoever
    stops the process and however. Only SIGKILL, or a signal uvicorn does not handle, can
    lose the request lines of the last half second.
    """

    FLUSH_SECONDS = 0.5

    def __init__(self) -> None:
        raw = io.FileIO(sys.stderr.fileno(), "w", closefd=False)
        stream = io.TextIOWrapper(
            io.BufferedWriter(raw, buffer_size=65536), encoding="utf-8", write_through=False
        )
        super().__init__(stream)
        self._timer = threading.Thread(target=self._flush_forever, daemon=True)
        self._timer.start()
        atexit.register(self.flush)

    def _flush_forever(self) -> None:
        while True:
            time.sleep(self.FLUSH_SECONDS)
            self.flush()

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._write(self.format(record), record.levelno, record.name)
        except Exception:
            self.handleError(record)

    def _write(self, line: str, level: int, name: str) -> None:
        self.stream.write(line + "\n")
        if level >= logging.WARNING or name not in ROUTINE_LOGGERS:
            self.flush()

    def writes_alone(self, logger: logging.Logger, level: int) -> bool:
        """Is this handler, as configured, the only place a line of `logger` at `level`
        goes?"""
        if self.filters or self.level > level:
            return False
        current: logging.Logger | None = logger
        while current is not None:
            if current.filters or not current.propagate:
                return False
            if current.handlers:
                return current.parent is None and current.handlers == [self]
            current = current.parent
        return False


# The handler `configure` installed, for `log_fields`.
_handler: BufferedStderrHandler | None = None


def log_fields(logger: logging.Logger, level: int, msg: str, fields: Fields) -> None:
    """`logger.log(level, msg, extra=fields)`, for the lines written once per request or
    webhook attempt. When `configure`'s handler is the line's only destination, the line
    is formatted and written directly, as logging would have written it: building the
    record (caller frame, thread, process) and walking the handlers cost about twice the
    line itself (docs/performance.md). Anywhere else (a handler added around the service,
    pytest's log capture), it goes through logging."""
    handler = _handler
    if (
        handler is not None
        and logger.isEnabledFor(level)
        and handler.writes_alone(logger, level)
        and isinstance(handler.formatter, JsonFormatter | TextFormatter)
    ):
        try:
            name = logging.getLevelName(level)
            line = handler.formatter.line(time.time(), name, logger.name, msg, fields)
            with handler.lock:  # type: ignore[union-attr]  # made by Handler.__init__
                handler._write(line, level, logger.name)
            return
        except Exception:  # logging's own path, below, reports it (Handler.handleError)
            pass
    logger.log(level, msg, extra=fields)


# Libraries whose debug lines carry every SQL statement's parameters (password hashes,
# tokens, channel secrets), and httpx (the Graph API's client), whose info line for every
# request names its URL (a media URL carries the signature that grants it) and doubles the
# log of each call: kept at WARNING whatever CHATCRM_LOG_LEVEL says. aiohttp's client, which
# sends the webhooks, writes no line per request.
_TOO_TALKATIVE = ("aiosqlite", "httpx", "httpcore")


def silence_libraries() -> None:
    for name in _TOO_TALKATIVE:
        logging.getLogger(name).setLevel(logging.WARNING)


def configure(level: str = "info", *, json: bool = True) -> None:
    global _handler
    handler = _handler = BufferedStderrHandler()
    handler.setFormatter(JsonFormatter() if json else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    silence_libraries()
    # alembic's info lines (its plugins' set-up, each migration's name: some 35 on a first
    # start) would bury the demo's lines; `serve` says in one line what it migrated.
    if root.level > logging.DEBUG:
        logging.getLogger("alembic").setLevel(logging.WARNING)
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
