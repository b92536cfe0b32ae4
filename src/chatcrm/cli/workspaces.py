"""Workspaces: `chatcrm workspace create` and `workspace list`."""

from __future__ import annotations

from typing import TypedDict

import click

from chatcrm.cli.database import (
    ACCOUNTS_HINT,
    CommandError,
    database_url_option,
    one_to_200_characters,
    print_json,
    run_db,
)
from chatcrm.cli.tables import json_array_option, print_list
from chatcrm.db.database import Connection


@click.group()
def workspace() -> None:
    """Workspaces."""


def _a_key(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, str]:
    """--api-key as (key id, secret); what is not a chatcrm key is a usage error."""
    from chatcrm.auth import keys

    parsed = keys.parse_key(value)
    if parsed is None:
        raise click.BadParameter("not a chatcrm API key", ctx, param)
    return parsed


@workspace.command("create")
@database_url_option
@click.option(
    "--api-key",
    "key",
    required=True,
    callback=_a_key,
    help="A key of the account that gets the workspace.",
)
@click.option(
    "--name",
    callback=one_to_200_characters,
    help="1 to 200 characters. Default: 'My workspace', or the first of 'My workspace 2', "
    "3… the account has not.",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def workspace_create(
    database_url: str | None, key: tuple[str, str], name: str | None, as_json: bool
) -> None:
    """Create another workspace of the account that owns --api-key."""
    from chatcrm.auth import keys
    from chatcrm.auth import repository as auth_repo
    from chatcrm.workspaces.service import create_workspace

    key_id, secret = key

    async def work(conn: Connection) -> str:
        row = await auth_repo.get_key(conn, key_id)
        if (
            row is None
            or row["revoked_at"] is not None
            or not keys.secret_matches(secret, row["secret_hash"])
        ):
            raise CommandError("the API key is unknown or revoked")
        return await create_workspace(conn, account_id=row["account_id"], name=name)

    workspace_id = run_db(database_url, work)
    if as_json:
        print_json({"workspaceId": workspace_id})
    else:
        click.echo(f"workspace: {workspace_id}")


class WorkspaceItem(TypedDict):
    workspaceId: str
    accountId: str
    name: str
    createdAt: str | None


@workspace.command("list")
@database_url_option
@click.option(
    "--account", "account_id", default=None, metavar="ID", help="Only this account's workspaces."
)
@json_array_option
def workspace_list(database_url: str | None, account_id: str | None, as_json: bool) -> None:
    """List workspaces, oldest first: id, account, name, creation date."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.core.timestamps import iso
    from chatcrm.workspaces import repository as workspaces_repo

    async def work(conn: Connection) -> list[WorkspaceItem]:
        if account_id is not None and not await auth_repo.account_exists(conn, account_id):
            raise CommandError(f"no account with id {account_id!r} ({ACCOUNTS_HINT})")
        return [
            {
                "workspaceId": row["id"],
                "accountId": row["account_id"],
                "name": row["name"],
                "createdAt": iso(row["created_at"]),
            }
            for row in await workspaces_repo.list_workspaces(conn, account_id)
        ]

    print_list(
        run_db(database_url, work),
        as_json=as_json,
        headings=("WORKSPACE", "ACCOUNT", "NAME", "CREATED"),
        cells=lambda item: (
            item["workspaceId"],
            item["accountId"],
            item["name"],
            item["createdAt"] or "",
        ),
    )
