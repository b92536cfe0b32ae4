"""Every statement the app sends to a tenant table filters on `workspace_id` by equality
(contract I; docs/scaling.md): under Citus each then runs on one shard.

The SQL is recorded where every statement passes (db/connection.py hands each one to
`compiled`), while a broad workload runs: every route under /api through the app, Meta's
calls to a channel, account set-up as the CLI does it, the publisher, a dispatcher and a
channel sender sending to a real receiver, and the purges. Each statement is parsed
(tests/db/tenant_sql.py) and each reference to a tenant table must be pinned to one
workspace. The few statements that span workspaces by design are listed in ALLOWED with
the reason; docs/scaling.md names them too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import patch

import orjson
import pytest
from fastapi.testclient import TestClient
from sqlalchemy import and_, bindparam, select, update
from sqlalchemy.sql import ClauseElement

import chatcrm.contacts.table
import chatcrm.opportunities.table  # its table in `metadata`
from chatcrm.api import idempotency
from chatcrm.app import create_app
from chatcrm.channels import send_claims
from chatcrm.channels.send_claims import settle_early_statuses
from chatcrm.channels.sending import Sender
from chatcrm.channels.service import RECEIVING_PATH
from chatcrm.config import Settings
from chatcrm.core.timestamps import utcnow
from chatcrm.db import compiled as compiled_module
from chatcrm.db.database import Database
from chatcrm.db.idlist import in_id_list
from chatcrm.db.schema import metadata
from chatcrm.events import outbox, publisher, retention
from chatcrm.messages import repository as messages_repo
from chatcrm.messages.service import keep_early_status
from chatcrm.people import users
from chatcrm.webhooks import claims
from chatcrm.webhooks.dispatcher import Dispatcher
from tests.api.test_tenancy_walk import api_routes
from tests.client import Api
from tests.conftest import BACKENDS, migrated_database, new_account, run_sync
from tests.db import tenant_workload
from tests.db.tenant_sql import unpinned
from tests.webhooks.receiver import Receiver, Reply

# Channels hold a workspace_id but are a reference table (db/citus.py): Meta's webhook
# finds one by its id alone.
REFERENCE_WITH_WORKSPACE = {"channels"}
TENANT_TABLES = {
    t.name
    for t in metadata.tables.values()
    if "workspace_id" in t.c and t.name not in REFERENCE_WITH_WORKSPACE
}
# The tables that are not distributed by workspace (docs/scaling.md): reference tables,
# or kept by account.
NOT_TENANT = {
    "accounts",
    "api_keys",
    "idempotency_keys",
    "service_secrets",
    "workspaces",
    *REFERENCE_WITH_WORKSPACE,
    "rate_budgets",  # per API key (docs/scaling.md 3.1)
    "key_changes",  # one row: the revocation counter
    # People (contract J): per account, small, read by the console's requests.
    "users",
    "user_tokens",
    "sessions",
    "sign_in_failures",
    "audit_log",
}


@dataclass(frozen=True)
class Allowed:
    """A statement that spans workspaces by design, and why."""

    name: str
    statement: Callable[[str], ClauseElement]  # the statement object, per dialect
    reason: str
    dialects: tuple[str, ...] = BACKENDS


ALLOWED = [
    Allowed(
        "events/publisher.py _ENABLED",
        lambda d: publisher._ENABLED,
        "the publisher lists the enabled endpoints of every workspace (a multi-shard read "
        "of a small table); each step after it names one workspace",
    ),
    Allowed(
        "webhooks/claims.py _ANY_DUE",
        lambda d: claims._ANY_DUE[d],
        "a dispatcher looks for due deliveries of every workspace",
    ),
    Allowed(
        "webhooks/claims.py _FIRST_PENDING",
        lambda d: claims._FIRST_PENDING,
        "a dispatcher's low-water mark is the earliest due time of any workspace's pending "
        "deliveries (a multi-shard read without locks)",
    ),
    Allowed(
        "webhooks/claims.py _CLAIM",
        lambda d: claims._CLAIM[d],
        "a dispatcher claims due deliveries of every workspace (SKIP LOCKED)",
    ),
    # The channel sender (channels/send_claims.py), as the dispatcher above: it serves every
    # workspace, so it looks for and claims due rows wherever they are. On Citus the claims
    # `_SENDS` and `_RECEIPTS` are not sent: the workspaces with due rows are listed first
    # (`_WORKSPACES`, a multi-shard read without locks), then each one's rows are claimed on
    # its own shard by `_SENDS_ONE` / `_RECEIPTS_ONE`, which are pinned.
    Allowed(
        "channels/send_claims.py _ANY (sends)",
        lambda d: send_claims._ANY["sends"],
        "a channel sender looks for queued messages of every workspace",
    ),
    Allowed(
        "channels/send_claims.py _ANY (receipts)",
        lambda d: send_claims._ANY["receipts"],
        "a channel sender looks for due read receipts of every workspace",
    ),
    Allowed(
        "channels/send_claims.py _SENDS",
        lambda d: send_claims._SENDS,
        "a channel sender claims queued messages of every workspace (SKIP LOCKED)",
    ),
    Allowed(
        "channels/send_claims.py _RECEIPTS",
        lambda d: send_claims._RECEIPTS,
        "a channel sender claims due read receipts of every workspace (SKIP LOCKED)",
    ),
    Allowed(
        "messages/repository.py _ANY_EARLY",
        lambda d: messages_repo._ANY_EARLY,
        "a channel sender looks for statuses kept for a send of any workspace",
    ),
    Allowed(
        "messages/repository.py _EARLY_MATCHED",
        lambda d: messages_repo._EARLY_MATCHED,
        "a channel sender finds the kept statuses of every workspace whose message has "
        "its wamid now (a join on workspace_id and the wamid)",
    ),
    Allowed(
        "messages/repository.py _EXPIRE_EARLY",
        lambda d: messages_repo._EXPIRE_EARLY,
        "a channel sender forgets statuses kept too long in every workspace",
    ),
    Allowed(
        "events/retention.py _DELETE_DELIVERIES",
        lambda d: retention._DELETE_DELIVERIES,
        "the retention purge removes expired deliveries of every workspace",
    ),
    Allowed(
        "events/retention.py _DELETE_EVENTS",
        lambda d: retention._DELETE_EVENTS,
        "the retention purge removes expired events of every workspace",
    ),
    Allowed(
        "events/retention.py _BACK_TO_LAST",
        lambda d: retention._BACK_TO_LAST,
        "after a purge on SQLite, the endpoints of every workspace placed past the last event "
        "left go back to it (events are numbered across workspaces there)",
        dialects=("sqlite",),
    ),
    Allowed(
        "people/users.py _AGENTS_BY_EMAIL",
        lambda d: users._AGENTS_BY_EMAIL if d == "postgresql" else users._AGENTS_BY_EMAIL_SQLITE,
        "a user's agents (J.1: linked by e-mail) are looked up in every workspace of its "
        "account, named by a list of ids",
    ),
    Allowed(
        "events/outbox.py _insert_statement (SQLite)",
        lambda d: outbox._insert_statement(d),
        "SQLite only (never under Citus): an event's seq is max(rowid) + 1 of the whole "
        "table, under SQLite's one write lock",
        dialects=("sqlite",),
    ),
]


@dataclass(frozen=True)
class Sent:
    statement: ClauseElement
    names: tuple[str, ...]  # its parameters in positional order


class Recorder:
    """Stands in for `compiled` in db/connection.py: the SQL of every statement sent."""

    def __init__(self, dialect: str) -> None:
        self.real = compiled_module.compiled
        self.dialect = dialect
        self.sent: dict[str, Sent] = {}  # by SQL

    def __call__(self, stmt: ClauseElement, dialect_name: str, keys: Any = None) -> Any:
        result = self.real(stmt, dialect_name, keys)
        # Only this backend's: the session's other apps (another backend's) run beside it.
        if dialect_name == self.dialect:
            self.sent.setdefault(result.sql, Sent(stmt, result.names))
        return result


@dataclass
class Recorded:
    backend: str
    sent: dict[str, Sent]
    routes: set[tuple[str, str]]
    settings: Settings


async def _background(url: str, workspace_id: str) -> None:
    """What runs beside the requests: publishing, one dispatcher round, three channel
    sender rounds (the workload's text and the read receipt; then its template, queued to
    the same contact after the text; then nothing due), the purges."""
    db = Database(Settings(database_url=url))
    try:
        await publisher.publish_pending(db)
        settings = Settings(
            database_url=url, webhook_allow_private=True, webhook_timeout=5.0, channel_timeout=1
        )
        await Dispatcher(db, settings).run_once()
        sender = Sender(db, settings)
        assert await sender.run_once() == 1  # the text of the workload
        assert await sender.run_once() == 1  # its template, to the same contact
        assert await sender.run_once() == 0
        # A status kept for a send (Meta's webhook before its answer), then settled.
        async with db.transaction() as conn:
            await keep_early_status(
                conn,
                workspace_id,
                external_id="wamid.OUT0",
                status="delivered",
                at=utcnow(),
                error=None,
                now=utcnow(),
            )
        assert await settle_early_statuses(db, now=utcnow()) == 1
        await retention.purge(db, days=0)
        await idempotency.purge_expired(db)
    finally:
        await db.dispose()


@pytest.fixture(scope="module", params=BACKENDS)
def recorded(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The statements sent while the workload ran on a database of its own (the
    dispatcher claims every workspace's deliveries: none of the other tests' here)."""
    backend = request.param
    recorder = Recorder("sqlite" if backend == "sqlite" else "postgresql")
    receiver = Receiver()
    receiver.script("/gone", then=Reply(status=410))
    receiver.script("/failing", then=Reply(status=500))
    # The workload's Graph API: each send answered with a wamid of its own.
    graph = f"{tenant_workload.GRAPH}/{tenant_workload.PHONE_NUMBER_ID}/messages"
    receiver.script(
        graph,
        *[Reply(body=b'{"messages": [{"id": "wamid.OUT%d"}]}' % n) for n in range(3)],
        then=Reply(body=b"{}"),
    )
    try:
        with (
            migrated_database(backend, tmp_path_factory) as url,
            patch("chatcrm.db.connection.compiled", recorder),
        ):
            account = new_account(url)
            settings = Settings(
                database_url=url,
                rate_limit=0,
                access_log=False,
                dispatch=False,
                webhook_allow_private=True,
            )
            with TestClient(create_app(settings), raise_server_exceptions=False) as http:
                work = tenant_workload.run(Api(http, account), receiver_url=receiver.url)
            run_sync(lambda: _background(url, account.workspace_id))
        # The channel sender did reach the Graph API: the two messages and the read receipt.
        sent = sorted(orjson.loads(r.body).get("type", "receipt") for r in receiver.requests(graph))
        assert sent == ["receipt", "template", "text"], sent
    finally:
        receiver.close()
    return Recorded(backend, dict(recorder.sent), work.routes, settings)


def _problems(sent: dict[str, Sent], backend: str) -> dict[str, list[str]]:
    """SQL → its unpinned tenant table references, for the statements not allowed."""
    allowed = {id(a.statement(backend)) for a in ALLOWED if backend in a.dialects}
    out = {}
    for sql, s in sent.items():
        if id(s.statement) in allowed:
            continue
        refs = unpinned(sql, backend, TENANT_TABLES, s.names)
        if refs:
            out[sql] = refs
    return out


# --- the statements -----------------------------------------------------------------------


def test_every_route_is_in_the_workload(recorded: Recorded) -> None:
    # Meta's calls to a channel too: no API key, but they write the workspace's messages.
    meta = {("GET", RECEIVING_PATH), ("POST", RECEIVING_PATH)}
    missing = sorted((api_routes(recorded.settings) | meta) - recorded.routes)
    assert not missing, f"routes the workload does not call: {missing}"


def test_every_statement_on_a_tenant_table_is_pinned_to_one_workspace(
    recorded: Recorded,
) -> None:
    assert len(recorded.sent) > 100  # the workload did reach the database
    problems = _problems(recorded.sent, recorded.backend)
    report = "\n\n".join(f"{refs}:\n{sql}" for sql, refs in problems.items())
    assert not problems, f"statements without `workspace_id = ...`:\n\n{report}"


def test_each_allowed_statement_ran_and_does_span_workspaces(recorded: Recorded) -> None:
    """No stale entry: each one was sent by the workload and the check does flag it."""
    by_statement = {id(s.statement): (sql, s) for sql, s in recorded.sent.items()}
    for entry in ALLOWED:
        if recorded.backend not in entry.dialects:
            continue
        found = by_statement.get(id(entry.statement(recorded.backend)))
        assert found is not None, f"{entry.name} was not sent by the workload"
        sql, sent = found
        refs = unpinned(sql, recorded.backend, TENANT_TABLES, sent.names)
        assert refs, f"{entry.name} is pinned now: take it off the list"


# --- the check itself ---------------------------------------------------------------------

_contacts = chatcrm.contacts.table.contacts
_c = _contacts.c
_tags = metadata.tables["contact_tags"]
_WS, _ID = bindparam("_ws"), bindparam("_id")
_ONE = select(_c.id).where(_c.workspace_id == _WS, _c.id == _ID)
BAD: dict[str, Callable[[str], ClauseElement]] = {
    "no workspace": lambda d: select(_c.id).where(_c.id == _ID),
    "workspace under OR": lambda d: select(_c.id).where((_c.workspace_id == _WS) | (_c.id == _ID)),
    "OR of two workspaces": lambda d: select(_c.id).where(
        and_(_c.workspace_id == _WS, _c.email == bindparam("_e"))
        | and_(_c.workspace_id == bindparam("_other"), _c.email == bindparam("_e"))
    ),
    "workspace in a list": lambda d: select(_c.id).where(in_id_list(_c.workspace_id, "_wss", d)),
    "an update of every workspace": lambda d: update(_contacts).values(version=1),
    "a subquery without it": lambda d: select(_c.id).where(
        _c.workspace_id == _WS, _c.id.in_(select(_c.id).where(_c.name == bindparam("_name")))
    ),
    # Citus runs this on every shard: the subquery names the workspace only through the
    # outer row (docs/scaling.md 3.4).
    "a subquery pinned only through the outer row": lambda d: select(_tags.c.tag_id).where(
        _tags.c.workspace_id == _WS,
        select(_c.id)
        .where(_c.workspace_id == _tags.c.workspace_id, _c.id == _tags.c.contact_id)
        .exists(),
    ),
}


def _sent(stmt: ClauseElement, dialect: str) -> tuple[str, Sent]:
    c = compiled_module.compiled(stmt, dialect)
    return c.sql, Sent(stmt, c.names)


@pytest.mark.parametrize("dialect", BACKENDS)
@pytest.mark.parametrize("name", list(BAD))
def test_a_statement_without_the_equality_is_caught(dialect: str, name: str) -> None:
    bad_sql, bad = _sent(BAD[name](dialect), dialect)
    assert unpinned(bad_sql, dialect, TENANT_TABLES, bad.names) == ["contacts"]
    good_sql, good = _sent(_ONE, dialect)
    assert list(_problems({bad_sql: bad, good_sql: good}, dialect)) == [bad_sql]


@pytest.mark.parametrize("dialect", BACKENDS)
def test_pinned_shapes_pass(dialect: str) -> None:
    """A join on workspace_id, pinned through the other side; a correlated subquery that
    names the workspace's parameter itself."""
    inner = _contacts.alias("inner")
    joined = (
        select(_c.id)
        .select_from(
            _contacts.join(
                _tags, (_tags.c.workspace_id == _c.workspace_id) & (_tags.c.contact_id == _c.id)
            )
        )
        .where(_c.workspace_id == bindparam("_ws"))
    )
    correlated = select(_tags.c.tag_id).where(
        _tags.c.workspace_id == bindparam("_ws"),
        select(inner.c.id)
        .where(inner.c.workspace_id == bindparam("_ws"), inner.c.id == _tags.c.contact_id)
        .exists(),
    )
    either = select(_c.id).where(
        and_(_c.workspace_id == _WS, _c.email == bindparam("_e"))
        | and_(_c.workspace_id == _WS, _c.name == bindparam("_e"))
    )
    for stmt in (_ONE, joined, correlated, either):
        sql, sent = _sent(stmt, dialect)
        assert unpinned(sql, dialect, TENANT_TABLES, sent.names) == [], sql


# --- the schema ---------------------------------------------------------------------------


def test_the_tenant_tables_are_the_distributed_ones() -> None:
    assert set(metadata.tables) == TENANT_TABLES | NOT_TENANT


def test_keys_and_unique_indexes_hold_workspace_id() -> None:
    """Citus: a distributed table's primary key and unique indexes include the
    distribution column, and a foreign key between two of them joins on it."""
    for name in sorted(TENANT_TABLES):
        table = metadata.tables[name]
        assert next(iter(table.primary_key.columns)).name == "workspace_id", name
        for index in table.indexes:
            if index.unique:
                assert "workspace_id" in {c.name for c in index.columns}, index.name
        for fk in table.foreign_key_constraints:
            target = fk.referred_table.name
            pairs = {(e.parent.name, e.column.name) for e in fk.elements}
            if target in TENANT_TABLES:
                assert ("workspace_id", "workspace_id") in pairs, (name, target)
            else:
                assert target == "workspaces" and pairs == {("workspace_id", "id")}, (name, fk)


def test_docs_name_every_statement_that_spans_workspaces() -> None:
    """docs/scaling.md 3.4 lists the ALLOWED statements: each one's file and name."""
    text = (Path(__file__).parents[2] / "docs" / "scaling.md").read_text()
    section = text[text.index("### 3.4") : text.index("### 3.5")]
    for allowed in ALLOWED:
        path, name = allowed.name.split()[:2]
        rows = [line for line in section.splitlines() if line.startswith(f"| `{path}` ")]
        assert any(f"`{name}`" in row for row in rows), allowed.name
