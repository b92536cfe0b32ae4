"""The per-request line written directly (logs.log_fields) is the line logging would write,
and logging still decides whenever anything else is listening."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from chatcrm import logs

REQUEST = logging.getLogger(logs.REQUEST_LOGGER)
FIELDS: dict[str, Any] = {
    "request_id": "0" * 32,
    "method": "GET",
    "path": "/api/contact/c1",
    "route": "/api/contact/{contactId}",
    "status": 200,
    "duration_ms": 1.25,
    "key_id": None,
}


@pytest.fixture
def configured() -> Iterator[tuple[logs.BufferedStderrHandler, io.StringIO]]:
    """`logs.configure` as the service runs it, its handler writing into a string."""
    root = logging.getLogger()
    handlers, level, before = root.handlers[:], root.level, logs._handler
    logs.configure("info")
    handler = logs._handler
    assert handler is not None
    out = io.StringIO()
    handler.setStream(out)
    try:
        yield handler, out
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        logs._handler = before
        logging.getLogger(logs.REQUEST_LOGGER).setLevel(logging.NOTSET)


@contextmanager
def alone(handler: logging.Handler) -> Iterator[None]:
    """Only the service's handler on the root logger, as in a served process (pytest adds
    its own while a test runs)."""
    root = logging.getLogger()
    others = root.handlers[:]
    root.handlers[:] = [handler]
    try:
        yield
    finally:
        root.handlers[:] = others


def _through_logging(handler: logging.Handler) -> str:
    record = logging.getLogger(logs.REQUEST_LOGGER).makeRecord(
        logs.REQUEST_LOGGER, logging.INFO, __file__, 1, "request", (), None, extra=FIELDS
    )
    return handler.format(record)


def _without_time(line: str) -> dict[str, Any]:
    fields: dict[str, Any] = json.loads(line)
    assert fields.pop("ts").endswith("+00:00")
    return fields


def test_the_direct_line_is_the_line_logging_writes(
    configured: tuple[logs.BufferedStderrHandler, io.StringIO],
) -> None:
    handler, out = configured
    with alone(handler):
        assert handler.writes_alone(REQUEST, logging.INFO)
        logs.log_fields(REQUEST, logging.INFO, "request", dict(FIELDS))
    (line,) = out.getvalue().splitlines()
    direct, logged = _without_time(line), _without_time(_through_logging(handler))
    assert list(direct) == list(logged) and direct == logged
    assert direct["msg"] == "request" and direct["level"] == "info"


def test_the_text_format_too(configured: tuple[logs.BufferedStderrHandler, io.StringIO]) -> None:
    handler, out = configured
    handler.setFormatter(logs.TextFormatter())
    with alone(handler):
        logs.log_fields(REQUEST, logging.INFO, "request", dict(FIELDS))
    assert out.getvalue() == _through_logging(handler) + "\n"


def test_a_client_s_value_cannot_forge_fields_of_the_text_line() -> None:
    """A client's X-Request-Id or User-Agent holding spaces, `=` or quotes is written as one
    quoted value: the line still has one `status`, the server's."""
    forged = {**FIELDS, "request_id": 'x status=500 "', "user_agent": "", "path": "/a\nb"}
    line = logs.TextFormatter().line(0, "INFO", "chatcrm.request", "request", forged)
    # Read as logfmt: a quoted value is one value.
    pairs = re.findall(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)', line.partition(": request ")[2])
    assert [k for k, _ in pairs] == list(forged)
    assert dict(pairs)["status"] == "200"
    assert json.loads(dict(pairs)["request_id"]) == 'x status=500 "'
    assert 'request_id="x status=500 \\""' in line
    assert 'user_agent=""' in line and 'path="/a\\nb"' in line and "\n" not in line
    assert "method=GET" in line and "key_id=None" in line  # plain values stay bare


def test_another_handler_gets_the_record_and_the_line_is_still_written(
    configured: tuple[logs.BufferedStderrHandler, io.StringIO],
) -> None:
    handler, out = configured
    seen: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record)

    logging.getLogger("chatcrm").addHandler(collect := Collect())
    try:
        with alone(handler):
            assert not handler.writes_alone(REQUEST, logging.INFO)
            logs.log_fields(REQUEST, logging.INFO, "request", dict(FIELDS))
    finally:
        logging.getLogger("chatcrm").removeHandler(collect)
    (record,) = seen
    assert record.name == logs.REQUEST_LOGGER and record.getMessage() == "request"
    assert {key: getattr(record, key) for key in FIELDS} == FIELDS
    assert len(out.getvalue().splitlines()) == 1


def test_a_filter_or_a_higher_level_is_obeyed(
    configured: tuple[logs.BufferedStderrHandler, io.StringIO],
) -> None:
    handler, out = configured
    with alone(handler):
        handler.addFilter(lambda record: False)
        logs.log_fields(REQUEST, logging.INFO, "request", dict(FIELDS))
        assert out.getvalue() == ""
        handler.filters.clear()
        logging.getLogger(logs.REQUEST_LOGGER).setLevel(logging.WARNING)
        logs.log_fields(REQUEST, logging.INFO, "request", dict(FIELDS))
        assert out.getvalue() == ""
        logging.getLogger(logs.REQUEST_LOGGER).setLevel(logging.NOTSET)
        logs.log_fields(REQUEST, logging.INFO, "request", dict(FIELDS))
        assert out.getvalue() != ""


class Counting(io.StringIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


def test_routine_lines_wait_in_the_buffer_and_any_other_line_takes_them_out(
    configured: tuple[logs.BufferedStderrHandler, io.StringIO],
) -> None:
    handler, _ = configured
    handler.setStream(out := Counting())
    webhooks = logging.getLogger(logs.WEBHOOK_LOGGER)
    with alone(handler):
        out.flushes = 0
        logs.log_fields(REQUEST, logging.INFO, "request", dict(FIELDS))
        logs.log_fields(webhooks, logging.INFO, "webhook attempt", {"result": "succeeded"})
        assert out.flushes == 0 and len(out.getvalue().splitlines()) == 2
        logs.log_fields(webhooks, logging.WARNING, "webhook attempt", {"result": "failed"})
        assert out.flushes == 1
        logging.getLogger("chatcrm.events").info("published")
        assert out.flushes == 2
    assert [json.loads(line)["level"] for line in out.getvalue().splitlines()] == [
        "info",
        "info",
        "warning",
        "info",
    ]


def test_a_line_that_cannot_be_written_never_fails_the_request(
    configured: tuple[logs.BufferedStderrHandler, io.StringIO],
) -> None:
    handler, _ = configured

    class Broken(io.StringIO):
        def write(self, text: str) -> int:
            raise OSError("disk full")

    handler.setStream(Broken())
    with alone(handler):
        logs.log_fields(REQUEST, logging.INFO, "request", dict(FIELDS))
