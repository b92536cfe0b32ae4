"""API keys: `chatcrm keys create`, `revoke`, `limit` and `list`."""

from __future__ import annotations

import math
import re
from typing import Any, TypedDict

import click

from chatcrm.cli.database import (
    ACCOUNTS_HINT,
    CommandError,
    check_values,
    database_url_option,
    invalid_values,
    print_json,
    run_db,
)
from chatcrm.cli.tables import json_array_option, print_list
from chatcrm.config import RATE_MAX
from chatcrm.db.database import Connection

# The option of `keys create` that gives each field of the key.
_KEY_OPTIONS = {
    "name": "--name",
    "scopes": "--scopes",
    "workspaceIds": "--workspace",
    "expiresAt": "--expires",
}


@click.group()
def keys() -> None:
    """API keys."""


class _FiniteRate(click.FloatRange):
    """A number of requests per second: 0 to RATE_MAX, and a number (not inf or nan, which
    FloatRange lets through and no budget can hold)."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number of requests per second.", param, ctx)
        return number


FINITE_RATE = _FiniteRate(min=0, max=RATE_MAX)


class _Limit(click.ParamType):
    """`keys limit`'s RATE: a finite number of requests per second (0: unlimited), or
    `default` (None: the service's CHATCRM_RATE_LIMIT)."""

    name = "rate"

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        if value is None or isinstance(value, float):
            return value
        if value == "default":
            return None
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and 0 <= number <= RATE_MAX):
            self.fail(
                f"{value!r} is not a number of requests per second from 0 (unlimited) "
                f"to {RATE_MAX}, or 'default'.",
                param,
                ctx,
            )
        return number


@keys.command("create")
@database_url_option
@click.option("--account", "account_id", required=True, metavar="ID", help="The account id.")
@click.option(
    "--rate-limit",
    type=FINITE_RATE,
    default=None,
    help="Requests per second for this key (bursts of twice that); 0: unlimited. "
    "Default: the service's CHATCRM_RATE_LIMIT.",
)
@click.option("--name", default=None, help="A name for people, 1-200 characters (J.5).")
@click.option(
    "--scopes",
    default=None,
    help="Comma-separated scopes (contacts:read,…) or *; default: every permission.",
)
@click.option(
    "--workspace",
    "workspace_ids",
    multiple=True,
    help="The only workspace(s) the key may use (repeat for several).",
)
@click.option("--expires", default=None, help="When the key stops working (ISO 8601).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object on stdout.")
def keys_create(
    database_url: str | None,
    account_id: str,
    rate_limit: float | None,
    name: str | None,
    scopes: str | None,
    workspace_ids: tuple[str, ...],
    expires: str | None,
    as_json: bool,
) -> None:
    """Create an API key for an account (shown once; only its hash is stored)."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.auth.service import create_key
    from chatcrm.people import audit
    from chatcrm.people.fields import KEY

    # Given at all, even empty: a scoped key, whose values are checked as the API checks
    # them (an empty --scopes is no scope, not every one): as written here, then the
    # workspaces against the database.
    is_scoped = name is not None or scopes is not None or bool(workspace_ids) or expires is not None
    if is_scoped:
        check_values(KEY, _key_body(name, scopes, workspace_ids, expires), _KEY_OPTIONS)

    async def work(conn: Connection) -> tuple[str, str]:
        if not await auth_repo.account_exists(conn, account_id):
            raise CommandError(f"no account with id {account_id!r} ({ACCOUNTS_HINT})")
        if is_scoped:
            made = await _scoped_key(
                conn, account_id, name, scopes, workspace_ids, expires, rate_limit
            )
        else:
            made = await create_key(conn, account_id=account_id, rate_limit=rate_limit)
        await audit.note_command(conn, account_id, "key.created", made[0])
        return made

    key_id, api_key = run_db(database_url, work)
    if as_json:
        print_json({"keyId": key_id, "apiKey": api_key})
    else:
        click.echo(f"key id:  {key_id}")
        click.echo(f"API key: {api_key}  (shown once; only its hash is stored)")


async def _scoped_key(
    conn: Connection,
    account_id: str,
    name: str | None,
    scopes: str | None,
    workspace_ids: tuple[str, ...],
    expires: str | None,
    rate_limit: float | None,
) -> tuple[str, str]:
    """A key of J.5, made as `POST /api/key` makes it (by the account: every scope)."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.auth.service import Principal
    from chatcrm.core.errors import ServiceError
    from chatcrm.people import keys as scoped

    body = _key_body(name, scopes, workspace_ids, expires)
    try:
        key_id, raw = await scoped.create(conn, Principal(key_id="", account_id=account_id), body)
    except ServiceError as exc:
        raise CommandError.refused(exc, _KEY_OPTIONS, account_id=account_id) from exc
    if rate_limit is not None:
        await auth_repo.set_rate_limit(conn, key_id, rate_limit)
    return key_id, raw


def _key_body(
    name: str | None, scopes: str | None, workspace_ids: tuple[str, ...], expires: str | None
) -> dict[str, Any]:
    """The body `POST /api/key` would get for these options."""
    from chatcrm.auth import scopes as known

    given = ["*"] if scopes is None else [s.strip() for s in scopes.split(",") if s.strip()]
    unknown = [s for s in given if s != "*" and s not in known.ALL]
    # Worded for the option, not as the API words its JSON list.
    if unknown or ("*" in given and len(given) > 1):
        what = f"{unknown[0]!r} is not a scope" if unknown else "* stands alone"
        raise invalid_values([("--scopes", f"{what}: * or any of {','.join(known.ALL)}")])
    body: dict[str, Any] = {"name": "cli" if name is None else name, "scopes": given}
    if workspace_ids:
        body["workspaceIds"] = list(workspace_ids)
    if expires:
        body["expiresAt"] = expires
    return body


def _as_written(rate: float | None) -> float | int | None:
    """A whole rate as a whole number (`50`, as `keys limit KEY 50` was given and the table
    shows it), not the stored float's `50.0`."""
    return int(rate) if rate is not None and rate.is_integer() else rate


def _key_id(given: str) -> str:
    """A key's id as the database holds it, from the id in any case, the 32 hex digits a
    key shows (`ccrm_<32 hex>_…`), or the whole key."""
    from chatcrm.auth import keys as key_format

    parsed = key_format.parse_key(given)
    if parsed is not None:
        return parsed[0]
    # A key whose secret part was cut or mistyped still names its id: the 32 hex digits
    # after `ccrm_` (what is done to it is checked against that id, not the secret).
    shaped = re.match(r"(?i)ccrm_([0-9a-f]{32})(?:_|$)", given)
    digits = (shaped[1] if shaped else given.replace("-", "")).lower()
    if len(digits) == 32 and all(c in "0123456789abcdef" for c in digits):
        return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"
    return given


@keys.command("revoke")
@database_url_option
@click.argument("key_id")
def keys_revoke(database_url: str | None, key_id: str) -> None:
    """Revoke an API key by its id (the key itself is accepted too)."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.auth.service import revoke_key
    from chatcrm.people import audit

    key_id = _key_id(key_id)

    async def work(conn: Connection) -> None:
        key = await auth_repo.get_key(conn, key_id)
        if key is None:
            raise CommandError(f"no API key with id {key_id!r} (`chatcrm keys list` lists them)")
        if not await revoke_key(conn, key_id):
            raise CommandError(f"API key {key_id!r} is already revoked")
        await audit.note_command(conn, key["account_id"], "key.revoked", key_id)

    run_db(database_url, work)
    click.echo(f"chatcrm: revoked key {key_id}")


# A negative RATE (`-3`) is read as the argument it is, and refused as a rate.
@keys.command("limit", context_settings={"ignore_unknown_options": True})
@database_url_option
@click.argument("key_id")
@click.argument("rate", type=_Limit())
def keys_limit(database_url: str | None, key_id: str, rate: float | None) -> None:
    """Set a key's rate limit: requests per second, 0 for unlimited, or `default`."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.auth.service import set_rate_limit

    key_id = _key_id(key_id)
    value = rate

    async def work(conn: Connection) -> None:
        key = await auth_repo.get_key(conn, key_id)
        if key is not None and key["revoked_at"] is not None:
            raise CommandError(f"API key {key_id!r} is revoked: a limit would change nothing")
        if not await set_rate_limit(conn, key_id, value):
            raise CommandError(f"no API key with id {key_id!r} (`chatcrm keys list` lists them)")

    run_db(database_url, work)
    shown = (
        "the service default" if value is None else ("unlimited" if value == 0 else f"{value:g}/s")
    )
    click.echo(f"chatcrm: key {key_id} rate limit: {shown} (applies within 1 s)")


class KeyItem(TypedDict):
    keyId: str
    accountId: str
    createdAt: str | None
    revoked: bool
    revokedAt: str | None
    # Requests per second; None: the service default (CHATCRM_RATE_LIMIT); 0: unlimited.
    rateLimit: float | None


def _rate(value: float | None) -> str:
    return "default" if value is None else ("unlimited" if value == 0 else f"{value:g}/s")


@keys.command("list")
@database_url_option
@click.option(
    "--account", "account_id", default=None, metavar="ID", help="Only this account's keys."
)
@json_array_option
def keys_list(database_url: str | None, account_id: str | None, as_json: bool) -> None:
    """List API keys, oldest first: id, account, creation, revocation, rate limit. Never
    a key itself: it is shown once, at creation, and only its hash is stored."""
    from chatcrm.auth import repository as auth_repo
    from chatcrm.core.timestamps import iso

    async def work(conn: Connection) -> list[KeyItem]:
        if account_id is not None and not await auth_repo.account_exists(conn, account_id):
            raise CommandError(f"no account with id {account_id!r} ({ACCOUNTS_HINT})")
        return [
            {
                "keyId": row["id"],
                "accountId": row["account_id"],
                "createdAt": iso(row["created_at"]),
                "revoked": row["revoked_at"] is not None,
                "revokedAt": iso(row["revoked_at"]),
                "rateLimit": _as_written(row["rate_limit"]),
            }
            for row in await auth_repo.list_keys(conn, account_id)
        ]

    print_list(
        run_db(database_url, work),
        as_json=as_json,
        headings=("KEY", "ACCOUNT", "CREATED", "REVOKED", "RATE LIMIT"),
        cells=lambda item: (
            item["keyId"],
            item["accountId"],
            item["createdAt"] or "",
            item["revokedAt"] or "no",
            _rate(item["rateLimit"]),
        ),
    )
