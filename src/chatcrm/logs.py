"""Structured logs: one JSON object per line, with the request id where there is one."""

from __future__ import annotations

import atexit
import io
import logging
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
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in record.__dict__.items():
            if key not in _STANDARD and not key.startswith("_"):
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()


class TextFormatter(logging.Formatter):
    """`level logger: message key=value …` for people reading a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{record.levelname} {record.name}: {record.getMessage()}"
        extras = " ".join(
            f"{key}={value}"
            for key, value in record.__dict__.items()
            if key not in _STANDARD and not key.startswith("_")
        )
        if extras:
            line = f"{line} {extras}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


class BufferedStderrHandler(logging.StreamHandler):
    """Writes log lines to stderr through a 64 KiB buffer, flushed every half second and at
    once for warnings and errors: one write per request line would be one system call per
    request on the hot path."""

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
            self.stream.write(self.format(record) + "\n")
            if record.levelno >= logging.WARNING:
                self.flush()
        except Exception:
            self.handleError(record)


def configure(level: str = "info", *, json: bool = True) -> None:
    handler = BufferedStderrHandler()
    handler.setFormatter(JsonFormatter() if json else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
