"""Progress on stderr: a bar (rows, rows/s, time left) on a terminal; otherwise one line
every `interval` seconds, for logs."""

from __future__ import annotations

import sys
import time
from types import TracebackType
from typing import TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

DEFAULT_INTERVAL = 10.0


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f} rows/s")


class RowProgress:
    """`with RowProgress(total, what) as progress: progress.advance(n)`."""

    def __init__(
        self,
        total: int | None,
        what: str,
        *,
        interval: float = DEFAULT_INTERVAL,
        stream: TextIO | None = None,
    ) -> None:
        self.total = total
        self.what = what
        self.interval = interval
        self.stream = stream or sys.stderr
        self.done = 0
        self.started = time.monotonic()
        self.last_line = self.started
        self.bar: Progress | None = None
        if self.stream.isatty():
            self.bar = Progress(
                TextColumn(what),
                BarColumn(),
                MofNCompleteColumn(),
                _RateColumn(),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            self.task = self.bar.add_task(what, total=total)

    def __enter__(self) -> RowProgress:
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self.bar is not None:
            self.bar.stop()

    def advance(self, rows: int) -> None:
        self.done += rows
        if self.bar is not None:
            self.bar.update(self.task, advance=rows)
            return
        now = time.monotonic()
        if now - self.last_line >= self.interval:
            self.last_line = now
            self.stream.write(self.line(now) + "\n")
            self.stream.flush()

    def line(self, now: float) -> str:
        elapsed = max(now - self.started, 1e-9)
        rate = self.done / elapsed
        of = f" of {self.total:,}" if self.total is not None else ""
        left = ""
        if self.total and rate > 0 and self.done < self.total:
            left = f", {_duration((self.total - self.done) / rate)} left"
        return f"{self.what}: {self.done:,}{of} rows, {rate:,.0f} rows/s{left}"


def _duration(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"
