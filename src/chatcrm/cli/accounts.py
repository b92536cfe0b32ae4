"""Accounts: `chatcrm init` creates one (with a workspace and a key); `accounts list`."""

from __future__ import annotations

from typing import TypedDict

import click

from chatcrm.cli.database import (
    database_url_option,
    one_to_200_characters,
    print_json,
    run_db,
)
from chatcrm.cli.tables import json_array_option, print_list
from chatcrm.db.database import Connection
from chatcrm.provisioning import NewAccount, init_account


@click.command()
@database_url_option
@click.option(
    "--workspace-name",
    default="My workspace",
    show_default=True,
    callback=one_to_200_characters,
    help="1 to 200 characters.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def init(database_url: str | None, workspace_name: str, as_json: bool) -> None:
    """Create an account with a workspace (default stages) and an API key."""

    async def work(conn: Connection) -> NewAccount:
        return await init_account(conn, workspace_name=workspace_name)

    new = run_db(database_url, work, create=True)
    if as_json:
        print_json(
            {"accountId": new.account_id, "workspaceId": new.workspace_id, "apiKey": new.api_key}
        )
    else:
        click.echo(f"account:   {new.account_id}")
        click.echo(f"workspace: {new.workspace_id}")
        click.echo(f"API key:   {new.api_key}  (shown once; only its hash is stored)")


@click.group()
def accounts() -> None:
    """Accounts."""


class AccountItem(TypedDict):
    accountId: str
    name: str
    createdAt: str | None


@accounts.command("list")
@database_url_option
@json_array_option
def accounts_list(database_url: str | None, as_json: bool) -> None:
    """List the accounts, oldest first: id, name, creation date."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.core.timestamps import iso

    async def work(conn: Connection) -> list[AccountItem]:
        return [
            {"accountId": row["id"], "name": row["name"], "createdAt": iso(row["created_at"])}
            for row in await auth_repo.list_accounts(conn)
        ]

    print_list(
        run_db(database_url, work),
        as_json=as_json,
        headings=("ACCOUNT", "NAME", "CREATED"),
        cells=lambda item: (item["accountId"], item["name"], item["createdAt"] or ""),
    )
