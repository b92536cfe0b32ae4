"""The `chatcrm` command line (contract section 6), one module per subject."""

from __future__ import annotations

import click

from chatcrm.cli.accounts import accounts, init
from chatcrm.cli.citus import citus
from chatcrm.cli.dispatch import dispatch
from chatcrm.cli.keys import keys
from chatcrm.cli.service import migrate, serve
from chatcrm.cli.transfer import export_group, import_group
from chatcrm.cli.users import users
from chatcrm.cli.workspaces import workspace


@click.group()
@click.version_option(package_name="chatcrm")
def main() -> None:
    """chatcrm: contacts and opportunities of chat-driven sales teams."""


for _command in (
    serve,
    dispatch,
    migrate,
    init,
    accounts,
    workspace,
    keys,
    users,
    import_group,
    export_group,
    citus,
):
    main.add_command(_command)

__all__ = ["main"]
