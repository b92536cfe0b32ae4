"""The `chatcrm` command line (contract section 6), one module per subject.

Each subject's module is imported only when its command runs (or `--help` lists them):
`chatcrm keys list` need not load the HTTP clients of `serve` and `dispatch`, and every
command starts in about half the time."""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

import click

# Command name → "module:attribute" (`--help` lists them in alphabetical order, as click does).
COMMANDS = {
    "serve": "chatcrm.cli.service:serve",
    "dispatch": "chatcrm.cli.dispatch:dispatch",
    "migrate": "chatcrm.cli.service:migrate",
    "init": "chatcrm.cli.accounts:init",
    "accounts": "chatcrm.cli.accounts:accounts",
    "workspace": "chatcrm.cli.workspaces:workspace",
    "keys": "chatcrm.cli.keys:keys",
    "users": "chatcrm.cli.users:users",
    "import": "chatcrm.cli.transfer:import_group",
    "export": "chatcrm.cli.transfer:export_group",
    "citus": "chatcrm.cli.citus:citus",
}


class _LazyGroup(click.Group):
    """A group whose commands are imported by name when needed (click's documented
    lazy-loading pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def main(
        self,
        args: Any = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        """Every failure is one line on stderr (contract section 6), a wrong option or
        command too, where click would print its usage block."""
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        from pydantic import ValidationError  # config's own library: already loaded

        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except ValidationError as exc:  # a CHATCRM_* setting out of its range
            click.echo(f"chatcrm: error: {_setting_error(exc)}", err=True)
            sys.exit(1)
        except click.exceptions.NoArgsIsHelpError as exc:  # a group alone: its help
            # On stdout, as --help prints it (`chatcrm keys | less` shows it), status 0.
            click.echo(exc.ctx.get_help() if exc.ctx else "")
            sys.exit(0)
        except click.ClickException as exc:
            where = getattr(getattr(exc, "ctx", None), "command_path", None)
            hint = f" (see '{where} --help')" if isinstance(exc, click.UsageError) and where else ""
            # One line (contract 6): click spreads some messages over several, a missing
            # choice option's list of choices one per line.
            message = re.sub(r"\s*[\r\n\t]\s*", " ", exc.format_message())
            click.echo(f"chatcrm: error: {message}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.Abort:
            click.echo("chatcrm: error: aborted", err=True)
            sys.exit(1)
        # Not standalone, click returns what `ctx.exit(code)` (--help, --version) gave.
        sys.exit(result if type(result) is int else 0)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module, attribute = target.split(":")
        command: Any = getattr(importlib.import_module(module), attribute)
        assert isinstance(command, click.Command) and command.name == cmd_name
        return command


def _setting_error(exc: Any) -> str:
    """The first invalid setting, named as it is set (docs/operations.md, section 2), its
    value shown without the password a URL may carry."""
    from chatcrm.core.urls import without_password

    first = exc.errors()[0]
    name = "CHATCRM_" + "_".join(str(part) for part in first["loc"]).upper()
    return f"invalid setting {name}={without_password(first.get('input'))!r}: {first['msg']}"


@click.group(cls=_LazyGroup)
@click.version_option(package_name="chatcrm")
def main() -> None:
    """chatcrm: contacts and opportunities of chat-driven sales teams."""


__all__ = ["main"]
