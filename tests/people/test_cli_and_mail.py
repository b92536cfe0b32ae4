"""People outside the API: the CLI's users and scoped keys, the demo owner of a first
start, and invitations e-mailed to a real SMTP server on 127.0.0.1 (contract J.1, J.5)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from email import message_from_bytes
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from fastapi.testclient import TestClient

from chatcrm.app import create_app
from chatcrm.config import Settings
from chatcrm.db.database import Database
from chatcrm.people import mail
from chatcrm.provisioning import DEMO_OWNER, demo_if_empty
from tests.client import Api, ok_data, unique_email
from tests.conftest import migrated_database, run_sync
from tests.people.conftest import PASSWORD, Browser, token_of
from tests.servers import free_port
from tests.test_cli import run_cli


def _cli(url: str, *args: str) -> Any:
    done = run_cli(
        *args, "--database-url", url, "--json", env={"CHATCRM_PUBLIC_URL": "https://crm.test"}
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.not_on_citus
def test_a_refused_invitation_or_key_names_the_option_at_fault(
    database_url: str, owner_api: Api
) -> None:
    """Section 6: one line saying what is wrong and what to do, in the command line's
    words (its options), not the API's field names."""
    account = owner_api.account.account_id
    # A value the option does not take is a usage error (status 2); what depends on the
    # account (its workspaces) is status 1.
    cases = [
        (
            ["users", "create", "--email", unique_email(), "--name", "A", "--role", "agent"],
            "chatcrm: error: --workspace: agents and viewers need at least one workspace",
            1,
        ),
        (
            ["users", "create", "--email", "nope", "--name", " ", "--role", "admin"],
            "chatcrm: error: Invalid value for '--email': must be a valid email address; "
            "Invalid value for '--name': must not be empty",
            2,
        ),
        (
            ["keys", "create", "--name", "", "--json"],
            "chatcrm: error: Invalid value for '--name'",
            2,
        ),
    ]
    for args, line, status in cases:
        done = run_cli(*args, "--account", account, "--database-url", database_url)
        assert done.returncode == status, done
        assert done.stderr.startswith(line) and done.stderr.count("\n") == 1, done.stderr


# The CLI's statements are the API's (people/users.py, people/keys.py), which the Citus
# tier runs; its own processes are what this test adds, on SQLite and PostgreSQL.
@pytest.mark.not_on_citus
def test_users_and_scoped_keys_from_the_cli(database_url: str, owner_api: Api) -> None:
    account = owner_api.account.account_id
    email = unique_email()
    made = _cli(
        database_url,
        "users",
        "create",
        "--account",
        account,
        "--email",
        email,
        "--name",
        "Cli",
        "--role",
        "viewer",
        "--workspace",
        owner_api.ws,
    )
    assert set(made) == {"userId", "inviteUrl"}
    assert made["inviteUrl"].startswith("https://crm.test/console/#invite/")
    browser = Browser(owner_api.http)
    browser.signed_in(
        browser.request(
            "POST",
            "/api/invitation/accept",
            json={"token": token_of(made["inviteUrl"]), "password": PASSWORD},
        )
    )
    assert browser.user["role"] == "viewer" and browser.user["id"] == made["userId"]
    reset = _cli(database_url, "users", "reset-link", email)
    assert reset["resetUrl"].startswith("https://crm.test/console/#reset/")
    # Without CHATCRM_PUBLIC_URL a command cannot know where serve listens: serve's default
    # address, said on stderr (stdout keeps its one JSON object).
    unset = run_cli("users", "reset-link", email, "--database-url", database_url, "--json")
    assert unset.returncode == 0, unset.stderr
    assert json.loads(unset.stdout)["resetUrl"].startswith("http://127.0.0.1:8000/console/#reset/")
    assert "CHATCRM_PUBLIC_URL" in unset.stderr and "127.0.0.1:8000" in unset.stderr
    listed = _cli(database_url, "users", "list", "--account", account)
    assert [u["email"] for u in listed if u["id"] == made["userId"]] == [email]
    nobody = run_cli("users", "reset-link", "nobody@example.com", "--database-url", database_url)
    assert nobody.returncode == 1
    assert nobody.stderr.strip() == (
        "chatcrm: error: no user with e-mail 'nobody@example.com' (`chatcrm users list` lists them)"
    )
    refused = run_cli(
        "users",
        "create",
        "--database-url",
        database_url,
        "--account",
        account,
        "--email",
        email,
        "--name",
        "Twin",
        "--role",
        "admin",
    )
    assert refused.returncode == 1 and refused.stderr.count("\n") == 1, refused.stderr
    key = _cli(
        database_url,
        "keys",
        "create",
        "--account",
        account,
        "--name",
        "reader",
        "--scopes",
        "contacts:read",
        "--workspace",
        owner_api.ws,
    )
    assert owner_api.get("/api/contact", auth=key["apiKey"]).status_code == 200
    denied = owner_api.post(
        "/api/contact", json={"name": "x", "email": unique_email()}, auth=key["apiKey"]
    )
    assert denied.json()["data"] == {"required": "contacts:write"}
    record = next(
        k
        for k in ok_data(owner_api.get("/api/key", workspace=None))["data"]
        if k["id"] == key["keyId"]
    )
    assert (record["name"], record["scopes"], record["workspaceIds"]) == (
        "reader",
        ["contacts:read"],
        [owner_api.ws],
    )
    revoked = run_cli("keys", "revoke", key["keyId"], "--database-url", database_url)
    assert revoked.returncode == 0, revoked.stderr
    # What the commands did is in the account's security record (J.6), by the system actor
    # (J.4) from no address, newest first, and without the key they made.
    audit = owner_api.get("/api/audit", params={"pageSize": "100"}, workspace=None)
    mine = [
        (e["action"], e["target"])
        for e in ok_data(audit)["data"]
        if e["target"] in (made["userId"], key["keyId"])
        and e["actor"] is not None
        and e["actor"]["type"] == "system"
    ]
    assert mine == [
        ("key.revoked", key["keyId"]),
        ("key.created", key["keyId"]),
        ("user.reset_link_created", made["userId"]),
        ("user.reset_link_created", made["userId"]),
        ("user.invited", made["userId"]),
    ]
    entry = next(e for e in ok_data(audit)["data"] if e["target"] == key["keyId"])
    assert entry["actor"] == {"type": "system", "id": None, "name": "chatcrm"}
    assert entry["ip"] == "" and "command line" in entry["userAgent"]
    assert key["apiKey"] not in audit.text and token_of(made["inviteUrl"]) not in audit.text
    # Given empty, a scope list or a name is checked as the API checks it: never a key
    # with every permission for an empty --scopes.
    for given in (["--scopes", ""], ["--scopes", " , "], ["--name", ""]):
        empty = run_cli(
            "keys", "create", "--database-url", database_url, "--account", account, *given
        )
        assert empty.returncode == 2 and empty.stderr.count("\n") == 1, (given, empty.stderr)
        assert empty.stdout == ""


@pytest.mark.parametrize("backend", ["sqlite"])
def test_a_first_start_makes_a_demo_owner_who_can_set_a_password(
    backend: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    with migrated_database(backend, tmp_path_factory) as url:

        async def first_start() -> Any:
            db = Database(Settings(database_url=url))
            try:
                async with db.transaction() as conn:
                    return await demo_if_empty(conn)
            finally:
                await db.dispose()

        demo = run_sync(first_start)
        assert demo.owner_email == DEMO_OWNER and demo.owner_token
        settings = Settings(database_url=url, rate_limit=0, access_log=False, dispatch=False)
        with TestClient(create_app(settings), raise_server_exceptions=False) as http:
            browser = Browser(http)
            browser.signed_in(
                browser.request(
                    "POST",
                    "/api/invitation/accept",
                    json={"token": demo.owner_token, "password": PASSWORD},
                )
            )
            assert browser.user["role"] == "owner"
            assert browser.user["workspaceIds"] == [demo.workspace_id]


class _Inbox:
    def __init__(self) -> None:
        self.messages: list[Any] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        self.messages.append(message_from_bytes(envelope.content))
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[_Inbox, int]]:
    inbox = _Inbox()
    port = free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def test_invitations_and_reset_links_are_emailed(
    database_url: str, account: Any, smtp: Any
) -> None:
    inbox, port = smtp
    settings = Settings(
        database_url=database_url,
        rate_limit=0,
        access_log=False,
        dispatch=False,
        public_url="https://crm.test",
        smtp_url=f"smtp://127.0.0.1:{port}",
        smtp_from="chatcrm <crm@crm.test>",
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as http:
        api = Api(http, account)
        email = unique_email()
        invited = ok_data(
            api.post(
                "/api/user",
                workspace=None,
                json={"email": email, "name": "Mailed", "role": "admin"},
            )
        )
        reset = ok_data(api.post(f"/api/user/{invited['id']}/reset-link", workspace=None))
        deadline = time.monotonic() + 10
        while len(inbox.messages) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert len(inbox.messages) == 2
    # Each is sent in the background as it is asked for: they may arrive in either order.
    for message in inbox.messages:
        assert message["To"] == email and message["From"] == "chatcrm <crm@crm.test>"
    bodies = sorted((m.get_payload() for m in inbox.messages), key=lambda b: "#reset/" in b)
    assert invited["inviteUrl"] in bodies[0] and "#reset/" not in bodies[0]
    assert reset["resetUrl"] in bodies[1]


@pytest.mark.not_on_citus
def test_the_cli_s_links_are_emailed_too(database_url: str, account: Any, smtp: Any) -> None:
    """J.1: with CHATCRM_SMTP_URL set, invitations and reset links are also e-mailed,
    the CLI's as the API's; a mail server that refuses is said on stderr, without the
    link, and the command still prints it."""
    inbox, port = smtp
    email = unique_email()
    env = {
        "CHATCRM_PUBLIC_URL": "https://crm.test",
        "CHATCRM_SMTP_URL": f"smtp://127.0.0.1:{port}",
        "CHATCRM_SMTP_FROM": "chatcrm <crm@crm.test>",
    }
    args = ("--account", account.account_id, "--email", email, "--name", "Mailed")
    made = run_cli(
        "users",
        "create",
        *args,
        "--role",
        "admin",
        "--database-url",
        database_url,
        "--json",
        env=env,
    )
    assert made.returncode == 0, made.stderr
    reset = run_cli("users", "reset-link", email, "--database-url", database_url, "--json", env=env)
    assert reset.returncode == 0, reset.stderr
    links = [json.loads(made.stdout)["inviteUrl"], json.loads(reset.stdout)["resetUrl"]]
    assert [m["To"] for m in inbox.messages] == [email, email]
    assert [link in m.get_payload() for m, link in zip(inbox.messages, links, strict=True)] == [
        True,
        True,
    ]
    nobody = {**env, "CHATCRM_SMTP_URL": f"smtp://127.0.0.1:{free_port()}"}
    refused = run_cli(
        "users", "reset-link", email, "--database-url", database_url, "--json", env=nobody
    )
    assert refused.returncode == 0, refused.stderr
    link = json.loads(refused.stdout)["resetUrl"]
    assert "could not be sent" in refused.stderr and link.rsplit("/", 1)[1] not in refused.stderr
    # Why, in the note itself: a command's log line has no fields to point to.
    assert "could not be sent (ConnectionRefusedError: see CHATCRM_SMTP_URL" in refused.stderr


def test_credentials_go_only_to_a_server_that_offers_auth(smtp: Any) -> None:
    """`smtp://user:pass@host` (J.1) to a server offering no AUTH: the mail is sent without
    them, not lost (login raised SMTPNotSupportedError); to one offering it, they are used."""
    inbox, port = smtp
    settings = Settings(smtp_url=f"smtp://user:pa%40ss@127.0.0.1:{port}", smtp_from="crm@crm.test")
    sent = mail._send_link(settings, "ana@example.com", "Ana", "invite", "https://crm.test/x")
    assert sent is None  # no failure
    assert [m["To"] for m in inbox.messages] == ["ana@example.com"]

    logins: list[tuple[str, str]] = []

    def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> Any:
        logins.append((data.login.decode(), data.password.decode()))
        return AuthResult(success=True)

    guarded, guarded_port = _Inbox(), free_port()
    controller = Controller(
        guarded,
        hostname="127.0.0.1",
        port=guarded_port,
        authenticator=authenticate,
        auth_require_tls=False,
    )
    controller.start()
    try:
        url = f"smtp://user:pa%40ss@127.0.0.1:{guarded_port}"
        sent = mail._send_link(
            Settings(smtp_url=url, smtp_from="crm@crm.test"), "bo@example.com", "Bo", "reset", "l"
        )
    finally:
        controller.stop()
    assert sent is None and logins == [("user", "pa@ss")]
    assert [m["To"] for m in guarded.messages] == ["bo@example.com"]
