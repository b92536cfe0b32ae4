"""`chatcrm import` and `chatcrm export` (contract G): CSV in and out of a running server,
through its HTTP API. Exit status: 0 all rows went, 1 some failed, 2 a bad file or option
(one line on stderr, no traceback)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TextIO, TypeVar

import click

from chatcrm.transfer.problems import BadInput

F = TypeVar("F", bound=Callable[..., Any])


def _bad(message: str) -> NoReturn:
    click.echo(f"chatcrm: error: {message}", err=True)
    sys.exit(2)


class _OneLineCommand(click.Command):
    """A wrong option is one line on stderr and exit 2, like a bad file (not click's usage
    block)."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else None
            _bad(exc.format_message() + (f" (see '{where} --help')" if where else ""))


def _server_url(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """The server's URL, with its scheme: `127.0.0.1:8000` alone is not one."""
    from urllib.parse import urlsplit

    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise click.BadParameter(f"{value!r} is not http://host:port or https://host")
    return value


def _server_options(command: F) -> F:
    for option in reversed(
        (
            click.option(
                "--url",
                required=True,
                envvar="CHATCRM_URL",
                callback=_server_url,
                help="The server: http://host:port or https://….",
            ),
            click.option("--api-key", required=True, envvar="CHATCRM_API_KEY", help="An API key."),
            click.option(
                "--workspace", required=True, envvar="CHATCRM_WORKSPACE", help="A workspace id."
            ),
            # Seconds between progress lines when stderr is not a terminal.
            click.option(
                "--progress-interval",
                type=click.FloatRange(min=0.0),
                default=10.0,
                envvar="CHATCRM_PROGRESS_INTERVAL",
                hidden=True,
            ),
        )
    ):
        command = option(command)
    return command


def _bom_option(written: str, more: str = "") -> Callable[[F], F]:
    return click.option(
        "--bom",
        is_flag=True,
        help=f"Start {written} with a UTF-8 byte-order mark, so Excel reads accents{more}.",
    )


def _import_options(command: F) -> F:
    for option in reversed(
        (
            click.argument("file", type=click.Path(path_type=Path, dir_okay=False)),
            _server_options,
            click.option("--dry-run", is_flag=True, help="Check and report; write nothing."),
            click.option(
                "--rejects",
                type=click.Path(path_type=Path, dir_okay=False),
                help="Write each failed row here, with an error column.",
            ),
            _bom_option("the rejects file", " (it gets one anyway when FILE has one)"),
        )
    ):
        command = option(command)
    return command


def _contact_import_options(command: F) -> F:
    """What only a contacts import takes (contacts are matched, and carry tags)."""
    for option in reversed(
        (
            click.option(
                "--match",
                type=click.Choice(["auto", "phone", "email"]),
                default="auto",
                show_default=True,
                help="How a contact row finds the contact it updates (auto: phone, else email).",
            ),
            click.option("--create-tags", is_flag=True, help="Create the tags a row names."),
        )
    ):
        command = option(command)
    return command


@click.group("import")
def import_group() -> None:
    """Import contacts or opportunities from a CSV file into a running server."""


def _run_import(kind: str, file: Path, options: dict[str, Any]) -> None:
    from chatcrm.transfer.runs import Target, run_import

    target = Target(options.pop("url"), options.pop("api_key"), options.pop("workspace"))
    try:
        tally = run_import(
            kind,
            file,
            target,
            match_by=options.get("match", "auto"),
            dry_run=options["dry_run"],
            rejects_path=options["rejects"],
            create_tags=options.get("create_tags", False),
            bom=options["bom"],
            progress_interval=options["progress_interval"],
        )
    except BadInput as exc:
        _bad(str(exc))
    for warning in tally.warnings:
        click.echo(f"chatcrm: warning: {warning}", err=True)
    if tally.failed and options["rejects"] is None:
        _show_failures(tally.first_failures, tally.failed)
    click.echo(tally.line())
    sys.exit(1 if tally.failed else 0)


def _show_failures(first: list[tuple[int, str]], failed: int) -> None:
    """Without a rejects file, the first failed rows on stderr, and how to get them all."""
    for line, error in first:
        click.echo(f"chatcrm: line {line}: {error}", err=True)
    rows = "row" if failed == 1 else "rows"
    shown = "" if failed <= len(first) else f" (the first {len(first)} above)"
    click.echo(
        f"chatcrm: {failed} {rows} failed{shown}; --rejects FILE writes every failed row "
        "with its line and reasons",
        err=True,
    )


@import_group.command("contacts", cls=_OneLineCommand)
@_import_options
@_contact_import_options
def import_contacts(file: Path, **options: Any) -> None:
    """Create or update contacts from FILE (matched by phone or email)."""
    _run_import("contacts", file, options)


@import_group.command("opportunities", cls=_OneLineCommand)
@_import_options
def import_opportunities(file: Path, **options: Any) -> None:
    """Create or update opportunities from FILE (matched by contact and name)."""
    _run_import("opportunities", file, options)


@click.group("export")
def export_group() -> None:
    """Export contacts or opportunities of a running server, in the columns import reads."""


def _export_options(command: F) -> F:
    for option in reversed(
        (
            click.option(
                "-o",
                "--output",
                type=click.Path(path_type=Path, dir_okay=False, allow_dash=True),
                help="The file to write (default: stdout).",
            ),
            click.option(
                "--format",
                "fmt",
                type=click.Choice(["csv", "jsonl"]),
                default="csv",
                show_default=True,
            ),
            _bom_option("the CSV written"),
            _server_options,
            click.option("--q", help="Only records whose text holds this."),
            click.option("--stage", help="Only records in this stage (name or id)."),
            click.option("--agent", help="Only records of this agent (email or id)."),
            click.option(
                "--updated-since", help="Only records changed since (ISO 8601 timestamp)."
            ),
        )
    ):
        command = option(command)
    return command


def _run_export(kind: str, filters: dict[str, str | None], options: dict[str, Any]) -> None:
    from chatcrm.transfer.runs import Target, run_export

    target = Target(options["url"], options["api_key"], options["workspace"])
    filters = {
        "--q": options["q"],
        "--stage": options["stage"],
        "--agent": options["agent"],
        **filters,
        "--updated-since": options["updated_since"],
    }
    if options["bom"] and options["fmt"] != "csv":
        _bad("--bom applies to CSV only")
    try:
        count = run_export(
            kind,
            target,
            lambda: _output(options["output"], bom=options["bom"]),
            fmt=options["fmt"],
            filters=filters,
            progress_interval=options["progress_interval"],
        )
    except BadInput as exc:
        _bad(str(exc))
    except Exception as exc:
        # The server refused a page or went away: the file is incomplete.
        from chatcrm_client import ChatcrmError

        if not isinstance(exc, ChatcrmError):
            raise
        click.echo(f"chatcrm: error: the export stopped: {exc}", err=True)
        sys.exit(1)
    click.echo(f"exported {count} {kind}", err=True)


@contextmanager
def _output(path: Path | None, *, bom: bool) -> Iterator[TextIO]:
    """Where the export writes: `-o FILE`, else stdout; a byte-order mark first with
    --bom."""
    out: TextIO
    if path is None or str(path) == "-":
        out = sys.stdout
    else:
        try:
            out = path.open("w", encoding="utf-8", newline="")
        except OSError as exc:
            raise BadInput(f"{path}: {exc.strerror}") from exc
    try:
        if bom:
            out.write("\ufeff")
        yield out
    finally:
        if out is not sys.stdout:
            out.close()


@export_group.command("contacts", cls=_OneLineCommand)
@_export_options
@click.option("--tag", help="Only contacts with this tag (name or id).")
@click.option("--solved/--unsolved", "is_solved", default=None, help="Only solved or unsolved.")
def export_contacts(tag: str | None, is_solved: bool | None, **options: Any) -> None:
    """Write the workspace's contacts as CSV (or JSON lines)."""
    solved = None if is_solved is None else ("true" if is_solved else "false")
    _run_export("contacts", {"--tag": tag, "--solved/--unsolved": solved}, options)


@export_group.command("opportunities", cls=_OneLineCommand)
@_export_options
@click.option("--contact", help="Only opportunities of this contact (id, phone or email).")
@click.option(
    "--win-loss-status", type=click.Choice(["0", "1", "2"]), help="0 open, 1 won, 2 lost."
)
def export_opportunities(contact: str | None, win_loss_status: str | None, **options: Any) -> None:
    """Write the workspace's opportunities as CSV (or JSON lines)."""
    filters = {"--contact": contact, "--win-loss-status": win_loss_status}
    _run_export("opportunities", filters, options)
