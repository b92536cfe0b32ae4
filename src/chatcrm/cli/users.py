"""People of an account (contract J.1): `chatcrm users create`, `reset-link` and `list`.
Links start with CHATCRM_PUBLIC_URL (default: the address `chatcrm serve` listens on)."""

from __future__ import annotations

from typing import Any

import click

from chatcrm.cli.database import (
    ACCOUNTS_HINT,
    CommandError,
    check_values,
    database_url_option,
    print_json,
    run_db,
    settings_for,
)
from chatcrm.cli.tables import json_array_option, print_list
from chatcrm.config import Settings
from chatcrm.db.database import Connection

ROLES = ("owner", "admin", "agent", "viewer")

# The option of `users create` that gives each field of the invitation.
_USER_OPTIONS = {
    "email": "--email",
    "name": "--name",
    "role": "--role",
    "workspaceIds": "--workspace",
}


@click.group()
def users() -> None:
    """Users of an account: invitations, reset links."""


@users.command("create")
@database_url_option
@click.option("--account", "account_id", required=True, metavar="ID", help="The account id.")
@click.option("--email", required=True)
@click.option("--name", required=True)
@click.option("--role", required=True, type=click.Choice(ROLES))
@click.option(
    "--workspace",
    "workspace_ids",
    multiple=True,
    help="A workspace of an agent or viewer (repeat for several).",
)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def users_create(
    database_url: str | None,
    account_id: str,
    email: str,
    name: str,
    role: str,
    workspace_ids: tuple[str, ...],
    as_json: bool,
) -> None:
    """Invite a user; prints the invitation link (single-use, valid 7 days)."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.core.errors import ServiceError
    from chatcrm.people import audit, links
    from chatcrm.people import users as people
    from chatcrm.people.errors import DuplicateUser
    from chatcrm.people.fields import USER

    settings = settings_for(database_url)
    body: dict[str, Any] = {"email": email, "name": name, "role": role}
    if workspace_ids:
        body["workspaceIds"] = list(workspace_ids)
    check_values(USER, body, _USER_OPTIONS)

    async def work(conn: Connection) -> tuple[str, str, str, str]:
        if not await auth_repo.account_exists(conn, account_id):
            raise CommandError(f"no account with id {account_id!r} ({ACCOUNTS_HINT})")
        try:
            invited = await people.invite(conn, None, account_id, body)
        except DuplicateUser as exc:
            again = f"`chatcrm users reset-link {email}` gives that user a new link"
            raise CommandError(f"{exc.message.rstrip('.')}: {again}") from exc
        except ServiceError as exc:
            raise CommandError.refused(exc, _USER_OPTIONS, account_id=account_id) from exc
        row = invited.row
        await audit.note_command(conn, account_id, "user.invited", row["id"])
        link = links.link(settings.base_url, links.INVITE, invited.token)
        return row["id"], link, row["email"], row["name"]

    user_id, url, to, invited_name = run_db(database_url, work)
    _say_where_links_point(settings)
    _mail(settings, to=to, name=invited_name, purpose="invite", link=url)
    if as_json:
        print_json({"userId": user_id, "inviteUrl": url})
    else:
        click.echo(f"user id:    {user_id}")
        click.echo(f"invitation: {url}  (single-use, valid 7 days)")


def _mail(settings: Settings, *, to: str, name: str, purpose: str, link: str) -> None:
    """The link e-mailed too when CHATCRM_SMTP_URL is set (J.1), as the API's are; a
    failure is said on stderr (without the link) and the command still succeeds: the
    link is printed."""
    from chatcrm.people.mail import mail_link

    failed = mail_link(settings, to=to, name=name, purpose=purpose, link=link)
    if failed is not None:
        click.echo(
            f"note: the e-mail to {to} could not be sent ({failed}: see CHATCRM_SMTP_URL, "
            "CHATCRM_SMTP_FROM and the address); give the person the link printed here",
            err=True,
        )


def _say_where_links_point(settings: Settings) -> None:
    """`serve` gives its workers the address it listens on; a command run apart from it
    cannot know that address, so without CHATCRM_PUBLIC_URL it uses serve's default and
    says so (on stderr: stdout keeps its one line or JSON object)."""
    if settings.public_url is None:
        click.echo(
            f"note: the link uses {settings.base_url}, the address `chatcrm serve` listens on "
            "by default; set CHATCRM_PUBLIC_URL to the address people open",
            err=True,
        )


@users.command("reset-link")
@database_url_option
@click.argument("email")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def users_reset_link(database_url: str | None, email: str, as_json: bool) -> None:
    """A link to set a new password (single-use, valid 1 hour; earlier ones stop working)."""
    from chatcrm.core.timestamps import utcnow
    from chatcrm.people import audit, links
    from chatcrm.people import users as people

    settings = settings_for(database_url)

    async def work(conn: Connection) -> tuple[str, str, str, str]:
        row = await people.by_email(conn, email)
        if row is None:
            raise CommandError(f"no user with e-mail {email!r} (`chatcrm users list` lists them)")
        token = await links.new_link(conn, row["id"], links.RESET, now=utcnow())
        await audit.note_command(conn, row["account_id"], "user.reset_link_created", row["id"])
        link = links.link(settings.base_url, links.RESET, token)
        return row["id"], link, row["email"], row["name"]

    user_id, url, to, name = run_db(database_url, work)
    _say_where_links_point(settings)
    _mail(settings, to=to, name=name, purpose="reset", link=url)
    if as_json:
        print_json({"userId": user_id, "resetUrl": url})
    else:
        click.echo(f"reset link: {url}  (single-use, valid 1 hour)")


@users.command("list")
@database_url_option
@click.option(
    "--account", "account_id", default=None, metavar="ID", help="Only this account's users."
)
@json_array_option
def users_list(database_url: str | None, account_id: str | None, as_json: bool) -> None:
    """The users (of one account, or all), oldest first."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.people import users as people

    async def work(conn: Connection) -> list[dict[str, Any]]:
        # As the other listings: an account that is not one is an error, not no users.
        if account_id is not None and not await auth_repo.account_exists(conn, account_id):
            raise CommandError(f"no account with id {account_id!r} ({ACCOUNTS_HINT})")
        rows = await people.list_users(conn, account_id)
        out = []
        for row in rows:
            out.append({"accountId": row["account_id"], **await people.record(conn, row)})
        return out

    found = run_db(database_url, work)
    print_list(
        found,
        as_json=as_json,
        headings=("ID", "ACCOUNT", "EMAIL", "NAME", "ROLE", "STATUS"),
        cells=lambda u: (u["id"], u["accountId"], u["email"], u["name"], u["role"], u["status"]),
    )
